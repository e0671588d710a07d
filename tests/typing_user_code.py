"""A user's components written as docs/how-to/own-policy.md and fast-policy.md show them, with
the annotations a user who type-checks would add. Not a test module (pytest does not collect it):
`make typecheck` runs mypy over it, so the public Policy / SimplePolicy / Environment /
SimpleEnvironment hierarchy must accept such subclasses in each form its docstrings allow
(a class attribute, a property, or an attribute set in ``reset``)."""

from __future__ import annotations

import math

import numpy as np

from impactbandits import (
    ActionSpace,
    BatchRNG,
    CompiledStep,
    Discrete,
    Environment,
    EnvironmentRandom,
    Feedback,
    Outcome,
    Policy,
    SimpleEnvironment,
    SimplePolicy,
    Simplex,
    kernel,
)
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.testing import check_policy


class UCBTunedLite(SimplePolicy):
    """One replication: UCB1 with a smaller bonus."""

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self.counts = [0] * space.n
        self.sums = [0.0] * space.n
        self.t = 0

    def select(self) -> int:
        self.t += 1
        for arm, n in enumerate(self.counts):
            if n == 0:
                return arm
        scores = [
            s / n + math.sqrt(math.log(self.t) / (2 * n))
            for s, n in zip(self.sums, self.counts, strict=True)
        ]
        return max(range(len(scores)), key=scores.__getitem__)

    def update(self, action: int, feedback: Feedback) -> None:
        self.counts[action] += 1
        self.sums[action] += float(feedback.reward)


class PhasedSimple(SimplePolicy):
    """Phases known only once the space is: set in ``reset``; a horizon-aware property."""

    action_kinds = ("discrete", "simplex")
    deterministic = True

    def __init__(self, explore: int | None = None) -> None:
        self.explore = explore

    @property
    def requires_horizon(self) -> bool:
        return self.explore is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self.phases = tuple(f"arm {i}" for i in range(space.n))
        self.k, self.t = space.n, 0

    def select(self) -> int:
        self.t += 1
        return self.t % self.k

    def update(self, action: int, feedback: Feedback) -> None:
        pass

    def current_phase(self) -> int:
        return self.t % self.k


class BatchedGreedy(Policy):
    """All replications at once: the best empirical mean, each arm tried once first."""

    deterministic = True  # draws nothing: replications of a noise-free run are one run

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        fresh = self.counts == 0
        means = np.where(fresh, np.inf, self.sums / np.maximum(self.counts, 1))
        return np.argmax(means, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.counts[self.rows, actions] += 1
        self.sums[self.rows, actions] += feedback.reward


@kernel
def _init(params: np.ndarray, k: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(k), np.zeros(k)


@kernel
def _select(state: tuple[np.ndarray, np.ndarray], params: np.ndarray, t: int, u: float) -> int:
    counts, sums = state
    return int(np.argmax(sums / np.maximum(counts, 1.0) + params[0] / math.sqrt(t)))


@kernel
def _update(
    state: tuple[np.ndarray, np.ndarray], params: np.ndarray, t: int, arm: int, reward: float
) -> None:
    counts, sums = state
    counts[arm] += 1.0
    sums[arm] += reward


class FastPolicy(Policy):
    """A batched policy with a compiled step, phases set in ``reset``, a horizon-aware
    property and a parameter-dependent ``deterministic``."""

    action_kinds = ("discrete",)

    def __init__(self, c: float = 1.0, horizon_aware: bool = False) -> None:
        self.c, self.horizon_aware = c, horizon_aware

    @property
    def requires_horizon(self) -> bool:
        return self.horizon_aware

    @property
    def deterministic(self) -> bool:
        return self.c > 0

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.phases = ("explore", "exploit")
        self.t = 0
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        bonus = self.c / math.sqrt(self.t)
        return np.argmax(self.sums / np.maximum(self.counts, 1.0) + bonus, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.counts[self.rows, actions] += 1.0
        self.sums[self.rows, actions] += feedback.reward

    def current_phase(self) -> np.ndarray:
        return np.zeros(self.rows.size, dtype=np.int64)

    def compiled_step(self) -> CompiledStep | None:
        return CompiledStep(_init, _select, _update, np.array([self.c]))


class TwoArms(Environment):
    """Two Bernoulli arms with common noise; its own oracle name."""

    default_oracle: str | None = "best-arm"

    def __init__(self, means: list[float]) -> None:
        self.means = np.asarray(means, dtype=float)
        self._space = Discrete(len(means))

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        return False

    def reset(self, random: EnvironmentRandom) -> None:
        self._noise = random.noise(self._space.n)
        self._replications = random.size
        self._t = 0

    def expected_rewards(self) -> np.ndarray:
        return np.broadcast_to(self.means, (self._replications, self.means.size))

    def step(self, actions: np.ndarray) -> Outcome:
        expected = self.expected_reward(actions)
        pays = self._noise.row(self._t) < self.means
        self._t += 1
        reward = pays[np.arange(actions.size), actions].astype(float)
        return Outcome(Feedback(reward), expected)


class Groups(Environment):
    """A probability-vector environment (as tests/toy_components.py writes one)."""

    default_oracle = None

    def __init__(self, means: list[float]) -> None:
        self.means = np.asarray(means, dtype=float)
        self._space = Simplex(len(means))

    @property
    def action_space(self) -> Simplex:
        return self._space

    def reset(self, random: EnvironmentRandom) -> None:
        self._t = 0

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        return actions @ self.means

    def step(self, actions: np.ndarray) -> Outcome:
        self._t += 1
        expected = self.expected_reward(actions)
        return Outcome(Feedback(expected), expected)


class Constant(SimpleEnvironment):
    """One replication, noise-free: a property where the flag depends on a parameter."""

    def __init__(self, means: list[float], noisy: bool = False) -> None:
        self.means, self.noisy = means, noisy

    @property
    def deterministic(self) -> bool:
        return not self.noisy

    @property
    def action_space(self) -> Discrete:
        return Discrete(len(self.means))

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def step(self, action: int) -> tuple[float, float]:
        mean = self.means[action]
        return (mean + float(self.rng.normal()) if self.noisy else mean), mean


class Fixed(SimpleEnvironment):
    """Likewise with class attributes."""

    default_oracle = "best-arm"
    deterministic = True

    @property
    def action_space(self) -> Discrete:
        return Discrete(2)

    def reset(self, rng: np.random.Generator) -> None:
        pass

    def step(self, action: int) -> tuple[float, float]:
        return float(action), float(action)


def _use() -> None:
    """What a user's script does with them (type-checked, never run)."""
    check_policy(BatchedGreedy, env_factory=lambda: TwoArms([0.3, 0.7]))
    policies: list[Policy] = [BatchedGreedy(), FastPolicy(), BatchedSimplePolicy(UCBTunedLite())]
    environments: list[Environment] = [TwoArms([0.3, 0.7]), Groups([0.5, 0.5])]
    simple: list[SimplePolicy] = [UCBTunedLite(), PhasedSimple()]
    plain: list[SimpleEnvironment] = [Constant([0.1, 0.2]), Fixed()]
    assert policies and environments and simple and plain
