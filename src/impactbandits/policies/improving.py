"""Policies for improving (increasing) rested bandits.

* :class:`PatilAnytime` — Patil et al. (2023), Algorithm 1: horizon-unaware, O(k)-competitive.
* :class:`HKR` — Heidari, Kearns & Roth (2016), "Tight policy regret bounds for improving and
  decaying bandits", algorithm for increasing concave rewards, as used by Lindner et al. (2021,
  Appendix D.1) and Patil et al. (2023) as the horizon-aware comparison.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import Variant
from impactbandits.errors import SpecError
from impactbandits.policies.spo import linear_optimistic_sum
from impactbandits.policies.spo_bound import linear_sum

__all__ = ["HKR", "PatilAnytime"]


class HKR(SimplePolicy):
    """Heidari et al. (2016) for increasing rewards (the fidelity ledger:
    https://impactbandits.readthedocs.io/en/latest/fidelity/).

    Phases: in each phase every active arm is pulled once (in index order). After a phase in
    which the active arms have p ≥ 2 pulls each, with F̂_i the cumulative observed reward,
    f̂_i(p) the last and f̂_i(p−1) the previous observation:

    * optimistic bound ``u_i = F̂_i + Σ_{k=1}^{T−p} min(1, f̂_i(p) + k·(f̂_i(p) − f̂_i(p−1)))``
      (the last slope extrapolated linearly, capped at 1);
    * pessimistic bound ``l_i = F̂_i + f̂_i(p)·(T − p)`` (an increasing arm never falls below its
      current value);

    arm i is eliminated when some other active j has ``l_j > u_i`` (should noisy data dominate
    every arm, the one with the best pessimistic bound stays). The last surviving arm receives
    all remaining pulls. Horizon-aware. Single replication (phases are bookkeeping-heavy, not
    arithmetic-heavy; the runner batches copies).

    ``variant = "authors-code"`` reproduces Lindner et al.'s ``IncreasingSolver``
    (single-peaked-bandits@8e1dd52), which first pulls every arm once *without recording the
    reward*, then runs the phases above on the recorded pulls only (p and T − p count recorded
    pulls); the p-th recorded pull is credited with f(p), the value of the arm's *previous*
    (p-th) pull, although it is its (p+1)-th; f̂(0) = 0 is the "previous" value in phase 1 (so it
    may already eliminate after one recorded pull). Each eliminated arm therefore gets exactly
    one pull more than in the paper's algorithm, taken from the survivor: e.g. inc_1, α = 0.1,
    T = 1000: (979, 21) here, (978, 22) there. Heidari et al.'s algorithm has no unrecorded
    pull, so the default is ours. (f(0) = 0 is the authors' definition for every increasing
    family.)
    """

    deterministic = True

    requires_horizon = True

    def __init__(self, variant: Variant = "paper") -> None:
        self.variant = variant

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        if horizon is None:
            raise SpecError("horizon", "HKR needs the horizon")
        self.horizon = horizon
        self.active = list(range(space.n))
        self.queue = list(self.active)
        self.pulls = [0] * space.n
        self.total = [0.0] * space.n
        self.last = [math.nan] * space.n
        self.previous = [math.nan] * space.n
        self._ignored = list(self.active) if self.variant == "authors-code" else []
        self._min_pulls = 1 if self.variant == "authors-code" else 2
        self._held = [0.0] * space.n

    def select(self) -> int:
        if self._ignored:
            return self._ignored[0]
        if len(self.active) > 1 and not self.queue:
            self._eliminate()
            self.queue = list(self.active)
        if len(self.active) == 1:
            return self.active[0]
        return self.queue.pop(0)

    def _eliminate(self) -> None:
        p = self.pulls[self.active[0]]
        if p < self._min_pulls:
            return
        rest = self.horizon - p
        upper, lower = {}, {}
        for i in self.active:
            slope = self.last[i] - self.previous[i]
            future = float(linear_optimistic_sum(np.array(self.last[i]), np.array(slope), rest))
            upper[i] = self.total[i] + future
            lower[i] = self.total[i] + self.last[i] * rest
        survivors = [
            i for i in self.active if not any(lower[j] > upper[i] for j in self.active if j != i)
        ]
        # with noisy observations a negative slope can make every arm look dominated:
        # keep the arm with the best pessimistic bound then
        self.active = survivors or [max(self.active, key=lambda i: lower[i])]

    def update(self, action: int, feedback: Feedback) -> None:
        reward = float(feedback.reward)
        if self.variant == "authors-code":
            # the authors' loop credits each pull with the value of the arm's previous pull
            reward, self._held[action] = self._held[action], reward
            if self._ignored:  # the unrecorded first pull of every arm
                self._ignored.pop(0)
                self.last[action] = 0.0
                return
        self.pulls[action] += 1
        self.total[action] += reward
        self.previous[action] = self.last[action]
        self.last[action] = reward

    def compiled_step(self) -> CompiledStep | None:
        """The rounds (``params``: T, the pulls an elimination needs); the authors-code
        variant's unrecorded first pulls and held rewards in the state."""
        params = np.array([float(self.horizon), float(self._min_pulls)])
        if self.variant == "authors-code":
            return CompiledStep(_hkr_init, _hkr_authors_select, _hkr_authors_update, params)
        return CompiledStep(_hkr_init, _hkr_select, _hkr_update, params)


@kernel
def _hkr_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Pulls, total, last and previous reward per arm; the active arms (``active[:flags[0]]``),
    the phase queue position (``flags[1]``) and the unrecorded first pulls made (``flags[2]``,
    authors-code variant); scratch for the bounds; the reward each arm's next pull is credited
    with (authors-code variant)."""
    flags = np.array([k, 0, 0], dtype=np.int64)
    return (
        np.zeros(k, dtype=np.int64),
        np.zeros(k),
        np.full(k, np.nan),
        np.full(k, np.nan),
        np.arange(k),
        flags,
        np.empty(k),
        np.empty(k),
        np.zeros(k),
    )


@kernel
def _hkr_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`HKR.select`: the active arms in turn; after each phase, :meth:`HKR._eliminate`."""
    pulls, total, last, previous, active, flags, upper, lower = state[:8]
    if flags[0] > 1 and flags[1] == flags[0]:  # a phase ends
        flags[0] = _hkr_eliminate(active, flags[0], pulls, total, last, previous,
                                  int(params[0]), int(params[1]), upper, lower)  # fmt: skip
        flags[1] = 0
    if flags[0] == 1:
        return active[0]
    a = active[flags[1]]
    flags[1] += 1
    return a


@kernel(inline=True)
def _hkr_eliminate(
    active: np.ndarray,
    n_active: int,
    pulls: np.ndarray,
    total: np.ndarray,
    last: np.ndarray,
    previous: np.ndarray,
    horizon: int,
    min_pulls: int,
    upper: np.ndarray,
    lower: np.ndarray,
) -> int:
    """:meth:`HKR._eliminate` after a phase: the survivors replace ``active[:n_active]`` (index
    order); returns their number."""
    p = pulls[active[0]]
    if p < min_pulls:
        return n_active
    rest = horizon - p
    for idx in range(n_active):
        i = active[idx]
        future = linear_sum(last[i], last[i] - previous[i], rest)
        upper[idx] = total[i] + future
        lower[idx] = total[i] + last[i] * rest
    kept = 0
    for idx in range(n_active):
        dominated = False
        for other in range(n_active):
            if other != idx and lower[other] > upper[idx]:
                dominated = True
                break
        if not dominated:  # compacted in place: kept <= idx, and the bounds stay by idx
            active[kept] = active[idx]
            kept += 1
    if kept == 0:  # every arm dominated (noisy slopes): the best pessimistic bound stays
        best = 0
        for idx in range(1, n_active):
            if lower[idx] > lower[best]:
                best = idx
        active[0] = active[best]
        return 1
    return kept


@kernel
def _hkr_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    pulls, total, last, previous = state[0], state[1], state[2], state[3]
    pulls[arm] += 1
    total[arm] += reward
    previous[arm] = last[arm]
    last[arm] = reward


@kernel
def _hkr_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`HKR.select` of the authors-code variant: first every arm once, unrecorded."""
    flags = state[5]
    if flags[2] < state[0].size:
        return flags[2]
    return _hkr_select(state, params, t, u)


@kernel
def _hkr_authors_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`HKR.update` of the authors-code variant: the pull is credited with the arm's
    previous reward (``state[8]``); an unrecorded first pull only sets f̂(0) = 0."""
    flags, held = state[5], state[8]
    credit = held[arm]
    held[arm] = reward
    if flags[2] < held.size:  # the unrecorded first pull of every arm
        flags[2] += 1
        state[2][arm] = 0.0
        return
    _hkr_update(state, params, t, arm, credit)


#: Rounding allowance of :class:`PatilAnytime`'s tie test, in units of the machine epsilon per
#: unit of magnitude of the estimate's terms (see :meth:`PatilAnytime.select`).
TIE_ULPS = 16.0
_TIE_EPS = TIE_ULPS * sys.float_info.epsilon


class PatilAnytime(SimplePolicy):
    """Algorithm 1 of Patil, Nair, Ghalme & Khan (2023), "Mitigating disparity while maximizing
    reward: tight anytime guarantee for improving bandits" (IJCAI), horizon-unaware.

    Pull each arm twice (arm by arm). Then in every round t, with N_i the pulls of arm i so
    far, N* = max_i N_i (the most-pulled arm's count), F_i = Rew_i(N_i) the cumulative reward
    observed from arm i and Δ_i = f_i(N_i) − f_i(N_i − 1) its last increment, compute the
    optimistic cumulative reward of arm i had it been pulled N* times,

        p_i = F_i + Σ_{n=1}^{M_i} (f_i(N_i) + n·Δ_i) = F_i + M_i f_i(N_i) + Δ_i M_i (M_i + 1)/2,
        M_i = N* − N_i

    (uncapped, exactly as in the paper), and pull an arm of maximal p_i. Ties (Algorithm 1,
    steps 11–12: C = argmax_i p_i, pull argmin_{i∈C} N_i; "then arbitrarily", §4.1) go first to
    the fewest pulls, then to the lowest index. O(k) per round. Anytime: the horizon is ignored.

    Ties are exact in the paper's real arithmetic and frequent: on linear stretches (the
    family I_m of §3, inc_2) an arm one pull behind has p_i = F_i + f_i(N_i + 1) = Rew_i(N_i + 1)
    exactly, but its floating-point value differs from the other arm's by rounding, so a plain
    ``==`` would hand the tie to whichever value happened to round up. Here two estimates are
    tied when they differ by at most the sum of their rounding bounds: each observed value is
    allowed a relative error of ε = TIE_ULPS·2⁻⁵² (the curve value's own rounding plus the
    arithmetic), which bounds p_i's error by ε·(A_i + M_i|f_i(N_i)| + M_i(M_i+1)/2·(|f_i(N_i)|
    + |f_i(N_i − 1)|)), A_i = Σ_n |f_i(n)| observed. F_i is kept with compensated (Neumaier)
    summation so that its own rounding does not grow with N_i. Estimates farther apart than
    these bounds (differences above ~10⁻¹³·N*² at most) are compared as in the paper.
    """

    deterministic = True

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self.k = space.n
        self.t = 0
        self.pulls = [0] * self.k
        self.total = [0.0] * self.k
        self._carry = [0.0] * self.k  # Neumaier compensation of total
        self.magnitude = [0.0] * self.k  # Σ |observed rewards|
        self.last = [0.0] * self.k
        self.increment = [0.0] * self.k

    def _estimate(self, i: int, most: int) -> tuple[float, float]:
        """(p_i, its rounding bound) for the next round."""
        m = most - self.pulls[i]
        half = m * (m + 1) / 2
        last = self.last[i]
        p = (self.total[i] + self._carry[i]) + m * last + self.increment[i] * half
        previous = last - self.increment[i]
        bound = _TIE_EPS * (self.magnitude[i] + m * abs(last) + half * (abs(last) + abs(previous)))
        return p, bound

    def select(self) -> int:
        self.t += 1
        if self.t <= 2 * self.k:
            return (self.t - 1) // 2
        pulls, total, carry, last, increment = (
            self.pulls,
            self.total,
            self._carry,
            self.last,
            self.increment,
        )
        magnitude = self.magnitude
        most = max(pulls)
        scores, bounds = [], []
        for i in range(self.k):  # inlined _estimate (this loop is the policy's cost)
            m = most - pulls[i]
            half = m * (m + 1) / 2
            f, d = last[i], increment[i]
            scores.append((total[i] + carry[i]) + m * f + d * half)
            bounds.append(_TIE_EPS * (magnitude[i] + m * abs(f) + half * (abs(f) + abs(f - d))))
        top = max(range(self.k), key=scores.__getitem__)
        p_top, bound_top = scores[top], bounds[top]
        best = top
        for i in range(self.k):
            if p_top - scores[i] <= bounds[i] + bound_top and (
                pulls[i] < pulls[best] or (pulls[i] == pulls[best] and i < best)
            ):
                best = i
        return best

    def optimistic_estimates(self) -> list[float]:
        """The p_i(t) of the next round (for inspection and tests)."""
        most = max(self.pulls)
        return [self._estimate(i, most)[0] for i in range(self.k)]

    def update(self, action: int, feedback: Feedback) -> None:
        reward = float(feedback.reward)
        self.pulls[action] += 1
        # Neumaier's compensated summation of the cumulative reward
        total = self.total[action]
        new = total + reward
        if abs(total) >= abs(reward):
            self._carry[action] += (total - new) + reward
        else:
            self._carry[action] += (reward - new) + total
        self.total[action] = new
        self.magnitude[action] += abs(reward)
        self.increment[action] = reward - self.last[action] if self.pulls[action] > 1 else 0.0
        self.last[action] = reward

    def compiled_step(self) -> CompiledStep | None:
        """Algorithm 1's rounds (``params``: the tie allowance :data:`TIE_ULPS` · ε)."""
        return CompiledStep(_patil_init, _patil_select, _patil_update, np.array([_TIE_EPS]))


@kernel
def _patil_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Pulls; rows of ``state``: cumulative reward, its Neumaier compensation, Σ|reward|, last
    reward, last increment; scratch for the estimates and their bounds."""
    return np.zeros(k, dtype=np.int64), np.zeros((5, k)), np.empty(k), np.empty(k)


@kernel
def _patil_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`PatilAnytime.select`, its operations in its order."""
    pulls, rows, scores, bounds = state
    k = pulls.size
    if t <= 2 * k:  # each arm twice, arm by arm
        return (t - 1) // 2
    eps = params[0]
    most = pulls.max()
    for i in range(k):
        m = most - pulls[i]
        half = m * (m + 1) / 2
        f = rows[3, i]
        d = rows[4, i]
        scores[i] = (rows[0, i] + rows[1, i]) + m * f + d * half
        bounds[i] = eps * (rows[2, i] + m * abs(f) + half * (abs(f) + abs(f - d)))
    top = 0
    for i in range(1, k):
        if scores[i] > scores[top]:
            top = i
    best = top
    for i in range(k):
        if scores[top] - scores[i] <= bounds[i] + bounds[top] and (
            pulls[i] < pulls[best] or (pulls[i] == pulls[best] and i < best)
        ):
            best = i
    return best


@kernel
def _patil_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`PatilAnytime.update`: Neumaier's compensated sum, Σ|reward|, the last increment."""
    pulls, rows = state[0], state[1]
    pulls[arm] += 1
    total = rows[0, arm]
    new = total + reward
    if abs(total) >= abs(reward):
        rows[1, arm] += (total - new) + reward
    else:
        rows[1, arm] += (reward - new) + total
    rows[0, arm] = new
    rows[2, arm] += abs(reward)
    rows[4, arm] = reward - rows[3, arm] if pulls[arm] > 1 else 0.0
    rows[3, arm] = reward
