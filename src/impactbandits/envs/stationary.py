"""Stationary stochastic bandits: Bernoulli and Gaussian arms.

Noise is drawn as common random numbers: the reward of the m-th pull of arm i in replication r
is a function of (r, i, m) only (see :class:`~impactbandits.core.random.CommonNoise`).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.core.spaces import Discrete
from impactbandits.errors import SpecError
from impactbandits.params import ARMS, NoiseScale, Probability, RequiredWhen

__all__ = ["BernoulliBandit", "GaussianBandit"]


class _StationaryArms(Environment):
    """Shared mechanics: per-replication means ``(R, n)`` and per-arm pull counters."""

    default_oracle = "best_fixed_arm"
    _distribution = "uniform"

    def __init__(self, n_arms: int) -> None:
        self._space = Discrete(n_arms)
        self._mu = np.empty((0, n_arms))

    @property
    def action_space(self) -> Discrete:
        return self._space

    def _instance_means(self, random: EnvironmentRandom) -> np.ndarray:
        raise NotImplementedError

    def reset(self, random: EnvironmentRandom) -> None:
        self._mu = self._instance_means(random)
        self._flat_mu = self._mu.reshape(-1)
        self._noise = random.noise(self._space.n, self._distribution)
        self._pulls = np.zeros((random.size, self._space.n), dtype=np.int64)
        self._flat_pulls = self._pulls.reshape(-1)
        self._offsets = np.arange(random.size) * self._space.n

    def _draw(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Common noise of this pull of each chosen arm, and the arms' means."""
        flat = self._offsets + actions
        index = self._flat_pulls.take(flat)
        noise = self._noise.at(actions, index)
        self._flat_pulls[flat] = index + 1
        return noise, self._flat_mu.take(flat)

    def expected_rewards(self) -> np.ndarray:
        return self._mu.copy()


class BernoulliBandit(_StationaryArms):
    """Stationary Bernoulli bandit with means ``means`` (each in [0, 1]).

    The reward of the m-th pull of arm i is ``1{U < μ_i}`` with ``U`` the common uniform of
    (replication, i, m). Default oracle: the best fixed arm, ``T · max_i μ_i``.
    """

    def __init__(self, means: Annotated[list[Probability], Field(min_length=1)]) -> None:
        super().__init__(len(means))
        self.means = np.asarray(means, dtype=float)

    def _instance_means(self, random: EnvironmentRandom) -> np.ndarray:
        return np.tile(self.means, (random.size, 1))

    def step(self, actions: np.ndarray) -> Outcome:
        u, mu = self._draw(actions)
        return Outcome(Feedback((u < mu).astype(float)), mu)

    def pull_model(self, pulls: int) -> PullModel | None:
        """The compiled loops' view of :meth:`step` (:mod:`impactbandits.kernels`)."""
        return PullModel(self._mu[:, :, None], "bernoulli", 0.0, self._noise)


class GaussianBandit(_StationaryArms):
    """Stationary Gaussian bandit: reward = μ_i + σ·Z with Z the common standard normal.

    Give ``means``, or ``n_arms`` to draw a fresh instance μ_i ~ U(0, 1) per replication (the
    random instances of Lindner et al., Fig. 11). ``sigma`` defaults to 1.
    """

    _distribution = "normal"

    def __init__(
        self,
        means: Annotated[
            Annotated[list[float], Field(min_length=1)] | None, RequiredWhen("n_arms", None)
        ] = None,
        n_arms: Annotated[int | None, Field(gt=0), ARMS, RequiredWhen("means", None)] = None,
        sigma: NoiseScale = 1.0,
    ) -> None:
        if (means is None) == (n_arms is None):
            raise SpecError("means", "give either 'means' or 'n_arms' (random U(0, 1) means)")
        if means is not None and not np.all(np.isfinite(means)):
            raise SpecError("means", "must be finite numbers")
        super().__init__(len(means) if means is not None else int(n_arms))  # type: ignore[arg-type]
        self.means = None if means is None else np.asarray(means, dtype=float)
        self.sigma = float(sigma)

    @property
    def deterministic(self) -> bool:
        """Fixed means and no noise (σ = 0): every reward is the arm's mean."""
        return self.means is not None and self.sigma == 0

    def _instance_means(self, random: EnvironmentRandom) -> np.ndarray:
        if self.means is not None:
            return np.tile(self.means, (random.size, 1))
        return np.stack([g.random(self._space.n) for g in random.instance_generators()])

    def step(self, actions: np.ndarray) -> Outcome:
        z, mu = self._draw(actions)
        return Outcome(Feedback(mu + self.sigma * z), mu)

    def pull_model(self, pulls: int) -> PullModel | None:
        """The compiled loops' view of :meth:`step` (:mod:`impactbandits.kernels`)."""
        return PullModel(self._mu[:, :, None], "normal", self.sigma, self._noise)
