"""Thompson sampling: a posterior draw per arm, then the arm with the largest draw.

* :class:`ThompsonSampling` — Beta–Bernoulli (Thompson 1933; Agrawal & Goyal 2012, "Analysis of
  Thompson sampling for the multi-armed bandit problem", COLT, Algorithm 1, and Algorithm 2 for
  rewards in [0, 1]): prior Beta(α₀, β₀) per arm (default Beta(1, 1), the paper's); each round
  θ_i ~ Beta(α₀ + S_i, β₀ + F_i) and the arm of the largest θ_i is played. A reward r ∈ [0, 1]
  counts as a success with probability r (``update = "binarize"``, Algorithm 2: r̃ ~ Bernoulli(r),
  so Bernoulli rewards count as they are; SMPyBandits' ``Beta`` posterior binarizes too), or
  adds r to S and 1 − r to F (``update = "fractional"``).
* :class:`GaussianThompsonSampling` — Gaussian priors (Agrawal & Goyal 2013, "Further optimal
  regret bounds for Thompson sampling", AISTATS, Algorithm 2): θ_i ~ N(μ̂_i, σ²/(n_i + 1)) with
  μ̂_i = S_i/(n_i + 1) (a N(0, σ²) prior), σ = ``sigma`` the noise's known standard deviation
  (default 1, the paper's, for rewards in [0, 1]).

Draws come from the policy's counter-based stream (:mod:`~impactbandits.core.streams`): θ_i of
round t on channels 2i, 2i + 1 (Beta: two gammas) or channel i (Gaussian), the binarizing
uniform on channel 2K. So results do not depend on the batch, the backend or the worker count,
and the compiled step gives the readable form's numbers bit for bit. Ties (probability 0) go
to the lowest arm. Anytime.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.streams import stream_beta, stream_normal, stream_uniform
from impactbandits.params import PositiveFloat

__all__ = ["GaussianThompsonSampling", "ThompsonSampling"]


class ThompsonSampling(Policy):
    """Beta–Bernoulli Thompson sampling (module docstring): prior Beta(``prior_alpha``,
    ``prior_beta``), rewards in [0, 1] counted by ``update``."""

    def __init__(
        self,
        prior_alpha: PositiveFloat = 1.0,
        prior_beta: PositiveFloat = 1.0,
        update: Literal["binarize", "fractional"] = "binarize",
    ) -> None:
        self.prior_alpha = float(prior_alpha)
        self.prior_beta = float(prior_beta)
        self.rule = update

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.t = 0
        self.stream = rng.stream
        self.alpha = np.full((rng.size, space.n), self.prior_alpha)
        self.beta = np.full((rng.size, space.n), self.prior_beta)
        self.rows = np.arange(rng.size)
        self.arms = np.arange(space.n)

    def select(self) -> np.ndarray:
        self.t += 1
        theta = self.stream.beta(self.alpha, self.beta, self.arms, self.t)
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        if self.rule == "binarize":
            u = self.stream.uniform(2 * self.n, self.t)
            reward = np.where(u < reward, 1.0, 0.0)
        self.alpha[self.rows, actions] += reward
        self.beta[self.rows, actions] += 1.0 - reward

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.prior_alpha, self.prior_beta, float(self.rule == "binarize")])
        return CompiledStep(_beta_init, _beta_select, _beta_update, params, stream=True)


@kernel
def _beta_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray):  # type: ignore[no-untyped-def]
    """α and β of every arm at the prior, and the replication's stream."""
    return np.full(k, params[0]), np.full(k, params[1]), stream.copy()


@kernel
def _beta_select(state, params: np.ndarray, t: int, u: float) -> int:  # type: ignore[no-untyped-def]
    """:meth:`ThompsonSampling.select` for one replication."""
    alpha, beta, stream = state
    best = 0
    best_value = -math.inf
    for i in range(alpha.size):
        value = stream_beta(stream, alpha[i], beta[i], i, t)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _beta_update(state, params: np.ndarray, t: int, arm: int, reward: float) -> None:  # type: ignore[no-untyped-def]
    """:meth:`ThompsonSampling.update` for one replication."""
    alpha, beta, stream = state
    x = reward
    if params[2] > 0.0:
        x = 1.0 if stream_uniform(stream, 2 * alpha.size, t, 0) < reward else 0.0
    alpha[arm] += x
    beta[arm] += 1.0 - x


class GaussianThompsonSampling(Policy):
    """Thompson sampling with Gaussian priors (module docstring), noise scale ``sigma``."""

    def __init__(self, sigma: PositiveFloat = 1.0) -> None:
        self.sigma = float(sigma)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.t = 0
        self.stream = rng.stream
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)
        self.arms = np.arange(space.n)

    def select(self) -> np.ndarray:
        self.t += 1
        z = self.stream.normal(self.arms, self.t)
        shrunk = self.counts + 1.0
        theta = self.sums / shrunk + self.sigma / np.sqrt(shrunk) * z
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.counts[self.rows, actions] += 1.0
        self.sums[self.rows, actions] += feedback.reward

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.sigma])
        return CompiledStep(_gauss_init, _gauss_select, _gauss_update, params, stream=True)


@kernel
def _gauss_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray):  # type: ignore[no-untyped-def]
    """Pull counts and reward sums, and the replication's stream."""
    return np.zeros(k), np.zeros(k), stream.copy()


@kernel
def _gauss_select(state, params: np.ndarray, t: int, u: float) -> int:  # type: ignore[no-untyped-def]
    """:meth:`GaussianThompsonSampling.select` for one replication."""
    counts, sums, stream = state
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        shrunk = counts[i] + 1.0
        value = sums[i] / shrunk + params[0] / math.sqrt(shrunk) * stream_normal(stream, i, t, 0)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _gauss_update(state, params: np.ndarray, t: int, arm: int, reward: float) -> None:  # type: ignore[no-untyped-def]
    """:meth:`GaussianThompsonSampling.update` for one replication."""
    state[0][arm] += 1.0
    state[1][arm] += reward
