"""The policy contract (batched) and an adapter for single-replication policies.

A :class:`Policy` plays ``R`` replications in lockstep: :meth:`~Policy.select` returns one action
per replication, :meth:`~Policy.update` receives the actions and the learner-visible
:class:`~impactbandits.core.feedback.Feedback`. Writing a policy over the batch axis is how the
library reaches its throughput with plain NumPy and one readable implementation per algorithm.

``horizon`` is ``None`` for anytime runs: a policy whose :attr:`~Policy.requires_horizon` is
``False`` is run once up to the largest horizon and measured at every horizon of the grid
(checkpoints); a horizon-aware policy (SPO, ETC with a tuned length, HKR, π_low, …) is run once
per horizon.

Policies with phases (e.g. Ron et al.'s Self-regulated Utility Maximization) list them in
:attr:`~Policy.phases` and report :meth:`~Policy.current_phase` after each ``select``; the runner
counts rounds per phase.

:class:`SimplePolicy` is the same contract for a single replication — the easiest way to add an
algorithm of your own; the runner wraps it in :class:`BatchedSimplePolicy`.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, declared_step
from impactbandits.core.feedback import Feedback
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace, InvalidAction

if TYPE_CHECKING:
    from impactbandits.core.environment import Environment

__all__ = ["BatchedSimplePolicy", "Policy", "SimplePolicy"]


class Policy(ABC):
    """Batched policy. Class attributes declare what it supports."""

    # action_kinds and phases: class attributes, or set on the instance (phases may depend on
    # the action space: then ``reset`` sets them)
    action_kinds: tuple[str, ...] = ("discrete",)
    """Kinds of :class:`~impactbandits.core.spaces.ActionSpace` the policy can play."""
    phases: tuple[str, ...] = ()
    """Names of the phases reported by :meth:`current_phase` (empty: no phases)."""

    @property
    def requires_horizon(self) -> bool:
        """Whether the policy must know the horizon (then it is run once per horizon)."""
        return False

    @property
    def deterministic(self) -> bool:
        """Whether the policy draws no random numbers at all (nothing from its ``rng``, no
        randomised tie-breaking): its actions are then a function of the feedback alone. On a
        :attr:`~impactbandits.core.environment.Environment.deterministic` environment every
        replication of such a policy is the same run, so the runner computes one and records
        it for every seed. Default ``False``; declare ``True`` (a class attribute, or a
        property when it depends on parameters, e.g. a black-box policy) only when it holds.
        A subclass inherits its parent's declaration: reset it if the subclass draws."""
        return False

    @abstractmethod
    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        """Start ``rng.size`` fresh replications on ``space``."""

    @abstractmethod
    def select(self) -> np.ndarray:
        """One action per replication."""

    @abstractmethod
    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        """Learn from the round just played."""

    def current_phase(self) -> np.ndarray:
        """``(R,)`` index into :attr:`phases` of the round just selected."""
        raise NotImplementedError

    def compiled_step(self) -> CompiledStep | None:
        """The compiled form of this policy's rounds as it was just reset
        (:mod:`impactbandits.core.compiled`), or ``None`` (default: the readable loop runs)."""
        return None

    def caution(self, environment: Environment) -> str | None:
        """A one-line warning when running on ``environment`` breaks an assumption of the
        algorithm that its parameters could have met (e.g. Lindner et al.'s noise-free SPO on
        noisy observations); the runner emits it as a
        :class:`~impactbandits.errors.SpecWarning` before anything runs. Default: none."""
        return None

    def reset_rows(self, rows: np.ndarray) -> None:
        """Restart the replications where ``rows`` (boolean ``(R,)``) is true, as if freshly
        reset, keeping the others. Optional: meta-policies that invoke a black-box algorithm
        mid-run (Ron et al.'s SRUM) need it."""
        raise NotImplementedError(f"{type(self).__name__} cannot restart single replications")


