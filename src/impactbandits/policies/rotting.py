"""Policies for rotting (rested, non-increasing) bandits.

* :class:`SWA` — Sliding Window Average (Levine, Crammer & Mannor 2017, "Rotting bandits",
  NeurIPS, Algorithm 1): play every arm h times, then the arm whose last h rewards have the
  highest average; h = ⌈α (16 σ² T² ln(√2 T) / K²)^{1/3}⌉ (their Theorem 3.1 with the tuning
  factor α; α = 0.2 in Seznec et al.'s experiments). ``doubling = True`` is wSWA, their
  horizon-free wrapper: restarts with T = 1, 2, 4, … .
* :class:`FEWA` — Filtering on Expanding Window Average (Seznec, Locatelli, Carpentier, Lazaric &
  Valko 2019, AISTATS, Algorithm 1): for h = 1, 2, …, keep the arms whose average of their last
  h rewards is within 2c(h, δ_t) of the best, c(h, δ) = √(2σ² ln(1/δ) / h), δ_t = t^{−α}; stop
  at the first h for which a remaining arm has fewer than h samples, and play it (the least
  pulled one).
* :class:`RawUCB` — Rotting Adaptive Window UCB (Seznec, Ménard, Lazaric & Valko 2020,
  AISTATS): play ``argmax_i min_{h ≤ N_i} [ μ̂_i^h + c(h, δ_t) ]``.

Windows: ``grid = 1`` uses every window h = 1, …, N_i (the papers' algorithms, O(K·T) per
round); ``grid = m > 1`` only the windows ⌈m^j⌉ (the windows of the authors' efficient versions
EFF-FEWA and EFF-RAW-UCB, O(K log T) per round). Averages are exact averages of the last h
rewards (per-arm prefix sums); the authors' efficient code (SMPyBandits ``EFF_FEWA`` /
``EFF_RAWUCB``) instead refreshes a window's statistic only when it fills (the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/).
Defaults are the papers' experimental settings (SMPyBandits ``Experiment/Seznec19a_Fig2``): FEWA
α = 0.06, RAW-UCB α = 1.4, σ = 1, ``grid = 1.1``; wSWA α = 0.2. t in δ_t counts the rounds
played so far, as in the authors' code. Ties go to the lowest arm index.

FEWA and RAW-UCB have compiled steps (:mod:`impactbandits.core.compiled`) on the same per-arm
prefix sums, with the readable forms' operations.
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
from impactbandits.errors import SpecError
from impactbandits.params import NOISE, WINDOW, PositiveFloat, Size

__all__ = ["FEWA", "SWA", "RawUCB"]

#: The window grid m: 1 (every window) or more.
Grid = Annotated[float, Field(ge=1.0)]
#: Initial capacity (samples per arm) of the prefix-sum tables; doubled when full.
INITIAL_CAPACITY = 256


def window_grid(limit: int, grid: float) -> np.ndarray:
    """Windows 1 … ``limit``: all of them for ``grid = 1``, else the distinct ⌈grid^j⌉,
    j = 0, 1, … (1 always first)."""
    if grid <= 1.0:
        return np.arange(1, limit + 1)
    out = {1}
    power = 1.0
    while power <= limit:
        out.add(math.ceil(power - 1e-9))
        power *= grid
    return np.array(sorted(w for w in out if w <= limit))


class _WindowAverages(Policy):
    """Per-arm prefix sums of the rewards, (R, K, capacity + 1), for averages of the last h."""

    deterministic = True

    def __init__(self, alpha: float, sigma: float, grid: float) -> None:
        if grid < 1:
            raise SpecError("grid", f"must be >= 1 (1: every window); got {grid}")
        self.alpha, self.sigma, self.grid = float(alpha), float(sigma), float(grid)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n, self.size, self.t = space.n, rng.size, 0
        self.counts = np.zeros((self.size, self.n), dtype=np.int64)
        self._capacity = INITIAL_CAPACITY
        self._sums = np.zeros((self.size, self.n, self._capacity + 1))
        self._rows = np.arange(self.size)
        self._windows = window_grid(self._capacity, self.grid)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        rows = self._rows
        n = self.counts[rows, actions] + 1
        if n.max() > self._capacity:
            self._capacity *= 2
            pad = self._capacity + 1 - self._sums.shape[2]
            self._sums = np.pad(self._sums, ((0, 0), (0, 0), (0, pad)))
            self._windows = window_grid(self._capacity, self.grid)
        x = np.asarray(feedback.reward, dtype=float)
        self._sums[rows, actions, n] = self._sums[rows, actions, n - 1] + x
        self.counts[rows, actions] = n
        self.t += 1

    def _averages(self) -> tuple[np.ndarray, np.ndarray]:
        """The windows up to the largest count, and ``(R, K, W)`` averages of each arm's last
        h rewards for every window h (NaN with fewer than h)."""
        counts = self.counts
        windows = self._windows[self._windows <= max(int(counts.max()), 1)]
        total = np.take_along_axis(self._sums, counts[:, :, None], axis=2)
        start = counts[:, :, None] - windows[None, None, :]
        first = np.take_along_axis(self._sums, np.maximum(start, 0), axis=2)
        return windows, np.where(start >= 0, (total - first) / windows, np.nan)

    def _log_term(self) -> float:
        """ln(1/δ_t) = α ln t, t the rounds played so far (at least 1)."""
        return self.alpha * math.log(max(self.t, 1))


class FEWA(_WindowAverages):
    """FEWA (Seznec et al. 2019, Algorithm 1; module docstring). Parameters: ``alpha`` α
    (δ_t = t^{−α}; 0.06 in their experiments, 4 in SMPyBandits' FEWA), ``sigma`` σ (sub-Gaussian
    noise), ``grid`` m (1: every window, the paper's FEWA; default 1.1, EFF-FEWA's windows).
    Anytime."""

    def __init__(
        self,
        alpha: PositiveFloat = 0.06,
        sigma: Annotated[PositiveFloat, NOISE] = 1.0,
        grid: Grid = 1.1,
    ) -> None:
        super().__init__(alpha, sigma, grid)

    def select(self) -> np.ndarray:
        windows, averages = self._averages()
        widths = 2.0 * np.sqrt(2.0 * self.sigma**2 * self._log_term() / windows)
        return _fewa_choices(averages, self.counts, windows, widths)

    def compiled_step(self) -> CompiledStep | None:
        """One replication at a time, deciding as soon as it can (``params``: α, σ², m)."""
        params = np.array([self.alpha, self.sigma**2, self.grid])
        return CompiledStep(_fewa_init, _fewa_select, _fewa_update, params)


@kernel(inline=True)
def _window_table(grid: float, rounds: int) -> np.ndarray:
    """:func:`window_grid` up to ``rounds`` (the same operations)."""
    windows = np.empty(rounds, dtype=np.int64)
    size = 0
    if grid <= 1.0:
        for h in range(1, rounds + 1):
            windows[h - 1] = h
        size = rounds
    else:
        windows[0] = 1
        size = 1
        power = 1.0
        while power <= rounds:
            h = math.ceil(power - 1e-9)
            if h > windows[size - 1] and h <= rounds:
                windows[size] = h
                size += 1
            power *= grid
    return windows[:size]


@kernel
def _fewa_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Pull counts, the prefix sums of each arm's rewards, the active-arm mask, and
    :func:`window_grid` up to ``rounds``."""
    windows = _window_table(params[2], rounds)
    counts = np.zeros(k, dtype=np.int64)
    return counts, np.zeros((k, rounds + 1)), np.empty(k, dtype=np.bool_), windows


