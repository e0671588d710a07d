"""Optimistic policies for stochastic rising bandits (Metelli, Trovò, Pirola & Restelli 2022,
"Stochastic Rising Bandits", ICML): R-ed-UCB (rested, their Algorithm 1) and R-less-UCB
(restless, Algorithm 2).

Both rest on the same forward-looking estimator. For arm i with N = N_{i,t−1} samples
X(1), …, X(N) (in the order received) and window h = ⌊εN⌋, the index in round t is

    B_i(t) = (1/h) Σ_{l=N−h+1}^{N} [ X(l) + (t − l) · (X(l) − X(l−h)) / h ]
             + σ (t − N + h − 1) √(10 log(1/δ_t) / h³),        δ_t = t^{−α},

and B_i(t) = +∞ while h = 0: the mean of the last h samples, each projected to round t with
the slope of the last 2h samples, plus a confidence width that grows with the extrapolation
distance. The policy plays ``argmax_i B_i(t)`` (lowest index on ties). R-less-UCB indexes the
samples by their order, like R-ed-UCB — as the authors' code (and Migali et al.'s 2025
restless-rising experiments from the same group) does; the two differ in the setting they are
analysed for, not in the index.

Defaults are the authors' experimental settings: ε = 1/4, α = 4 (δ_t = t^{−4}), σ = 0.1.

``variant = "authors-code"`` reproduces ``albertometelli/stochastic-rising-bandits``
(``src/algorithms/R_ed_UCB.py``, ``R_less_UCB.py``; the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/) where it departs from the paper:

* the first 2K rounds play the arms in turn (round robin twice);
* an arm with h = 0 gets index 1, not +∞;
* the window weights are mirrored: the mean-and-trend term is
  ``[(2h − N)(A − B) + (C − D) + (t_i − N)(A − B)] / h²`` with A, B the sums of the last two
  windows and C, D their pull-index-weighted sums — unbiased for a linear trend like the
  paper's, but weighting the newest samples most;
* the trend term uses t_i, the round after the arm's last pull, not the current round (it is
  only recomputed when the arm is pulled); the width uses the current round and
  δ = (t − 1)^{−4};
* ties are broken uniformly at random.

Both variants have a compiled step (:mod:`impactbandits.core.compiled`): the same sample
tables and cursors for one replication, and the index with the readable form's operations in
its order (``h²``, ``h³`` as ``h · h``, ``h · h · h``: exact for the window sizes a run
reaches, as NumPy's ``h ** 2`` is). The authors-code step takes the readable form's draw
(``u``, one a round) from round 2K + 1 on, when the round robin is over
(:attr:`~impactbandits.core.compiled.CompiledStep.first_draw`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import Variant
from impactbandits.errors import SpecError
from impactbandits.params import NOISE, PositiveFloat

__all__ = ["RedUCB", "RlessUCB"]

#: Window fraction ε of the authors' experiments (h = ⌊N/4⌋).
EPSILON_DEFAULT = 0.25
#: Exponent α of δ_t = t^{−α} in the authors' experiments.
ALPHA_DEFAULT = 4.0
#: Sub-Gaussian proxy σ of the authors' experiments.
SIGMA_DEFAULT = 0.1
#: Initial capacity (rounds) of the sample tables of an anytime run; doubled when full.
INITIAL_CAPACITY = 256


class RedUCB(Policy):
    """R-ed-UCB (Metelli et al. 2022, §4, Algorithm 1): optimistic index on the
    forward-projected mean of the last ⌊εN⌋ samples (module docstring). Parameters: ``epsilon``
    ε ∈ (0, 1/2] (window fraction), ``alpha`` α > 0 (δ_t = t^{−α}), ``sigma`` σ (sub-Gaussian
    proxy of the observations); defaults ε = 1/4, α = 4, σ = 0.1. Anytime. O(K) per round:
    the window sums of an arm change only when it is pulled, and come from per-arm prefix sums
    kept in O(R·T) memory.
    ``variant = "authors-code"``: the authors' implementation (module docstring)."""

    def __init__(
        self,
        epsilon: Annotated[float, Field(gt=0.0, le=0.5)] = EPSILON_DEFAULT,
        alpha: PositiveFloat = ALPHA_DEFAULT,
        sigma: Annotated[PositiveFloat, NOISE] = SIGMA_DEFAULT,
        variant: Variant = "paper",
    ) -> None:
        if epsilon > 0.5:
            raise SpecError(
                "epsilon", f"must be in (0, 1/2] (two windows of εN samples); got {epsilon}"
            )
        self.epsilon, self.alpha, self.sigma = float(epsilon), float(alpha), float(sigma)
        self.variant = variant

    @property
    def deterministic(self) -> bool:
        """The paper's index breaks ties by arm order; the authors' code draws."""
        return self.variant == "paper"

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        size, n = rng.size, space.n
        self.n, self.size, self.rng, self.t = n, size, rng, 0
        self.counts = np.zeros((size, n), dtype=np.int64)
        self.window = np.zeros((size, n), dtype=np.int64)
        # A − B, A + B and C − D of the arm's last two windows (module docstring)
        self.diff = np.zeros((size, n))
        self.total = np.zeros((size, n))
        self.weighted = np.zeros((size, n))
        self.pulled_at = np.zeros((size, n))  # t_i: round after the arm's last pull
        # Samples live at the position of their round (K + round − 1); positions 0..K−1 stand
        # for "sample 0" of each arm. Per position: the arm's prefix sums Σ_{l ≤ j} X(l) and
        # Σ_{l ≤ j} l·X(l) up to this sample, and links to the arm's next and previous
        # samples; per arm, cursors at its samples N, N − h and N − 2h. Memory O(R·T), not
        # O(R·K·T).
        width = n + (horizon or INITIAL_CAPACITY)
        self._sums = np.zeros((size, width))
        self._moments = np.zeros((size, width))
        self._next = np.zeros((size, width), dtype=np.int64)
        self._prev = np.zeros((size, width), dtype=np.int64)
        sentinel = np.tile(np.arange(n), (size, 1))
        self._last, self._mid, self._first = sentinel.copy(), sentinel.copy(), sentinel.copy()
        self._rows = np.arange(size)

    def _index(self) -> np.ndarray:
        t = float(self.t)
        h = self.window.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.variant == "paper":
                trend = (h * self.total + t * self.diff - self.weighted) / (h * h)
                log_term = self.alpha * math.log(t)
            else:
                counts = self.counts.astype(float)
                trend = (
                    (2 * h - counts) * self.diff + self.weighted
                    + (self.pulled_at - counts) * self.diff
                ) / h**2  # fmt: skip
                log_term = 4.0 * math.log(t - 1) if t > 1 else -math.log(0.01)
            width = self.sigma * (t - self.counts + h - 1) * np.sqrt(10.0 * log_term / (h * h * h))
            index = trend + width
        empty = np.inf if self.variant == "paper" else 1.0
        return np.where(self.window > 0, index, empty)

    def select(self) -> np.ndarray:
        self.t += 1
        if self.variant == "authors-code":
            if self.t <= 2 * self.n:
                return np.full(self.size, (self.t - 1) % self.n, dtype=np.int64)
            index = self._index()
            ties = index == index.max(axis=1, keepdims=True)
            # uniform among the maxima: the k-th tied arm for k = ⌊u · #ties⌋
            pick = self.rng.integers(ties.sum(axis=1))
            order = np.cumsum(ties, axis=1) - 1
            return np.argmax(ties & (order == pick[:, None]), axis=1)
        return np.argmax(self._index(), axis=1)

    def _grow(self) -> None:
        width = self._sums.shape[1]
        pad = ((0, 0), (0, width))
        self._sums, self._moments = np.pad(self._sums, pad), np.pad(self._moments, pad)
        self._next, self._prev = np.pad(self._next, pad), np.pad(self._prev, pad)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        rows = self._rows
        position = self.n + self.t - 1
        if position >= self._sums.shape[1]:
            self._grow()
        x = np.asarray(feedback.reward, dtype=float)
        n = self.counts[rows, actions] + 1
        last = self._last[rows, actions]
        self._sums[rows, position] = self._sums[rows, last] + x
        self._moments[rows, position] = self._moments[rows, last] + n * x
        self._next[rows, last] = position
        self._prev[rows, position] = last
        self._last[rows, actions] = position
        self.counts[rows, actions] = n
        h = np.floor(self.epsilon * n).astype(np.int64)
        # samples N − h and N − 2h: one step on unless h grew by one (then N − h stays and
        # N − 2h steps back)
        grew = h > self.window[rows, actions]
        mid, first = self._mid[rows, actions], self._first[rows, actions]
        mid = np.where(grew, mid, self._next[rows, mid])
        first = np.where(grew, self._prev[rows, first], self._next[rows, first])
        self._mid[rows, actions], self._first[rows, actions] = mid, first
        s, m = self._sums, self._moments
        s0, s1, s2 = s[rows, position], s[rows, mid], s[rows, first]
        m0, m1, m2 = m[rows, position], m[rows, mid], m[rows, first]
        a, b, c, d = s0 - s1, s1 - s2, m0 - m1, m1 - m2
        self.window[rows, actions] = h
        self.diff[rows, actions] = a - b
        self.total[rows, actions] = a + b
        self.weighted[rows, actions] = c - d
        self.pulled_at[rows, actions] = self.t + 1

    def compiled_step(self) -> CompiledStep | None:
        """The rounds of either variant, one replication at a time (``params``: ε, α, σ); the
        authors' code draws one uniform a round once its 2K round-robin rounds are over."""
        params = np.array([self.epsilon, self.alpha, self.sigma])
        if self.variant == "paper":
            return CompiledStep(_red_init, _red_select, _red_update, params)
        return CompiledStep(_red_init, _red_authors_select, _red_update, params, draws=1,
                            first_draw=2 * self.n + 1)  # fmt: skip