class SimplePolicy(ABC):
    """Single-replication policy: ``reset(space, horizon, rng)`` with a NumPy ``Generator``,
    ``select() -> action``, ``update(action, feedback)`` where ``feedback.reward`` is a float."""

    action_kinds: tuple[str, ...] = ("discrete",)
    phases: tuple[str, ...] = ()
    if TYPE_CHECKING:
        # Plain class attributes (below), read-only to a type checker as on Policy: a subclass
        # declares them as class attributes or as properties (when they depend on parameters).
        @property
        def requires_horizon(self) -> bool:
            """Must know the horizon (see :attr:`Policy.requires_horizon`): a class attribute or
            a property; default ``False``."""

        @property
        def deterministic(self) -> bool:
            """Draws nothing from ``rng`` (see :attr:`Policy.deterministic`): a class attribute or
            a property; default ``False``."""
    else:
        requires_horizon = False
        deterministic = False

    @abstractmethod
    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None: ...

    @abstractmethod
    def select(self) -> Any: ...

    @abstractmethod
    def update(self, action: Any, feedback: Feedback) -> None: ...

    def current_phase(self) -> int:
        raise NotImplementedError

    def compiled_step(self) -> CompiledStep | None:
        """The compiled form of one replication as it was just reset
        (:mod:`impactbandits.core.compiled`; it may not draw: a copy's generator is NumPy's),
        or ``None`` (default)."""
        return None


class BatchedSimplePolicy(Policy):
    """Runs one copy of a :class:`SimplePolicy` per replication, each with its own generator."""

    def __init__(self, prototype: SimplePolicy) -> None:
        self.prototype = prototype
        self.action_kinds = prototype.action_kinds
        self.phases = tuple(prototype.phases)
        """The prototype's phases, or the copies' once reset (they may depend on the space)."""
        self._copies: list[SimplePolicy] = []
        self._kind = "discrete"

    @property
    def requires_horizon(self) -> bool:
        return bool(self.prototype.requires_horizon)

    @property
    def deterministic(self) -> bool:
        return bool(self.prototype.deterministic)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self._kind = space.kind
        self._n = space.n
        self._t = 0
        self._copies = [copy.deepcopy(self.prototype) for _ in range(rng.size)]
        for policy, generator in zip(self._copies, rng.generators, strict=True):
            policy.reset(space, horizon, generator)
        self.phases = tuple(self._copies[0].phases if self._copies else self.prototype.phases)

    @property
    def copies(self) -> tuple[SimplePolicy, ...]:
        """The per-replication copies, once reset (read-only view)."""
        return tuple(self._copies)

    def select(self) -> np.ndarray:
        self._t += 1
        actions = [p.select() for p in self._copies]
        if self._kind == "discrete":
            # one look per type returned (R looks only if some type is not an integer's):
            # 0.5 or "1" must not become arm 0 or 1
            if all(_is_index_type(kind) for kind in {type(a) for a in actions}):
                return np.asarray(actions, dtype=np.int64)
            for row, action in enumerate(actions):
                if not _is_index(action):
                    raise InvalidAction(
                        f"round {self._t}: select() returned {action!r} "
                        f"({type(action).__name__}); it must return an arm index, an integer "
                        f"in 0..{self._n - 1}",
                        row,
                    )
            return np.asarray(actions, dtype=np.int64)
        try:
            return np.asarray(actions, dtype=float)
        except (TypeError, ValueError):
            row = next(i for i, a in enumerate(actions) if not _is_vector(a))
            raise InvalidAction(
                f"round {self._t}: select() returned {actions[row]!r}; it must return a "
                f"probability vector of {self._n} numbers",
                row,
            ) from None

    def compiled_step(self) -> CompiledStep | None:
        """The copies' compiled step (each copy was reset alike), if they declare one. Each copy
        draws from its replication's generator, the one :meth:`BatchRNG.random
        <impactbandits.core.random.BatchRNG.random>` reads: a step's ``u``
        (:attr:`~impactbandits.core.compiled.CompiledStep.draws`) is the uniform its copy draws
        in the round; a step that reads the counter-based stream has no copy to stand for."""
        if not self._copies:
            return None
        declared = declared_step(self._copies[0])
        step = None if declared is None else declared()
        if not isinstance(step, CompiledStep) or step.stream:
            return None
        return step

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        for i, policy in enumerate(self._copies):
            policy.update(actions[i], feedback.replication(i))

    def current_phase(self) -> np.ndarray:
        return np.array([p.current_phase() for p in self._copies], dtype=np.int64)


def _is_index_type(kind: type) -> bool:
    """An integer type (Python's or NumPy's), not ``bool``."""
    return issubclass(kind, int | np.integer) and not issubclass(kind, bool)


def _is_index(action: Any) -> bool:
    """An integer (Python's, NumPy's, or a 0-d integer array), not a boolean."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    return _is_index_type(type(action))


def _is_vector(action: Any) -> bool:
    try:
        np.asarray(action, dtype=float)
    except (TypeError, ValueError):
        return False
    return True
