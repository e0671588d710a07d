"""Plain single-replication references for the rested-bandit policies, written from the papers'
pseudo-code with explicit loops over the history (deliberately slow)."""

from __future__ import annotations

import math

from impactbandits.core.policy import SimplePolicy


class ReferenceSPO(SimplePolicy):
    """Lindner et al. (2021) Algorithm 1, noise-free; the optimistic sum as an explicit loop."""

    requires_horizon = True

    def reset(self, space, horizon, rng):
        self.k, self.T = space.n, horizon
        self.init = max(math.floor(math.log(horizon)), 2)
        self.obs = [[] for _ in range(self.k)]
        self.t = 0

    def select(self):
        self.t += 1
        if self.t <= self.init * self.k:
            return (self.t - 1) // self.init
        done = self.t - 1
        best, best_value = 0, -math.inf
        for i in range(self.k):
            f, g = self.obs[i][-1], self.obs[i][-2]
            if f >= g:
                value = sum(min(1.0, f + (f - g) * (s - done)) for s in range(done + 1, self.T + 1))
            else:
                value = f * (self.T - done)
            if value > best_value + 1e-9:  # ties (up to rounding of the sums) to the lowest arm
                best, best_value = i, value
        return best

    def update(self, action, feedback):
        self.obs[action].append(float(feedback.reward))


class ReferenceDiscountedUCB(SimplePolicy):
    """Garivier & Moulines (2011) D-UCB, statistics recomputed from the whole history."""

    def __init__(self, gamma, xi=0.6, b=1.0):
        self.gamma, self.xi, self.b = gamma, xi, b

    def reset(self, space, horizon, rng):
        self.k, self.history = space.n, []

    def select(self):
        t = len(self.history) + 1
        if t <= self.k:
            return t - 1
        counts = [0.0] * self.k
        sums = [0.0] * self.k
        for s, (arm, x) in enumerate(self.history, start=1):
            w = self.gamma ** (t - 1 - s)
            counts[arm] += w
            sums[arm] += w * x
        n = sum(counts)
        index = [
            sums[i] / counts[i] + 2 * self.b * math.sqrt(self.xi * math.log(n) / counts[i])
            if counts[i] > 0
            else math.inf
            for i in range(self.k)
        ]
        return max(range(self.k), key=lambda i: (index[i], -i))

    def update(self, action, feedback):
        self.history.append((action, float(feedback.reward)))


class ReferenceSlidingWindowUCB(SimplePolicy):
    """Garivier & Moulines (2011) SW-UCB, window statistics recomputed from the history."""

    def __init__(self, window, xi=0.6, b=1.0):
        self.window, self.xi, self.b = window, xi, b

    def reset(self, space, horizon, rng):
        self.k, self.history = space.n, []

    def select(self):
        if not self.history:
            return 0
        recent = self.history[-self.window :]
        counts = [0] * self.k
        sums = [0.0] * self.k
        for arm, x in recent:
            counts[arm] += 1
            sums[arm] += x
        plays = len(recent)
        index = [
            sums[i] / counts[i] + self.b * math.sqrt(self.xi * math.log(plays) / counts[i])
            if counts[i]
            else math.inf
            for i in range(self.k)
        ]
        return max(range(self.k), key=lambda i: (index[i], -i))

    def update(self, action, feedback):
        self.history.append((action, float(feedback.reward)))
