"""UCB-V: an upper confidence bound that uses the arms' empirical variances.

UCB-V (Audibert, Munos & Szepesvári 2009, "Exploration–exploitation tradeoff using variance
estimates in multi-armed bandits", Theoretical Computer Science 410(19), §2, Eq. (1)–(2)): pull
each arm once (lowest index first), then the arm maximising

    B_i(t) = x̄_i + sqrt(2 V_i E_t / n_i) + c · 3 b E_t / n_i,    E_t = ζ ln t,

with V_i the empirical variance of arm i's rewards (divided by n_i) and b a bound on the
rewards' range. Defaults ζ = 1.2, c = 1, b = 1: Theorem 1's conditions (ζ > 1 with c = 1)
for rewards in [0, 1]; SMPyBandits' ``UCBV`` takes ζ = 1. The variance is computed as
``max(0, Σx²/n − x̄²)`` on both paths (the same operations, so the same bits). Ties to the lowest
arm; anytime and deterministic.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.params import NonNegativeFloat, PositiveFloat

__all__ = ["UCBV"]


class UCBV(Policy):
    """UCB-V (module docstring): exploration function ζ ln t with ``zeta``, constant ``c`` of
    the range term, rewards' range bound ``b``."""

    deterministic = True

    def __init__(
        self, zeta: PositiveFloat = 1.2, c: NonNegativeFloat = 1.0, b: PositiveFloat = 1.0
    ) -> None:
        self.zeta, self.c, self.b = float(zeta), float(c), float(b)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.t = 0
        shape = (rng.size, space.n)
        self.counts, self.sums, self.squares = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        pulled = self.counts > 0
        n = np.where(pulled, self.counts, 1.0)
        mean = self.sums / n
        variance = np.maximum(self.squares / n - mean * mean, 0.0)
        explore = self.zeta * float(ops.log(np.array([float(self.t)]))[0])
        index = mean + np.sqrt(2.0 * variance * explore / n) + self.c * 3.0 * self.b * explore / n
        return np.argmax(np.where(pulled, index, np.inf), axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        self.counts[self.rows, actions] += 1.0
        self.sums[self.rows, actions] += reward
        self.squares[self.rows, actions] += reward * reward

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.zeta, self.c, self.b])
        return CompiledStep(_ucbv_init, _ucbv_select, _ucbv_update, params)


@kernel
def _ucbv_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Pull counts, reward sums and sums of squares."""
    return np.zeros(k), np.zeros(k), np.zeros(k)


@kernel
def _ucbv_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`UCBV.select` for one replication (``params``: ζ, c, b)."""
    counts, sums, squares = state
    explore = params[0] * math.log(float(t))
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            n = counts[i]
            mean = sums[i] / n
            variance = max(squares[i] / n - mean * mean, 0.0)
            value = (
                mean
                + math.sqrt(2.0 * variance * explore / n)
                + params[1] * 3.0 * params[2] * explore / n
            )
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _ucbv_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`UCBV.update` for one replication."""
    counts, sums, squares = state
    counts[arm] += 1.0
    sums[arm] += reward
    squares[arm] += reward * reward