@kernel
def _fewa_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    counts, sums = state[0], state[1]
    n = counts[arm] + 1
    sums[arm, n] = sums[arm, n - 1] + reward
    counts[arm] = n


@kernel
def _fewa_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`FEWA.select` for one replication: the same filter as :func:`_fewa_choices`, each
    window's averages and width computed with the readable form's operations."""
    counts, sums, active, windows = state
    arms = counts.size
    most = max(counts.max(), 1)
    log_term = params[0] * math.log(max(t - 1, 1))
    for k in range(arms):
        active[k] = True
    choice = -1
    for j in range(windows.size):
        h = windows[j]
        if h > most:
            break
        remaining = 0
        for k in range(arms):
            if active[k]:
                remaining += 1
        best_count = np.iinfo(np.int64).max
        for k in range(arms):
            playable = active[k] and (remaining == 1 or counts[k] < h)
            if playable and counts[k] < best_count:
                best_count = counts[k]
                choice = k
        if choice >= 0:
            break
        width = 2.0 * math.sqrt(2.0 * params[1] * log_term / h)
        best = -np.inf
        for k in range(arms):
            if active[k] and counts[k] >= h:
                average = (sums[k, counts[k]] - sums[k, counts[k] - h]) / h
                if average > best:
                    best = average
        for k in range(arms):
            if active[k]:
                average = np.nan
                if counts[k] >= h:
                    average = (sums[k, counts[k]] - sums[k, counts[k] - h]) / h
                if not (average >= best - width):
                    active[k] = False
    if choice < 0:  # past the largest window every active arm is short: least pulled
        best_count = np.iinfo(np.int64).max
        for k in range(arms):
            if active[k] and counts[k] < best_count:
                best_count = counts[k]
                choice = k
    return choice


def _fewa_choices(
    averages: np.ndarray, counts: np.ndarray, windows: np.ndarray, widths: np.ndarray
) -> np.ndarray:
    """FEWA's filter over the batch (:func:`_fewa_select`, FEWA's compiled step, does the same per
    replication): for each window in turn, an active arm with fewer samples than the window, or a
    last arm standing, is played (least pulled, lowest index); otherwise arms more than
    ``widths[j]`` below the best average leave."""
    size = counts.shape[0]
    active = np.ones(counts.shape, dtype=bool)
    choice = np.full(size, -1, dtype=np.int64)
    never = np.iinfo(np.int64).max
    for j, h in enumerate(windows):
        undecided = choice < 0
        if not undecided.any():
            break
        short = active & (counts < h)
        alone = active.sum(axis=1) == 1
        pick = undecided & (short.any(axis=1) | alone)
        if pick.any():
            pool = np.where(alone[:, None], active, short)
            choice = np.where(pick, np.argmin(np.where(pool, counts, never), axis=1), choice)
        means = averages[:, :, j]
        best = np.max(np.where(active, means, -np.inf), axis=1, keepdims=True)
        keep = active & (means >= best - widths[j])
        active = np.where((choice < 0)[:, None], keep, active)
    # past the largest window every active arm is short of samples: the least pulled one
    return np.where(choice < 0, np.argmin(np.where(active, counts, never), axis=1), choice)


class RawUCB(_WindowAverages):
    """RAW-UCB (Seznec et al. 2020; module docstring): each arm's index is the smallest upper
    confidence bound over its windows. Parameters: ``alpha`` α (δ_t = t^{−α}; 1.4 in their
    experiments), ``sigma`` σ, ``grid`` m (1: every window; default 1.1). Anytime."""

    def __init__(
        self,
        alpha: PositiveFloat = 1.4,
        sigma: Annotated[PositiveFloat, NOISE] = 1.0,
        grid: Grid = 1.1,
    ) -> None:
        super().__init__(alpha, sigma, grid)

    def select(self) -> np.ndarray:
        fresh = self.counts == 0
        if fresh.any(axis=1).all():
            return np.argmax(fresh, axis=1)
        windows, averages = self._averages()
        ucb = averages + np.sqrt(2.0 * self.sigma**2 * self._log_term() / windows)
        with np.errstate(invalid="ignore"):
            index = np.nanmin(np.where(np.isnan(ucb), np.inf, ucb), axis=2)
        return np.where(fresh.any(axis=1), np.argmax(fresh, axis=1), np.argmax(index, axis=1))

    def compiled_step(self) -> CompiledStep | None:
        """One replication at a time (``params``: α, σ², m), FEWA's tables."""
        params = np.array([self.alpha, self.sigma**2, self.grid])
        return CompiledStep(_raw_init, _raw_select, _fewa_update, params)


