"""Small user-style components used to test the probability-vector (meta-arm) path."""

from __future__ import annotations

import numpy as np

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import Simplex


class ToyActivation(Environment):
    """K groups; group k is activated independently with probability p_k and, if activated,
    pays a Bernoulli(μ_k) reward that is observed (semi-bandit feedback, NaN otherwise)."""

    default_oracle = None

    def __init__(self, means: list[float], resolution: int | None = None) -> None:
        self.means = np.asarray(means, dtype=float)
        self._space = Simplex(len(means), resolution)

    @property
    def action_space(self) -> Simplex:
        return self._space

    def reset(self, random: EnvironmentRandom) -> None:
        self._activation = random.noise(self._space.n, stream=0)
        self._reward = random.noise(self._space.n, stream=1)
        self._t = 0

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        return actions @ self.means

    def step(self, actions: np.ndarray) -> Outcome:
        active = self._activation.row(self._t) < actions
        paid = self._reward.row(self._t) < self.means
        self._t += 1
        observed = np.where(active, paid.astype(float), np.nan)
        reward = np.nansum(observed, axis=1)
        return Outcome(Feedback(reward, observed), self.expected_reward(actions))


class GreedyVector(SimplePolicy):
    """Puts all mass on the group with the best observed mean (uniform until all observed)."""

    action_kinds = ("simplex",)

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.n = np.zeros(self.k)
        self.s = np.zeros(self.k)

    def select(self):
        if np.any(self.n == 0):
            return np.full(self.k, 1.0 / self.k)
        p = np.zeros(self.k)
        p[np.argmax(self.s / self.n)] = 1.0
        return p

    def update(self, action, feedback):
        seen = ~np.isnan(feedback.observed)
        self.n += seen
        self.s += np.nan_to_num(feedback.observed)
