"""Action spaces.

Two kinds of action occur in the five papers:

* :class:`Discrete` — pull one of ``n`` arms (Lindner et al., Patil et al., Ron et al., Cella &
  Cesa-Bianchi). A batch of actions is an ``int64`` array of shape ``(R,)``.
* :class:`Simplex` — choose a probability vector over ``n`` groups (Tang et al.'s meta-arms),
  optionally restricted to the ε-grid. A batch of actions is a ``float`` array of shape ``(R, n)``.

The space, not the simulation loop, knows how an action counts towards the "pulls" of each arm
(one-hot for a discrete pull, the vector itself for a meta-arm) and when two actions differ, so the
runner has no special cases for either kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from impactbandits.errors import SpecError

__all__ = ["ActionSpace", "Discrete", "Simplex"]


@dataclass(frozen=True)
class ActionSpace:
    """Base class: ``n`` is the number of arms (or groups) actions are counted against.

    ``known`` holds what the paper's learner is told about the problem besides the actions
    (e.g. Ron et al.'s fairness function and transfer cost, Tang et al.'s γ and feedback mode);
    policies may read it at reset.
    """

    n: int
    known: Mapping[str, Any] = field(default_factory=dict, compare=False, kw_only=True)
    kind: ClassVar[str] = "abstract"

    def __post_init__(self) -> None:
        if not isinstance(self.n, int | np.integer) or self.n < 1:
            raise SpecError("n_arms", f"must be a positive integer, got {self.n!r}")

    def accumulate(self, pulls: np.ndarray, actions: np.ndarray, offsets: np.ndarray) -> None:
        """Add one round of ``actions`` (a batch) to ``pulls`` of shape ``(R, n)`` in place;
        ``offsets`` is ``arange(R) * n`` (row starts in the flattened array)."""
        raise NotImplementedError

    def changed(self, actions: np.ndarray, previous: np.ndarray) -> np.ndarray:
        """Boolean ``(R,)``: where this round's action differs from the previous one."""
        raise NotImplementedError

    def validate(self, actions: np.ndarray, replications: int) -> np.ndarray:
        """Check a batch of actions returned by a policy; return it in canonical dtype."""
        raise NotImplementedError

    def check(self, actions: np.ndarray, replications: int) -> np.ndarray:
        """:meth:`validate` on a fast path for actions already in canonical form (what the
        simulation loop calls every round)."""
        return self.validate(actions, replications)


class InvalidAction(SpecError):
    """A policy returned an action outside the space; ``row`` is its position in the batch
    (``None``: the whole batch is malformed)."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__("action", message)
        self.row = row

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message, self.row))


@dataclass(frozen=True)
class Discrete(ActionSpace):
    """Pull one of ``n`` arms, numbered ``0 .. n-1``."""

    kind: ClassVar[str] = "discrete"

    def accumulate(self, pulls: np.ndarray, actions: np.ndarray, offsets: np.ndarray) -> None:
        pulls.reshape(-1)[offsets + actions] += 1

    def changed(self, actions: np.ndarray, previous: np.ndarray) -> np.ndarray:
        return actions != previous

    def validate(self, actions: np.ndarray, replications: int) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (replications,) or not np.issubdtype(actions.dtype, np.integer):
            raise SpecError(
                "action",
                f"a policy must return {replications} integer arm indices, got shape "
                f"{actions.shape} of {actions.dtype}",
            )
        if actions.size and (actions.min() < 0 or actions.max() >= self.n):
            bad = int(np.flatnonzero((actions < 0) | (actions >= self.n))[0])
            raise InvalidAction(
                f"arm indices must lie in 0..{self.n - 1}, got {int(actions[bad])}", bad
            )
        return actions.astype(np.int64, copy=False)

    def check(self, actions: np.ndarray, replications: int) -> np.ndarray:
        # one comparison: negative int64 values are huge as uint64 (measured: 2-3 us per round
        # against 5-7 us for validate; benchmarks/validate_actions.py)
        if (
            type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == (replications,)
            and not actions.view(np.uint64).max(initial=0) >= self.n
        ):
            return actions
        return self.validate(actions, replications)


@dataclass(frozen=True)
class Simplex(ActionSpace):
    """Probability vectors over ``n`` groups; ``resolution`` = 1/ε restricts them to the ε-grid.

    With ``resolution = None`` any vector of the simplex is allowed (Tang et al., Section 2);
    with an integer ``resolution = 1/ε`` every coordinate must be a multiple of ε (their
    discretisation, Section 4).
    """

    resolution: int | None = None
    tolerance: float = 1e-9
    kind: ClassVar[str] = "simplex"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.resolution is not None and (
            not isinstance(self.resolution, int | np.integer) or self.resolution < 1
        ):
            raise SpecError(
                "resolution", f"1/ε must be a positive integer, got {self.resolution!r}"
            )

    def accumulate(self, pulls: np.ndarray, actions: np.ndarray, offsets: np.ndarray) -> None:
        pulls += actions

    def changed(self, actions: np.ndarray, previous: np.ndarray) -> np.ndarray:
        return np.any(np.abs(actions - previous) > self.tolerance, axis=1)

    def validate(self, actions: np.ndarray, replications: int) -> np.ndarray:
        actions = np.asarray(actions, dtype=float)
        if actions.shape != (replications, self.n):
            raise SpecError(
                "action",
                f"a policy must return {replications} probability vectors of length {self.n}, "
                f"got shape {actions.shape}",
            )
        if np.any(actions < -self.tolerance) or not np.all(np.isfinite(actions)):
            raise SpecError("action", "probability vectors must be finite and non-negative")
        if np.any(np.abs(actions.sum(axis=1) - 1.0) > 1e-6):
            raise SpecError("action", "probability vectors must sum to 1")
        if self.resolution is not None:
            scaled = actions * self.resolution
            if np.any(np.abs(scaled - np.round(scaled)) > 1e-6):
                raise SpecError(
                    "action", f"coordinates must be multiples of ε = 1/{self.resolution}"
                )
        return actions
