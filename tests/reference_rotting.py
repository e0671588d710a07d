"""Plain single-replication references for the rotting policies, from the papers' pseudo-code
(Levine et al. 2017, Algorithm 1; Seznec et al. 2019, Algorithm 1; Seznec et al. 2020), with
averages recomputed from the raw rewards and the window grid written out independently."""

from __future__ import annotations

import math

from impactbandits.core.policy import SimplePolicy


def grid(limit, m):
    if m <= 1:
        return list(range(1, limit + 1))
    out, j = {1}, 0
    while m**j <= limit:
        out.add(math.ceil(m**j - 1e-9))
        j += 1
    return sorted(w for w in out if w <= limit)


class _Windows(SimplePolicy):
    def __init__(self, alpha, sigma=1.0, m=1.1):
        self.alpha, self.sigma, self.m = alpha, sigma, m

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.x = [[] for _ in range(self.k)]
        self.t = 0

    def average(self, arm, h):
        return sum(self.x[arm][-h:]) / h

    def c(self, h):
        return math.sqrt(2 * self.sigma**2 * self.alpha * math.log(max(self.t, 1)) / h)

    def update(self, action, feedback):
        self.x[action].append(float(feedback.reward))
        self.t += 1


class ReferenceFEWA(_Windows):
    def select(self):
        n = [len(v) for v in self.x]
        active = list(range(self.k))
        for h in [*grid(max(max(n), 1), self.m), math.inf]:
            playable = [i for i in active if n[i] < h] if len(active) > 1 else active
            if playable:
                return min(playable, key=lambda i: (n[i], i))
            means = {i: self.average(i, h) for i in active}
            best = max(means.values())
            active = [i for i in active if means[i] >= best - 2 * self.c(h)]
        raise AssertionError("unreachable")


class ReferenceRawUCB(_Windows):
    def select(self):
        n = [len(v) for v in self.x]
        if 0 in n:
            return n.index(0)
        index = [
            min(self.average(i, h) + self.c(h) for h in grid(n[i], self.m)) for i in range(self.k)
        ]
        return index.index(max(index))


class ReferenceSWA(SimplePolicy):
    def __init__(self, alpha=0.2, sigma=1.0, doubling=False, window=None):
        self.alpha, self.sigma, self.doubling, self.window = alpha, sigma, doubling, window

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.phase = 1 if self.doubling else horizon
        self.start()

    def start(self):
        if self.window is not None:
            self.h = self.window
        else:
            inner = 16 * self.sigma**2 * self.phase**2 * math.log(math.sqrt(2) * self.phase)
            self.h = max(1, math.ceil(self.alpha * max(inner / self.k**2, 0.0) ** (1 / 3)))
        self.x = [[] for _ in range(self.k)]
        self.played = 0

    def select(self):
        for i in range(self.k):
            if len(self.x[i]) < self.h:
                return i
        sums = [sum(v[-self.h :]) for v in self.x]
        return sums.index(max(sums))

    def update(self, action, feedback):
        self.x[action].append(float(feedback.reward))
        self.played += 1
        if self.doubling and self.played >= self.phase:
            self.phase *= 2
            self.start()
