"""Policies for improving (increasing) rested bandits.

* :class:`PatilAnytime` — Patil et al. (2023), Algorithm 1: horizon-unaware, O(k)-competitive.
* :class:`HKR` — Heidari, Kearns & Roth (2016), "Tight policy regret bounds for improving and
  decaying bandits", algorithm for increasing concave rewards, as used by Lindner et al. (2021,
  Appendix D.1) and Patil et al. (2023) as the horizon-aware comparison.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.policies.single_peaked import linear_optimistic_sum

__all__ = ["HKR", "PatilAnytime"]


class HKR(SimplePolicy):
    """Heidari et al. (2016) for increasing rewards (REPRODUCTION.md §1).

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
    """

    requires_horizon = True

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

    def select(self) -> int:
        if len(self.active) > 1 and not self.queue:
            self._eliminate()
            self.queue = list(self.active)
        if len(self.active) == 1:
            return self.active[0]
        return self.queue.pop(0)

    def _eliminate(self) -> None:
        p = self.pulls[self.active[0]]
        if p < 2:
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
        self.pulls[action] += 1
        self.total[action] += reward
        self.previous[action] = self.last[action]
        self.last[action] = reward


class PatilAnytime(SimplePolicy):
    """Algorithm 1 of Patil, Nair, Ghalme & Khan (2023), "Mitigating disparity while maximizing
    reward: tight anytime guarantee for improving bandits" (IJCAI), horizon-unaware.

    Pull each arm twice (arm by arm). Then in every round t, with N_i the pulls of arm i so
    far, N* = max_i N_i (the most-pulled arm's count), F_i = Rew_i(N_i) the cumulative reward
    observed from arm i and Δ_i = f_i(N_i) − f_i(N_i − 1) its last increment, compute the
    optimistic cumulative reward of arm i had it been pulled N* times,

        p_i = F_i + Σ_{n=1}^{M_i} (f_i(N_i) + n·Δ_i) = F_i + M_i f_i(N_i) + Δ_i M_i (M_i + 1)/2,
        M_i = N* − N_i

    (uncapped, exactly as in the paper), and pull an arm of maximal p_i; ties go first to the
    fewest pulls, then to the lowest index. O(k) per round. Anytime: the horizon is ignored.
    """

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self.k = space.n
        self.t = 0
        self.pulls = [0] * self.k
        self.total = [0.0] * self.k
        self.last = [0.0] * self.k
        self.increment = [0.0] * self.k

    def select(self) -> int:
        self.t += 1
        if self.t <= 2 * self.k:
            return (self.t - 1) // 2
        pulls, total, last, increment = self.pulls, self.total, self.last, self.increment
        most = max(pulls)
        best, best_p, best_n = 0, -math.inf, 0
        for i in range(self.k):
            m = most - pulls[i]
            p = total[i] + m * last[i] + increment[i] * (m * (m + 1) / 2)
            if p > best_p or (p == best_p and pulls[i] < best_n):
                best, best_p, best_n = i, p, pulls[i]
        return best

    def optimistic_estimates(self) -> list[float]:
        """The p_i(t) of the next round (for inspection and tests)."""
        most = max(self.pulls)
        out = []
        for i in range(self.k):
            m = most - self.pulls[i]
            out.append(self.total[i] + m * self.last[i] + self.increment[i] * (m * (m + 1) / 2))
        return out

    def update(self, action: int, feedback: Feedback) -> None:
        reward = float(feedback.reward)
        self.pulls[action] += 1
        self.total[action] += reward
        self.increment[action] = reward - self.last[action] if self.pulls[action] > 1 else 0.0
        self.last[action] = reward
