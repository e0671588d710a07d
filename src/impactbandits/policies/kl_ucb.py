"""KL-UCB: the index is the largest mean still plausible under a Kullback–Leibler bound.

KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded stochastic bandits and beyond",
COLT, Algorithm 1): pull each arm once (lowest index first), then the arm maximising

    u_i(t) = max{q ≥ x̄_i : n_i · d(x̄_i, q) ≤ ln t + c ln ln t},

with d the divergence of the reward model: ``"bernoulli"`` d(p, q) = p ln(p/q) + (1 − p)
ln((1 − p)/(1 − q)) (rewards in [0, 1], q ≤ 1: the paper's bounded-rewards case), or
``"gaussian"`` d(p, q) = (p − q)²/(2σ²) (Gaussian rewards of known σ, or σ-sub-Gaussian ones;
then u_i = x̄_i + σ√(2 level / n_i) in closed form). Defaults: c = 0, which the paper recommends
for practice (its Theorem 1 takes c = 3); SMPyBandits' ``klUCB`` has another ``c``, a factor
of ln t (its default 1 is our c = 0). σ defaults
to 1/2, the sub-Gaussian scale of any reward in [0, 1] (SMPyBandits' ``klucbGauss``: σ² = 1/4).

``level = "kl-ucb+"`` replaces ln t by ln(t / n_i) (KL-UCB+, Cappé, Garivier, Maillard, Munos &
Stoltz 2013, "Kullback–Leibler upper confidence bounds for optimal sequential allocation",
Ann. Statist., §3's remark; Kaufmann 2018 analyses it), which explores less. ``ln ln`` is
taken of max(1, ·), so the level is never below the logarithm itself.

The Bernoulli bound is found by bisection on [x̄_i, 1], a fixed number of halvings
(:data:`HALVINGS`: the bound to 2⁻³² ≈ 2·10⁻¹⁰, SMPyBandits' ``klUCB`` stops at 10⁻⁴), so that the
readable form (vectorised over the batch) and the compiled step do the same floating-point
operations, the logarithms being the C library's (:mod:`~impactbandits.core.ops`). Ties to the
lowest arm. Anytime and deterministic.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.params import NonNegativeFloat, PositiveFloat
from impactbandits.policies.classic import counts_init, counts_update
from impactbandits.policies.statistics import ArmStatistics

__all__ = ["HALVINGS", "KLUCB", "bernoulli_kl", "kl_upper_bound"]

#: Halvings of the bisection for the Bernoulli upper bound.
HALVINGS = 32
#: q is kept in [EPS, 1 − EPS] inside the Bernoulli divergence (finite logarithms).
EPS = 1e-15


@kernel(inline=True)
def bernoulli_kl(p: float, q: float) -> float:
    """d(p, q) of Bernoulli laws, with 0 ln 0 = 0 and q kept in [EPS, 1 − EPS]."""
    q = min(max(q, EPS), 1.0 - EPS)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


@kernel
def kl_upper_bound(mean: float, pulls: float, level: float) -> float:
    """The largest q in [mean, 1] with pulls · d(mean, q) ≤ level (to 2⁻:data:`HALVINGS`)."""
    low = mean
    high = 1.0
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        if pulls * bernoulli_kl(mean, middle) <= level:
            low = middle
        else:
            high = middle
    return low


def _kl_many(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """:func:`bernoulli_kl` element by element, the same operations."""
    q = np.minimum(np.maximum(q, EPS), 1.0 - EPS)
    inside = p > 0.0
    below = p < 1.0
    first = np.zeros(p.shape)
    first[inside] = p[inside] * ops.log(p[inside] / q[inside])
    second = np.zeros(p.shape)
    second[below] = (1.0 - p[below]) * ops.log((1.0 - p[below]) / (1.0 - q[below]))
    return first + second  # 0.0 + a is a: the kernel's running sum


def _bounds_many(mean: np.ndarray, pulls: np.ndarray, level: np.ndarray) -> np.ndarray:
    """:func:`kl_upper_bound` element by element."""
    low = mean.copy()
    high = np.ones(mean.shape)
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        inside = pulls * _kl_many(mean, middle) <= level
        low = np.where(inside, middle, low)
        high = np.where(inside, high, middle)
    return low


class KLUCB(Policy):
    """KL-UCB (module docstring): ``divergence`` of the reward model, ``c`` of the ln ln t term,
    ``level`` ``"kl-ucb"`` (ln t) or ``"kl-ucb+"`` (ln(t / n_i)), ``sigma`` the Gaussian scale."""

    deterministic = True

    def __init__(
        self,
        divergence: Literal["bernoulli", "gaussian"] = "bernoulli",
        c: NonNegativeFloat = 0.0,
        level: Literal["kl-ucb", "kl-ucb+"] = "kl-ucb",
        sigma: PositiveFloat = 0.5,
    ) -> None:
        self.divergence = divergence
        self.c = float(c)
        self.level = level
        self.sigma = float(sigma)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.t = 0
        self.stats = ArmStatistics(rng.size, space.n)

    def _levels(self, counts: np.ndarray) -> np.ndarray:
        """ln(x) + c ln(max(1, ln x)) with x = t, or t / n_i (KL-UCB+), for pulled arms."""
        x = np.full(counts.shape, float(self.t))
        if self.level == "kl-ucb+":
            x = x / np.where(counts > 0, counts, 1.0)
        log_x = ops.log(x)
        return log_x + self.c * ops.log(np.maximum(log_x, 1.0))

    def select(self) -> np.ndarray:
        self.t += 1
        counts, sums = self.stats.counts, self.stats.sums
        pulled = counts > 0
        safe = np.where(pulled, counts, 1.0)
        mean = sums / safe
        level = self._levels(counts)
        if self.divergence == "gaussian":
            bound = mean + self.sigma * np.sqrt(2.0 * level / safe)
        else:
            bound = _bounds_many(mean, safe, level)
        return np.argmax(np.where(pulled, bound, np.inf), axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.stats.add(actions, feedback.reward)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array(
            [
                self.c,
                float(self.level == "kl-ucb+"),
                float(self.divergence == "gaussian"),
                self.sigma,
            ]
        )
        return CompiledStep(counts_init, _klucb_select, counts_update, params)


@kernel
def _klucb_select(state, params: np.ndarray, t: int, u: float) -> int:  # type: ignore[no-untyped-def]
    """:meth:`KLUCB.select` for one replication (``params``: c, KL-UCB+, Gaussian, σ)."""
    counts, sums = state
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            x = float(t)
            if params[1] > 0.0:
                x = x / counts[i]
            log_x = math.log(x)
            level = log_x + params[0] * math.log(max(log_x, 1.0))
            mean = sums[i] / counts[i]
            if params[2] > 0.0:
                value = mean + params[3] * math.sqrt(2.0 * level / counts[i])
            else:
                value = kl_upper_bound(mean, counts[i], level)
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best