@kernel
def _raw_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Pull counts, the prefix sums of each arm's rewards, room for the round's widths, and
    :func:`window_grid` up to ``rounds``."""
    windows = _window_table(params[2], rounds)
    counts = np.zeros(k, dtype=np.int64)
    return counts, np.zeros((k, rounds + 1)), np.empty(windows.size), windows


@kernel
def _raw_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`RawUCB.select` for one replication: the first arm never pulled, else
    ``argmax_i min_{h ≤ N_i} [μ̂_i^h + √(2σ² ln(1/δ_t) / h)]`` (ties to the lowest arm), each
    term with the readable form's operations. An arm's minimum is left as soon as it is no
    larger than the best index so far (it can neither beat nor, being later, tie it)."""
    counts, sums, widths, windows = state
    arms = counts.size
    for i in range(arms):
        if counts[i] == 0:
            return i
    most = counts.max()
    scale = 2.0 * params[1] * (params[0] * math.log(max(t - 1, 1)))
    for j in range(windows.size):
        if windows[j] > most:
            break
        widths[j] = math.sqrt(scale / windows[j])
    best = 0
    best_value = -math.inf
    for i in range(arms):
        n = counts[i]
        index = math.inf
        for j in range(windows.size):
            h = windows[j]
            if h > n or index <= best_value:
                break
            value = (sums[i, n] - sums[i, n - h]) / h + widths[j]
            if value < index:
                index = value
        if index > best_value:
            best, best_value = i, index
    return best


