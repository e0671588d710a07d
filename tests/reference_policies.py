"""Slow, plainly written single-replication references, straight from the papers' pseudo-code.

They run through :class:`~impactbandits.core.policy.BatchedSimplePolicy`, receive the same
per-replication generator and the same common-random-number rewards as the batched versions,
so on the same seeds the two must take the same actions.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits.core.policy import SimplePolicy


class ReferenceUCB1(SimplePolicy):
    """Auer et al. (2002), Fig. 1: play each machine once, then argmax x̄_j + sqrt(2 ln n / n_j)."""

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.n = 0
        self.counts = [0] * self.k
        self.sums = [0.0] * self.k

    def select(self):
        self.n += 1
        if self.n <= self.k:
            return self.n - 1
        best, best_value = 0, -math.inf
        for j in range(self.k):
            value = self.sums[j] / self.counts[j] + math.sqrt(2 * math.log(self.n) / self.counts[j])
            if value > best_value:
                best, best_value = j, value
        return best

    def update(self, action, feedback):
        self.counts[action] += 1
        self.sums[action] += float(feedback.reward)


class ReferenceEXP3(SimplePolicy):
    """Auer et al. (2002b), Fig. 1, with plain (not logarithmic) weights: short horizons only."""

    def __init__(self, gamma):
        self.gamma = gamma

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.rng = rng
        self.w = [1.0] * self.k

    def select(self):
        total = sum(self.w)
        self.p = [(1 - self.gamma) * w / total + self.gamma / self.k for w in self.w]
        u = self.rng.random() * sum(self.p)
        acc = 0.0
        for j, pj in enumerate(self.p):
            acc += pj
            if u <= acc:
                return j
        return self.k - 1

    def update(self, action, feedback):
        x_hat = float(feedback.reward) / self.p[action]
        self.w[action] *= math.exp(self.gamma * x_hat / self.k)


class ReferenceGreedy(SimplePolicy):
    def reset(self, space, horizon, rng):
        self.k, self.t = space.n, 0
        self.counts, self.sums = [0] * self.k, [0.0] * self.k

    def select(self):
        self.t += 1
        if self.t <= self.k:
            return self.t - 1
        means = [s / c for s, c in zip(self.sums, self.counts, strict=True)]
        return int(np.argmax(means))

    def update(self, action, feedback):
        self.counts[action] += 1
        self.sums[action] += float(feedback.reward)


class ReferenceETC(ReferenceGreedy):
    """Explore each arm m times in turn, then commit to the best empirical mean."""

    def __init__(self, m):
        self.m = m

    def reset(self, space, horizon, rng):
        super().reset(space, horizon, rng)
        self.commit = None

    def select(self):
        self.t += 1
        if self.t <= self.m * self.k:
            return (self.t - 1) % self.k
        if self.commit is None:  # decided once, after exploring
            means = [s / c for s, c in zip(self.sums, self.counts, strict=True)]
            self.commit = int(np.argmax(means))
        return self.commit


class FixedArm(SimplePolicy):
    def __init__(self, arm):
        self.arm = arm

    def reset(self, space, horizon, rng):
        pass

    def select(self):
        return self.arm

    def update(self, action, feedback):
        pass
