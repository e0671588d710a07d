"""The environment contract (batched) and an adapter for single-replication environments.

An :class:`Environment` simulates ``R`` independent replications of one bandit problem in
lockstep. It owns the dynamics and knows the truth: besides
``step``, it reports the expected reward of actions in its *current* state, which is what oracles
and pseudo-regret use. Policies never see the environment object.

Randomness comes from :class:`EnvironmentRandom`: per-replication generators for drawing random
*instances* (e.g. means ~ U(0, 1) per seed) and :class:`~impactbandits.core.random.CommonNoise`
tables for reward noise, so that all policies face the same luck.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.random import ENV_INSTANCE, ENV_NOISE, CommonNoise, generator_for
from impactbandits.core.spaces import ActionSpace

__all__ = ["BatchedSimpleEnvironment", "Environment", "EnvironmentRandom", "SimpleEnvironment"]


class EnvironmentRandom:
    """The random sources of one environment for a batch of replications."""

    def __init__(self, entropy: int, key: int, replications: Sequence[int]) -> None:
        self.entropy = int(entropy)
        self.key = int(key)
        self.replications = tuple(int(r) for r in replications)

    @property
    def size(self) -> int:
        return len(self.replications)

    def instance_generators(self) -> list[np.random.Generator]:
        """One generator per replication for drawing the random instance itself."""
        return [generator_for(self.entropy, (self.key, ENV_INSTANCE, r)) for r in self.replications]

    def noise(self, channels: int, distribution: str = "uniform", stream: int = 0) -> CommonNoise:
        """An indexed noise table with ``channels`` channels (e.g. one per arm)."""
        return CommonNoise(
            self.entropy, (self.key, ENV_NOISE, stream), self.replications, channels, distribution
        )


class Environment(ABC):
    """Batched environment: ``R`` replications advance together.

    Subclasses set :attr:`default_oracle` (name of the exact benchmark used for regret, or
    ``None`` when there is none) and implement :meth:`reset`, :meth:`step` and
    :meth:`expected_rewards` (finite action spaces) or :meth:`expected_reward`.
    """

    default_oracle: str | None = None
    records_arm_rewards: ClassVar[bool] = False
    """Ask the simulation loop to record cumulative realised reward per arm."""
    regret_on: ClassVar[str | None] = None
    """Name of a :meth:`summary_metrics` column that regret is measured on instead of the
    expected reward (e.g. ``"expected_utility"``)."""
    realised_on: ClassVar[str | None] = None
    """Likewise for ``realised_regret`` instead of the realised reward (e.g. ``"utility"``)."""

    @property
    def deterministic(self) -> bool:
        """Whether rewards are a function of the actions alone: no random instance, no noise
        (e.g. a rested bandit with ``noise = "none"``). Every replication is then the same
        problem and, with a :attr:`~impactbandits.core.policy.Policy.deterministic` policy,
        the same run: the runner computes one replication and records it for every seed. An
        instance-level property (it usually depends on parameters); default ``False``."""
        return False

    @property
    @abstractmethod
    def action_space(self) -> ActionSpace:
        """The actions a policy may take."""

    @abstractmethod
    def reset(self, random: EnvironmentRandom) -> None:
        """Start ``random.size`` fresh replications."""

    @abstractmethod
    def step(self, actions: np.ndarray) -> Outcome:
        """Play one round with one action per replication."""

    def expected_rewards(self) -> np.ndarray:
        """``(R, n)`` expected reward of every arm in the current state (discrete spaces)."""
        raise NotImplementedError(f"{type(self).__name__} has no finite list of actions")

    def summary_metrics(self, trajectory: Any) -> dict[str, np.ndarray]:
        """Extra per-checkpoint metrics computed after the run from the recorded summaries:
        name → ``(R, C)`` or ``(C,)`` array. Default: none."""
        return {}

    def check_horizon(self, rounds: int) -> None:
        """Raise :class:`~impactbandits.errors.SpecError` if ``rounds`` rounds cannot be played
        (e.g. a rested curve shorter than the horizon). Called before any run starts."""
        return None

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        """``(R,)`` expected reward of ``actions`` in the current state."""
        values = self.expected_rewards()
        return values[np.arange(values.shape[0]), actions]


class SimpleEnvironment(ABC):
    """One replication, written plainly; the runner batches it with
    :class:`BatchedSimpleEnvironment`. ``reset`` receives this replication's own generator."""

    default_oracle: str | None = None
    if TYPE_CHECKING:
        # A plain class attribute (below), read-only to a type checker as on Environment: a
        # subclass declares it as a class attribute or as a property (when it depends on
        # parameters).
        @property
        def deterministic(self) -> bool:
            """No randomness in rewards given the actions (see
            :attr:`Environment.deterministic`): a class attribute or a property; default
            ``False``."""
    else:
        deterministic = False

    @property
    @abstractmethod
    def action_space(self) -> ActionSpace: ...

    @abstractmethod
    def reset(self, rng: np.random.Generator) -> None: ...

    @abstractmethod
    def step(self, action: Any) -> tuple[float, float]:
        """Return ``(realised reward, expected reward of the action before the round)``."""

    def expected_rewards(self) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no finite list of actions")


class BatchedSimpleEnvironment(Environment):
    """Runs one copy of a :class:`SimpleEnvironment` per replication."""

    def __init__(self, prototype: SimpleEnvironment) -> None:
        self.prototype = prototype
        self.default_oracle = prototype.default_oracle
        self._copies: list[SimpleEnvironment] = []

    @property
    def action_space(self) -> ActionSpace:
        return self.prototype.action_space

    @property
    def deterministic(self) -> bool:
        return bool(self.prototype.deterministic)

    def reset(self, random: EnvironmentRandom) -> None:
        self._copies = [copy.deepcopy(self.prototype) for _ in range(random.size)]
        for env, rng in zip(self._copies, random.instance_generators(), strict=True):
            env.reset(rng)

    def step(self, actions: np.ndarray) -> Outcome:
        pairs = [env.step(a) for env, a in zip(self._copies, actions, strict=True)]
        reward = np.array([p[0] for p in pairs], dtype=float)
        expected = np.array([p[1] for p in pairs], dtype=float)
        return Outcome(Feedback(reward), expected)

    def expected_rewards(self) -> np.ndarray:
        return np.stack([env.expected_rewards() for env in self._copies])
