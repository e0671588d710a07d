"""Bandit policies for non-stationary rewards, as used as baselines by Lindner et al. (2021, §5).

* :class:`DiscountedUCB` — D-UCB (Garivier & Moulines 2011, §3); O(K) per round by discounting
  the statistics in place, never by recomputing sums over the history.
* :class:`UCB` — D-UCB with discount 1 (Lindner et al.'s "UCB"), ξ = 0.6.
* :class:`SlidingWindowUCB` — SW-UCB (Garivier & Moulines 2011, §4); O(1) amortised per round
  with a ring buffer of the last τ plays.
* :class:`RExp3` — Rexp3 (Besbes, Gur & Zeevi 2014, §4): EXP3 restarted every Δ rounds.

Defaults are the authors' settings (the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/): ξ = 0.6, B = 1, D-UCB discount
1 − 1/(4√T), SW-UCB window ⌊4√(T ln T)⌋, Rexp3 variation budget V = 2.

``variant = "authors-code"`` reproduces Lindner et al.'s implementation
(david-lindner/single-peaked-bandits@8e1dd52) where it departs from Garivier & Moulines:

* **stale indices** — only the pulled arm's index is recomputed after each round; every other
  arm keeps the index computed when it was last pulled, although its bonus (through log n and,
  for D-UCB, the discount) has changed since. G&M recompute every index every round.
* **D-UCB padding** ``B √(ξ log n / N)`` instead of G&M's ``2B √(ξ log n / N)`` (their §3;
  SW-UCB's padding is ``B √(…)`` in both).

With both, the authors' noise-free pull counts are reproduced exactly (the fidelity ledger
gives the effect on regret).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import (
    Variant,
    kept_argmax,
    refresh_stale,
    stale_arms,
    stale_init,
)
from impactbandits.errors import SpecError
from impactbandits.params import WINDOW, PositiveFloat
from impactbandits.policies.classic import (
    EXP3,
    counts_init,
    exp3_authors_init,
    exp3_authors_update,
    exp3_draw,
    exp3_update,
)

__all__ = ["UCB", "DiscountedUCB", "RExp3", "SlidingWindowUCB", "window_init", "window_update"]

# tests/test_authors_code.py checks the reproduced noise-free pull counts against the authors'
# code.

#: Exploration constant ξ of D-UCB / SW-UCB used by Lindner et al.
XI_DEFAULT = 0.6
#: Reward bound B of D-UCB / SW-UCB (rewards in [0, B]).
B_DEFAULT = 1.0
#: Variation budget V_T of Rexp3 used by Lindner et al.
VARIATION_BUDGET_DEFAULT = 2.0


def _need_horizon(name: str, horizon: int | None) -> int:
    if horizon is None:
        raise SpecError(name, "this setting is derived from the horizon; give it explicitly")
    return horizon


class DiscountedUCB(Policy):
    """D-UCB (Garivier & Moulines 2011, "On upper-confidence bound policies for switching bandit
    problems", §3).

    With discounted counts ``N_t(γ, i) = Σ_s γ^{t−s} 1{I_s = i}`` and discounted means
    ``X̄_t(γ, i)``, play each arm once, then ``argmax_i X̄_t(γ, i) + 2B √(ξ log n_t(γ) / N_t(γ, i))``
    with ``n_t(γ) = Σ_i N_t(γ, i)``. Defaults: ξ = 0.6, B = 1, and ``discount = None`` meaning
    γ = 1 − 1/(4√T) (Lindner et al.; horizon-aware); a fixed discount makes it anytime.
    ``variant = "authors-code"``: stale indices and padding ``B √(…)`` (module docstring).
    """

    deterministic = True

    def __init__(
        self,
        discount: Annotated[float | None, Field(gt=0.0, le=1.0)] = None,
        xi: PositiveFloat = XI_DEFAULT,
        b: PositiveFloat = B_DEFAULT,
        variant: Variant = "paper",
    ) -> None:
        if discount is not None and discount > 1:
            raise SpecError("discount", f"must be in (0, 1], got {discount}")
        self.discount, self.xi, self.b = discount, float(xi), float(b)
        self.variant = variant
        self._padding = (2.0 if variant == "paper" else 1.0) * self.b

    @property
    def requires_horizon(self) -> bool:
        return self.discount is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        if self.discount is None:
            self._gamma = 1.0 - 1.0 / (4.0 * math.sqrt(_need_horizon("discount", horizon)))
        else:
            self._gamma = float(self.discount)
        self.n = space.n
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self._offsets = np.arange(rng.size) * space.n
        self.t = 0
        self.size = rng.size
        self._index = np.zeros((rng.size, space.n)) if self.variant == "authors-code" else None
        self._last: np.ndarray | None = None

    def select(self) -> np.ndarray:
        self.t += 1
        if self.t <= self.n:
            return np.full(self.size, self.t - 1, dtype=np.int64)
        # a left-to-right sum (cumsum), as the compiled loop adds (impactbandits.kernels)
        total = np.cumsum(self.counts, axis=1)[:, -1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = self._padding * np.sqrt(self.xi * ops.log(total) / self.counts)
            index = np.where(self.counts > 0, self.sums / self.counts + bonus, np.inf)
        if self._index is not None:
            index = refresh_stale(self._index, index, None if self.t == self.n + 1 else self._last)
        return np.argmax(index, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self._last = actions
        if self._gamma != 1.0:
            self.counts *= self._gamma
            self.sums *= self._gamma
        flat = self._offsets + actions
        self.counts.reshape(-1)[flat] += 1.0
        self.sums.reshape(-1)[flat] += feedback.reward

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (``params``: padding, ξ, γ); the
        authors-code variant keeps its stale indices in the state."""
        params = np.array([self._padding, self.xi, self._gamma])
        if self.variant == "authors-code":
            return CompiledStep(_ducb_authors_init, _ducb_authors_select, _ducb_authors_update,
                                params)  # fmt: skip
        return CompiledStep(counts_init, _ducb_select, _ducb_update, params)


@kernel(inline=True)
def padded_value(count: float, total: float, padding: float, numerator: float) -> float:
    """One arm's ``total/count + padding·sqrt(numerator/count)``, +inf with no (window)
    count."""
    if count > 0:
        return total / count + padding * math.sqrt(numerator / count)
    return math.inf


@kernel(inline=True)
def padded_index(counts: np.ndarray, sums: np.ndarray, padding: float, numerator: float) -> int:
    """``argmax sums/counts + padding·sqrt(numerator/counts)``, arms with no (window) count
    first (+inf), ties to the lowest index: D-UCB's and SW-UCB's ``select`` for one
    replication."""
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        value = padded_value(counts[i], sums[i], padding, numerator)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel(inline=True)
def _ducb_numerator(counts: np.ndarray, xi: float) -> float:
    """``ξ log n_t(γ)``, the discounted counts added left to right (the readable cumsum)."""
    total = 0.0
    for i in range(counts.size):
        total += counts[i]
    return xi * math.log(total)


@kernel
def _ducb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`DiscountedUCB.select` (``params``: padding 2B, ξ, γ)."""
    counts, sums = state[0], state[1]
    k = counts.size
    if t <= k:
        return t - 1
    return padded_index(counts, sums, params[0], _ducb_numerator(counts, params[1]))


@kernel
def _ducb_authors_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Counts and sums, the kept indices and the arm pulled last round."""
    kept, pulled = stale_init(k)
    return np.zeros(k), np.zeros(k), kept, pulled


@kernel
def _ducb_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`DiscountedUCB.select` of the authors-code variant (``params``: padding B, ξ,
    γ): after the initial pulls, every index once, then only the pulled arm's."""
    counts, sums, kept, pulled = state
    k = counts.size
    if t <= k:
        return t - 1
    numerator = _ducb_numerator(counts, params[1])
    first, stop = stale_arms(kept, pulled, t == k + 1)
    for i in range(first, stop):
        kept[i] = padded_value(counts[i], sums[i], params[0], numerator)
    return kept_argmax(kept)


@kernel
def _ducb_authors_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    _ducb_update(state, params, t, arm, reward)
    state[3][0] = arm


@kernel
def _ducb_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    counts, sums = state[0], state[1]
    if params[2] != 1.0:
        for i in range(counts.size):
            counts[i] *= params[2]
            sums[i] *= params[2]
    counts[arm] += 1.0
    sums[arm] += reward


class UCB(DiscountedUCB):
    """ "UCB" of Lindner et al. (2021, §5): D-UCB with discount 1, i.e.
    ``argmax_i X̄_i + 2B √(ξ log t / N_i)`` with ξ = 0.6, B = 1. Anytime.
    ``variant = "authors-code"``: the authors' ``UCB`` (their D-UCB with γ = 1), i.e. stale
    indices and padding ``B √(ξ log t / N_i)`` — the version behind their Figure 11."""

    def __init__(
        self,
        xi: PositiveFloat = XI_DEFAULT,
        b: PositiveFloat = B_DEFAULT,
        variant: Variant = "paper",
    ) -> None:
        super().__init__(discount=1.0, xi=xi, b=b, variant=variant)


class SlidingWindowUCB(Policy):
    """SW-UCB (Garivier & Moulines 2011, §4).

    Statistics over the last τ plays: ``argmax_i X̄_t(τ, i) + B √(ξ log min(t, τ) / N_t(τ, i))``,
    arms absent from the window first. Defaults: ξ = 0.6, B = 1, ``window = None`` meaning
    τ = ⌊4√(T ln T)⌋ (Lindner et al.; horizon-aware). O(1) amortised per round: a ring buffer
    adds the new play and removes the one leaving the window. ``variant = "authors-code"``:
    stale indices (module docstring).
    """

    deterministic = True

    def __init__(
        self,
        window: Annotated[int | None, Field(gt=0), WINDOW] = None,
        xi: PositiveFloat = XI_DEFAULT,
        b: PositiveFloat = B_DEFAULT,
        variant: Variant = "paper",
    ) -> None:
        self.window, self.xi, self.b = window, float(xi), float(b)
        self.variant = variant

    @property
    def requires_horizon(self) -> bool:
        return self.window is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        if self.window is None:
            T = _need_horizon("window", horizon)
            self._tau = max(1, math.floor(4.0 * math.sqrt(T * math.log(max(T, 2)))))
        else:
            self._tau = int(self.window)
        self.n, self.size = space.n, rng.size
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self._offsets = np.arange(rng.size) * space.n
        self._actions = np.zeros((rng.size, self._tau), dtype=np.int64)
        self._rewards = np.zeros((rng.size, self._tau))
        self.t = 0
        self._index = np.zeros((rng.size, space.n)) if self.variant == "authors-code" else None
        self._last: np.ndarray | None = None

    def select(self) -> np.ndarray:
        self.t += 1
        plays = min(self.t - 1, self._tau)
        if plays == 0:
            return np.zeros(self.size, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = self.b * np.sqrt(self.xi * math.log(plays) / self.counts)
            index = np.where(self.counts > 0, self.sums / self.counts + bonus, np.inf)
        if self._index is not None and self.t > self.n:
            # the authors' code pulls every arm once, then refreshes only the pulled arm
            index = refresh_stale(self._index, index, None if self.t == self.n + 1 else self._last)
        return np.argmax(index, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self._last = actions
        slot = (self.t - 1) % self._tau
        flat_counts, flat_sums = self.counts.reshape(-1), self.sums.reshape(-1)
        if self.t > self._tau:  # the play of round t − τ leaves the window
            old = self._offsets + self._actions[:, slot]
            flat_counts[old] -= 1.0
            flat_sums[old] -= self._rewards[:, slot]
        flat = self._offsets + actions
        flat_counts[flat] += 1.0
        flat_sums[flat] += feedback.reward
        self._actions[:, slot] = actions
        self._rewards[:, slot] = feedback.reward

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (``params``: B, ξ, τ); the authors-code
        variant keeps its stale indices in the state."""
        params = np.array([self.b, self.xi, self._tau])
        if self.variant == "authors-code":
            return CompiledStep(_swucb_authors_init, _swucb_authors_select,
                                _swucb_authors_update, params)  # fmt: skip
        return CompiledStep(window_init, _swucb_select, window_update, params)


@kernel
def window_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Window counts and sums, and the ring of the last τ plays (τ: the last parameter, for
    every sliding-window index that shares this ring buffer)."""
    window = int(params[-1])
    return np.zeros(k), np.zeros(k), np.zeros(window, dtype=np.int64), np.zeros(window)


@kernel
def _swucb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SlidingWindowUCB.select` (``params``: B, ξ, τ)."""
    counts, sums = state[0], state[1]
    plays = min(t - 1, int(params[2]))
    if plays == 0:
        return 0
    return padded_index(counts, sums, params[0], params[1] * math.log(plays))


@kernel
def _swucb_authors_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """The window's state, the kept indices and the arm pulled last round."""
    counts, sums, ring_actions, ring_rewards = window_init(params, k, rounds)
    kept, pulled = stale_init(k)
    return counts, sums, ring_actions, ring_rewards, kept, pulled


@kernel
def _swucb_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SlidingWindowUCB.select` of the authors-code variant: fresh indices in the first
    K rounds, then every index once and afterwards only the pulled arm's."""
    counts, sums, kept, pulled = state[0], state[1], state[4], state[5]
    k = counts.size
    if t <= k:
        return _swucb_select(state, params, t, u)
    numerator = params[1] * math.log(min(t - 1, int(params[2])))
    first, stop = stale_arms(kept, pulled, t == k + 1)
    for i in range(first, stop):
        kept[i] = padded_value(counts[i], sums[i], params[0], numerator)
    return kept_argmax(kept)


@kernel
def _swucb_authors_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    window_update(state, params, t, arm, reward)
    state[5][0] = arm


@kernel
def window_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`SlidingWindowUCB.update`: the ring buffer of the last τ plays (``state``'s
    first four arrays)."""
    counts, sums, ring_actions, ring_rewards = state[0], state[1], state[2], state[3]
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


class RExp3(EXP3):
    """Rexp3 (Besbes, Gur & Zeevi 2014, "Stochastic multi-armed-bandit problem with
    non-stationary rewards", §4): EXP3 restarted at the start of every batch of Δ rounds, with
    ``Δ = ⌈(K ln K)^{1/3} (T / V)^{2/3}⌉`` and ``γ = min(1, √(K ln K / ((e − 1) Δ)))``.
    Default variation budget V = 2 (Lindner et al.). Horizon-aware. ``variant =
    "authors-code"``: each pull is credited with the value of the arm's previous pull, as in
    the authors' ``Rexp3`` (see :class:`~impactbandits.policies.classic.EXP3`).
    """

    def __init__(
        self,
        variation_budget: PositiveFloat = VARIATION_BUDGET_DEFAULT,
        variant: Variant = "paper",
        first_pull_credit: list[float] | None = None,
    ) -> None:
        super().__init__(gamma=None, variant=variant, first_pull_credit=first_pull_credit)
        self.variation_budget = float(variation_budget)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        T = _need_horizon("variation_budget", horizon)
        super().reset(space, T, rng)
        k = space.n
        k_log_k = k * math.log(k) if k > 1 else 1.0
        self.batch = max(1, math.ceil(k_log_k ** (1 / 3) * (T / self.variation_budget) ** (2 / 3)))
        self._gamma = min(1.0, math.sqrt(k_log_k / ((math.e - 1) * self.batch)))
        self.t = 0

    def select(self) -> np.ndarray:
        if self.t % self.batch == 0:
            self.log_w[:] = 0.0  # restart EXP3 at the start of each batch
        self.t += 1
        return super().select()

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (``params``: γ, Δ, and for the authors-code
        variant the first-pull credit of every arm)."""
        params = np.array([self._gamma, self.batch])
        if self.variant == "authors-code":
            params = np.concatenate([params, self._credit])
            return CompiledStep(exp3_authors_init, _rexp3_select, exp3_authors_update, params, 1)
        return CompiledStep(_rexp3_init, _rexp3_select, exp3_update, params, 1)


@kernel
def _rexp3_init(params: np.ndarray, k: int, rounds: int) -> Any:
    return np.zeros(k), np.empty(k)


@kernel
def _rexp3_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    log_w, p = state[0], state[1]
    if (t - 1) % int(params[1]) == 0:
        log_w[:] = 0.0  # restart at the start of each batch of Δ rounds
    return exp3_draw(log_w, p, params[0], u)
