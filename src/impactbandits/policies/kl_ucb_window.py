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
same floating-point operations and give the same bits. Deterministic.
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import NonNegativeFloat
from impactbandits.policies.kl_ucb import _bounds_many, kl_upper_bound

__all__ = ["SWKLUCB_SIGMA", "SWKLUCB_WINDOW", "SlidingWindowKLUCB"]

#: σ of Metelli et al.'s SW-KL-UCB window ⌈σ^{−4/5}⌉ (module docstring).
SWKLUCB_SIGMA = 0.001
#: Default window τ = ⌈σ^{−4/5}⌉ = ⌈251.19⌉ for σ = 0.001.
SWKLUCB_WINDOW = 252


def _level(plays: int, c: float) -> float:
    """ln m + c ln max(1, ln m) for m = ``plays`` = min(t, τ) ≥ 1 (C library ``log``)."""
    log_m = math.log(plays)
    return log_m + c * math.log(max(log_m, 1.0))


class SlidingWindowKLUCB(Policy):
    """SW-KL-UCB (module docstring): Bernoulli KL-UCB on the last τ = ``window`` plays
    (default 252, Metelli et al.; ``None``: ⌊4√(T ln T)⌋, horizon-aware), level ln min(t, τ) +
    ``c`` ln ln min(t, τ) (default c = 0)."""

    deterministic = True

    def __init__(
        self,
        window: Annotated[int | None, Field(gt=0)] = SWKLUCB_WINDOW,
        c: NonNegativeFloat = 0.0,
    ) -> None:
        if window is not None and window < 1:
            raise SpecError("window", f"must be a positive integer, got {window}")
        self.window = window
        self.c = float(c)

    @property
    def requires_horizon(self) -> bool:
        return self.window is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        if self.window is None:
            if horizon is None:
                raise SpecError("window", "this setting is derived from the horizon; give it")
            T = horizon
            self._tau = max(1, math.floor(4.0 * math.sqrt(T * math.log(max(T, 2)))))
        else:
            self._tau = int(self.window)
        self.n, self.size = space.n, rng.size
        self.t = 0
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self._offsets = np.arange(rng.size) * space.n
        self._ring_actions = np.zeros((rng.size, self._tau), dtype=np.int64)
        self._ring_rewards = np.zeros((rng.size, self._tau))

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

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        slot = (self.t - 1) % self._tau
        flat_counts, flat_sums = self.counts.reshape(-1), self.sums.reshape(-1)
        if self.t > self._tau:  # the play of round t − τ leaves the window
            old = self._offsets + self._ring_actions[:, slot]
            flat_counts[old] -= 1.0
            flat_sums[old] -= self._ring_rewards[:, slot]
        flat = self._offsets + actions
        flat_counts[flat] += 1.0
        flat_sums[flat] += reward
        self._ring_actions[:, slot] = actions
        self._ring_rewards[:, slot] = reward

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self.c, self._tau])
        return CompiledStep(_ring_init, _swklucb_select, _ring_update, params)


@kernel
def _ring_init(params: np.ndarray, k: int, rounds: int):  # type: ignore[no-untyped-def]
    """Window counts and sums, and the ring of the last τ = ``params[1]`` plays."""
    window = int(params[1])
    return np.zeros(k), np.zeros(k), np.zeros(window, dtype=np.int64), np.zeros(window)


@kernel
def _swklucb_select(state, params: np.ndarray, t: int, u: float) -> int:  # type: ignore[no-untyped-def]
    """:meth:`SlidingWindowKLUCB.select` for one replication (``params``: c, τ)."""
    counts, sums = state[0], state[1]
    plays = min(t - 1, int(params[1]))
    if plays == 0:
        return 0
    log_m = math.log(plays)
    level = log_m + params[0] * math.log(max(log_m, 1.0))
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        value = math.inf  # absent from the window: played first
        if counts[i] > 0:
            value = kl_upper_bound(sums[i] / counts[i], counts[i], level)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _ring_update(state, params: np.ndarray, t: int, arm: int, reward: float) -> None:  # type: ignore[no-untyped-def]
    """:meth:`SlidingWindowKLUCB.update`: the ring buffer of the last τ plays."""
    counts, sums, ring_actions, ring_rewards = state
    window = ring_actions.size
    slot = (t - 1) % window
    if t > window:  # the play of round t − τ leaves the window
        old = ring_actions[slot]
        counts[old] -= 1.0
        sums[old] -= ring_rewards[slot]
    counts[arm] += 1.0
    sums[arm] += reward
    ring_actions[slot] = arm
    ring_rewards[slot] = reward
