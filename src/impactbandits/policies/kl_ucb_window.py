"""SW-KL-UCB: the KL-UCB index on the statistics of the last τ plays.

KL-UCB (Garivier & Cappé 2011; :mod:`~impactbandits.policies.kl_ucb`) with Garivier & Moulines'
(2011, "On upper-confidence bound policies for switching bandit problems", ALT, §4) sliding
window, as Metelli, Trovò, Pirola & Restelli (2022, "Stochastic rising bandits", ICML) use it as
a baseline. With N_t(τ, i) the plays of arm i among the last τ rounds and X̄_t(τ, i) their mean
reward, after t plays the next arm is

    argmax_i max{q ≥ X̄_t(τ, i) : N_t(τ, i) · d(X̄_t(τ, i), q) ≤ ln m + c ln ln m},  m = min(t, τ),

d the Bernoulli divergence (rewards in [0, 1]), arms absent from the window first (lowest index
first, so the first K rounds play every arm once), ties to the lowest arm. The level's ln min(t, τ)
is SW-UCB's (G&M §4, :class:`~impactbandits.policies.nonstationary.SlidingWindowUCB`: t counts
the plays so far); ``ln ln`` is taken of max(1, ·), as in KL-UCB.

Defaults and where they come from:

* ``c = 0``: Garivier & Cappé's recommendation for practice (also this library's KL-UCB
  default). Metelli et al.'s code uses c = 3 (``src/algorithms/SW_KLUCB.py``,
  albertometelli/stochastic-rising-bandits@2b49e82) — pass ``c = 3`` for their setting.
* ``window = 252``: Metelli et al.'s τ = ⌈σ^{−4/5}⌉ with σ = 0.001 (same file: ``sigma =
  0.001``, ``tau = ceil(sigma ** (-4/5))``), a window independent of the horizon, so the policy
  is anytime. The σ^{−4/5} scaling is that of a sliding-window KL-UCB for means drifting at
  rate σ per round (Combes & Proutière 2014, "Unimodal bandits: regret lower bounds and optimal
  algorithms", ICML — not checked here beyond the abstract). ``window = None`` takes SW-UCB's
  horizon-derived τ = ⌊4√(T ln T)⌋ instead (Lindner et al.'s setting; horizon-aware).

Where Metelli et al.'s code departs from the algorithm we do not follow it: it binarizes every
reward by a Bernoulli draw (we use the rewards as they are, as KL-UCB does), and when a play
leaves the window it subtracts that play's outcome from the *currently* played arm rather than
from the arm that was played then.

The window is a ring buffer of the last τ plays (O(1) amortised per round for the statistics,
O(K) bisections for the index). Bounds come from :func:`~impactbandits.policies.kl_ucb.
kl_upper_bound` (a fixed number of halvings), so the readable form and the compiled step do the
same floating-point operations and give the same bits. The compiled step takes the argmax with
KL-UCB's early cut-offs and per-arm memos (:func:`~impactbandits.policies.kl_ucb.kl_argmax`,
exact): once the window is full the level no longer moves, so an arm whose window statistics
did not change replays its last bisection from memory, and only the arms that entered or left
the window are bisected again. Deterministic.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.params import WINDOW, NonNegativeFloat
from impactbandits.policies.kl_ucb import _bounds_many, kl_argmax, kl_memo_init
from impactbandits.policies.nonstationary import SlidingWindowUCB, window_init, window_update

__all__ = ["SWKLUCB_SIGMA", "SWKLUCB_WINDOW", "SlidingWindowKLUCB"]

#: σ of Metelli et al.'s SW-KL-UCB window ⌈σ^{−4/5}⌉ (module docstring).
SWKLUCB_SIGMA = 0.001
#: Default window τ = ⌈σ^{−4/5}⌉ = ⌈251.19⌉ for σ = 0.001.
SWKLUCB_WINDOW = 252


def _level(plays: int, c: float) -> float:
    """ln m + c ln max(1, ln m) for m = ``plays`` = min(t, τ) ≥ 1 (C library ``log``)."""
    log_m = math.log(plays)
    return log_m + c * math.log(max(log_m, 1.0))


class SlidingWindowKLUCB(SlidingWindowUCB):
    """SW-KL-UCB (module docstring): Bernoulli KL-UCB on the last τ = ``window`` plays
    (default 252, Metelli et al.; ``None``: ⌊4√(T ln T)⌋, horizon-aware), level ln min(t, τ) +
    ``c`` ln ln min(t, τ) (default c = 0). The window's statistics are SW-UCB's ring buffer."""

    def __init__(
        self,
        window: Annotated[int | None, Field(gt=0), WINDOW] = SWKLUCB_WINDOW,
        c: NonNegativeFloat = 0.0,
    ) -> None:
        super().__init__(window)
        self.c = float(c)

    def select(self) -> np.ndarray:
        self.t += 1
        plays = min(self.t - 1, self._tau)
        if plays == 0:
            return np.zeros(self.size, dtype=np.int64)
        counts = self.counts
        present = counts > 0
        safe = np.where(present, counts, 1.0)
        level = np.full(counts.shape, _level(plays, self.c))
        bound = _bounds_many(self.sums / safe, safe, level)
        return np.argmax(np.where(present, bound, np.inf), axis=1)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.c, self._tau])
        return CompiledStep(_swklucb_init, _swklucb_select, _swklucb_update, params)


@kernel
def _swklucb_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """SW-UCB's window statistics and ring (:func:`~impactbandits.policies.nonstationary.
    window_init`), then the scratch of :func:`~impactbandits.policies.kl_ucb.kl_argmax`."""
    counts, sums, ring_actions, ring_rewards = window_init(params, k, rounds)
    levels, mids, vals, seen, bisection, last = kl_memo_init(k)
    return counts, sums, ring_actions, ring_rewards, levels, mids, vals, seen, bisection, last


@kernel
def _swklucb_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """SW-UCB's ring-buffer update (:func:`~impactbandits.policies.nonstationary.
    window_update`) on the window part of the state."""
    window_update((state[0], state[1], state[2], state[3]), params, t, arm, reward)


@kernel
def _swklucb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SlidingWindowKLUCB.select` for one replication (``params``: c, τ): arms absent
    from the window first, then the argmax of the bounds by
    :func:`~impactbandits.policies.kl_ucb.kl_argmax`."""
    counts, sums, levels = state[0], state[1], state[4]
    plays = min(t - 1, int(params[1]))
    if plays == 0:
        return 0
    log_m = math.log(plays)
    levels[:] = log_m + params[0] * math.log(max(log_m, 1.0))
    return kl_argmax(counts, sums, levels, state[5], state[6], state[7], state[8], state[9])
