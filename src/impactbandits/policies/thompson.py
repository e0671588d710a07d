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
from typing import Annotated, Any, Literal

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.streams import PolicyStream, stream_beta, stream_normal, stream_uniform
from impactbandits.params import NOISE, PositiveFloat
from impactbandits.policies.classic import counts_update
from impactbandits.policies.statistics import ArmStatistics

__all__ = [
    "GaussianThompsonSampling",
    "Rule",
    "ThompsonSampling",
    "beta_posterior_draws",
    "counted",
    "counted_outcome",
    "counts_with_stream",
    "posterior_select",
]


#: How a reward r in [0, 1] is counted (module docstring).
Rule = Literal["binarize", "fractional"]


def counted(stream: PolicyStream, n: int, t: int, reward: np.ndarray, binarize: bool) -> np.ndarray:
    """The counted outcome of round ``t`` (``n`` arms): 1{u < r} with u the uniform of channel
    2n (Agrawal & Goyal 2012, Algorithm 2), or r itself."""
    if not binarize:
        return reward
    u = stream.uniform(2 * n, t)
    return np.where(u < reward, 1.0, 0.0)


def beta_posterior_draws(
    stream: PolicyStream, successes: np.ndarray, failures: np.ndarray, prior: tuple[float, float],
    t: int,
) -> np.ndarray:  # fmt: skip
    """θ_i ~ Beta(S_i + α₀, F_i + β₀) of round ``t`` for every replication and arm."""
    arms = np.arange(successes.shape[1])
    return stream.beta(successes + prior[0], failures + prior[1], arms, t)


class ThompsonSampling(Policy):
    """Beta–Bernoulli Thompson sampling (module docstring): prior Beta(``prior_alpha``,
    ``prior_beta``), rewards in [0, 1] counted by ``update``."""

    def __init__(
        self,
        prior_alpha: PositiveFloat = 1.0,
        prior_beta: PositiveFloat = 1.0,
        update: Rule = "binarize",
    ) -> None:
        self.prior_alpha = float(prior_alpha)
        self.prior_beta = float(prior_beta)
        self.rule = update

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.t = 0
        self.stream = rng.stream
        self.successes = np.zeros((rng.size, space.n))
        self.failures = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        prior = (self.prior_alpha, self.prior_beta)
        theta = beta_posterior_draws(self.stream, self.successes, self.failures, prior, self.t)
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        x = counted(self.stream, self.n, self.t, reward, self.rule == "binarize")
        self.successes[self.rows, actions] += x
        self.failures[self.rows, actions] += 1.0 - x

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.prior_alpha, self.prior_beta, float(self.rule == "binarize")])
        return CompiledStep(counts_with_stream, posterior_select, _beta_update, params, stream=True)


@kernel
def counts_with_stream(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """Success and failure counts at 0 (the prior is added when drawing), and the stream."""
    return np.zeros(k), np.zeros(k), stream.copy()


@kernel
def posterior_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """argmax_i θ_i, θ_i ~ Beta(S_i + α₀, F_i + β₀) of round t (``params``: α₀, β₀, …), for
    one replication; ``state`` starts with S, F and ends with the stream."""
    successes, failures, stream = state[0], state[1], state[-1]
    best = 0
    best_value = -math.inf
    for i in range(successes.size):
        value = stream_beta(stream, successes[i] + params[0], failures[i] + params[1], i, t)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel(inline=True)
def counted_outcome(stream: np.ndarray, k: int, t: int, reward: float, binarize: float) -> float:
    """:func:`counted` for one replication."""
    if binarize > 0.0:
        return 1.0 if stream_uniform(stream, 2 * k, t, 0) < reward else 0.0
    return reward


@kernel
def _beta_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`ThompsonSampling.update` for one replication (``params``: α₀, β₀, binarize)."""
    successes, failures, stream = state
    x = counted_outcome(stream, successes.size, t, reward, params[2])
    successes[arm] += x
    failures[arm] += 1.0 - x


class GaussianThompsonSampling(Policy):
    """Thompson sampling with Gaussian priors (module docstring), noise scale ``sigma``."""

    def __init__(self, sigma: Annotated[PositiveFloat, NOISE] = 1.0) -> None:
        self.sigma = float(sigma)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.t = 0
        self.stream = rng.stream
        self.stats = ArmStatistics(rng.size, space.n)
        self.arms = np.arange(space.n)

    def select(self) -> np.ndarray:
        self.t += 1
        z = self.stream.normal(self.arms, self.t)
        shrunk = self.stats.counts + 1.0
        theta = self.stats.sums / shrunk + self.sigma / np.sqrt(shrunk) * z
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.stats.add(actions, feedback.reward)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.sigma])
        # counts and sums where TS keeps successes and failures: the same initial state
        return CompiledStep(counts_with_stream, _gauss_select, counts_update, params, stream=True)


@kernel
def _gauss_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
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