#: SWA's tuning factor α: its window h grows linearly in it and is kept per arm and replication.
SWA_ALPHA = Size(
    100.0,
    "the window's tuning factor",
    "h = α·(16σ²T² ln(√2 T)/K²)^(1/3) plays of every arm are kept per replication (Levine et al. "
    "Thm 3.1 take α = 0.2): h grows linearly in α",
)


class SWA(Policy):
    """SWA (Levine et al. 2017, Algorithm 1; module docstring). Parameters: ``window`` h
    (default: from ``alpha``, ``sigma`` and the horizon), ``alpha`` (0.2), ``sigma`` (1),
    ``doubling`` (wSWA: horizon-free restarts at T = 1, 2, 4, …). Every arm is played until it
    has h samples (lowest index first), then the best average of the last h."""

    deterministic = True

    def __init__(
        self,
        window: Annotated[int | None, Field(gt=0), WINDOW] = None,
        alpha: Annotated[PositiveFloat, SWA_ALPHA] = 0.2,
        sigma: Annotated[PositiveFloat, NOISE] = 1.0,
        doubling: bool = False,
    ) -> None:
        if window is not None and doubling:
            raise SpecError("window", "a fixed window cannot be used with doubling")
        self.window, self.alpha, self.sigma, self.doubling = window, alpha, sigma, doubling

    @property
    def requires_horizon(self) -> bool:
        return self.window is None and not self.doubling

    def _h(self, horizon: int) -> int:
        if self.window is not None:
            return int(self.window)
        inner = 16 * self.sigma**2 * horizon**2 * math.log(math.sqrt(2) * horizon) / self.n**2
        return max(1, math.ceil(self.alpha * max(inner, 0.0) ** (1 / 3)))

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n, self.size = space.n, rng.size
        if self.requires_horizon and horizon is None:
            raise SpecError("window", "is derived from the horizon; give it, or doubling = true")
        self._phase_length = 1 if self.doubling else (horizon or 1)
        self._restart()

    def _restart(self) -> None:
        self.h = self._h(self._phase_length)
        self._played = 0
        self._last = np.zeros((self.size, self.n, self.h))  # ring buffer of the last h
        self._counts = np.zeros((self.size, self.n), dtype=np.int64)
        self._rows = np.arange(self.size)

    def select(self) -> np.ndarray:
        short = self._counts < self.h
        if short.any():
            # arms below h samples come first (the same in every replication: play in turn)
            return np.where(short.any(axis=1), np.argmax(short, axis=1), 0)
        return np.argmax(self._last.sum(axis=2), axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        rows = self._rows
        slot = self._counts[rows, actions] % self.h
        self._last[rows, actions, slot] = feedback.reward
        self._counts[rows, actions] += 1
        self._played += 1
        if self.doubling and self._played >= self._phase_length:
            self._phase_length *= 2
            self._restart()