@kernel
def _red_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """One replication's tables (:meth:`RedUCB.reset`, positions ``0 .. k + rounds − 1``):
    per arm its count, window h and cursors at its samples N, N − h and N − 2h (rows of
    ``arms``) and A − B, A + B, C − D, t_i and the authors' index of the round (rows of
    ``windows``); per position the prefix sums and moments and the links to the arm's next
    and previous samples."""
    arms = np.zeros((5, k), dtype=np.int64)
    for i in range(k):  # the cursors start at the arm's "sample 0"
        arms[2, i] = i
        arms[3, i] = i
        arms[4, i] = i
    width = k + rounds
    return arms, np.zeros((5, k)), np.zeros((2, width)), np.zeros((2, width), dtype=np.int64)


@kernel
def _red_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`RedUCB.select` (paper variant) for one replication: ``argmax_i B_i(t)``, +inf
    while h = 0, ties to the lowest arm; the readable form's operations in its order."""
    arms, windows = state[0], state[1]
    time = float(t)
    log_term = params[1] * math.log(time)
    best = 0
    best_value = -math.inf
    for i in range(arms.shape[1]):
        value = math.inf
        if arms[1, i] > 0:
            h = float(arms[1, i])
            trend = (h * windows[1, i] + time * windows[0, i] - windows[2, i]) / (h * h)
            reach = time - float(arms[0, i]) + h - 1.0
            value = trend + params[2] * reach * math.sqrt(10.0 * log_term / (h * h * h))
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _red_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`RedUCB.select` (authors-code variant) for one replication: round robin twice,
    then the mirrored index (1 while h = 0) and the ``k``-th of the ``n`` maxima for
    ``k = min(⌊u · n⌋, n − 1)`` (:meth:`~impactbandits.core.random.BatchRNG.integers`); the
    readable form's operations in its order."""
    arms, windows = state[0], state[1]
    k = arms.shape[1]
    if t <= 2 * k:
        return (t - 1) % k
    time = float(t)
    log_term = 4.0 * math.log(time - 1.0) if time > 1.0 else -math.log(0.01)
    best_value = -math.inf
    for i in range(k):
        value = 1.0
        if arms[1, i] > 0:
            h, count, diff = float(arms[1, i]), float(arms[0, i]), windows[0, i]
            mirrored = (2.0 * h - count) * diff + windows[2, i] + (windows[3, i] - count) * diff
            trend = mirrored / (h * h)
            reach = time - count + h - 1.0
            value = trend + params[2] * reach * math.sqrt(10.0 * log_term / (h * h * h))
        if math.isnan(value):  # NumPy's max is NaN, no arm ties with it: argmax of none
            return 0
        windows[4, i] = value
        best_value = max(best_value, value)
    ties = 0
    for i in range(k):
        if windows[4, i] == best_value:
            ties += 1
    pick = min(int(u * ties), ties - 1)
    for i in range(k):
        if windows[4, i] == best_value:
            if pick == 0:
                return i
            pick -= 1
    return 0


@kernel
def _red_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`RedUCB.update` for one replication: the sample of round ``t`` at position
    k + t − 1, the cursors moved, the two windows' sums."""
    arms, windows, tables, links = state
    position = arms.shape[1] + t - 1
    n = arms[0, arm] + 1
    last = arms[2, arm]
    tables[0, position] = tables[0, last] + reward
    tables[1, position] = tables[1, last] + n * reward
    links[0, last] = position
    links[1, position] = last
    arms[2, arm] = position
    arms[0, arm] = n
    h = math.floor(params[0] * n)
    mid, first = arms[3, arm], arms[4, arm]
    if h > arms[1, arm]:  # samples N − h and N − 2h: N − h stays, N − 2h steps back
        first = links[1, first]
    else:  # both one step on
        mid = links[0, mid]
        first = links[0, first]
    arms[3, arm], arms[4, arm] = mid, first
    a = tables[0, position] - tables[0, mid]
    b = tables[0, mid] - tables[0, first]
    c = tables[1, position] - tables[1, mid]
    d = tables[1, mid] - tables[1, first]
    arms[1, arm] = h
    windows[0, arm] = a - b
    windows[1, arm] = a + b
    windows[2, arm] = c - d
    windows[3, arm] = t + 1.0


class RlessUCB(RedUCB):
    """R-less-UCB (Metelli et al. 2022, §5, Algorithm 2) for restless rising bandits: the
    R-ed-UCB index (module docstring), with the same defaults ε = 1/4, α = 4, σ = 0.1 and the
    same ``variant = "authors-code"``."""
