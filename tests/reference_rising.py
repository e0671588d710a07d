"""Plain single-replication references for the rising-bandit policies, written from the
formulas and without the batched version's bookkeeping (no prefix sums):

* :class:`ReferenceRisingUCB` — Metelli et al. (2022), Algorithms 1/2: the index as displayed,
  a sum over the window of each sample projected to round t, recomputed from the raw samples
  for every arm in every round;
* :class:`ReferenceAuthorsRisingUCB` — the authors' ``R_ed_UCB.py`` as described in words in
  :mod:`impactbandits.policies.rising` (round robin twice, index 1 for h = 0, the incremental
  window sums a, b, c, d updated only for the pulled arm, the trend frozen at the arm's last
  pull, uniform random ties), written from that description with 0-based sample numbers.
"""

from __future__ import annotations

import math

from impactbandits.core.policy import SimplePolicy


class ReferenceRisingUCB(SimplePolicy):
    def __init__(self, epsilon=0.25, alpha=4.0, sigma=0.1):
        self.epsilon, self.alpha, self.sigma = epsilon, alpha, sigma

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.samples = [[] for _ in range(self.k)]
        self.t = 0

    def index(self, arm):
        x = self.samples[arm]
        n = len(x)
        h = math.floor(self.epsilon * n)
        if h == 0:
            return math.inf
        t = self.t
        total = 0.0
        for j in range(n - h + 1, n + 1):  # sample numbers j are 1-based: X(j) = x[j - 1]
            total += x[j - 1] + (t - j) * (x[j - 1] - x[j - h - 1]) / h
        mean = total / h
        width = self.sigma * (t - n + h - 1) * math.sqrt(10 * math.log(t**self.alpha) / h**3)
        return mean + width

    def select(self):
        self.t += 1
        values = [self.index(i) for i in range(self.k)]
        return values.index(max(values))  # first maximum

    def update(self, action, feedback):
        self.samples[action].append(float(feedback.reward))


class ReferenceAuthorsRisingUCB(SimplePolicy):
    sigma = 0.1

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.rng = rng
        self.time = 0  # rounds completed
        self.x = [[] for _ in range(self.k)]
        self.h = [0] * self.k
        self.a = [0.0] * self.k
        self.b = [0.0] * self.k
        self.c = [0.0] * self.k
        self.d = [0.0] * self.k
        self.mean = [0.0] * self.k
        self.trend = [0.0] * self.k
        self.bound = [0.0] * self.k

    def select(self):
        if self.time < 2 * self.k:
            return self.time % self.k
        best = max(self.bound)
        tied = [i for i in range(self.k) if self.bound[i] == best]
        u = self.rng.random()
        return tied[min(int(u * len(tied)), len(tied) - 1)]

    def update(self, action, feedback):
        self.x[action].append(float(feedback.reward))
        self.time += 1
        t = self.time + 1
        delta = self.time**-4.0
        for k in range(self.k):
            x = self.x[k]
            n = len(x)
            h = n // 4
            if k == action:
                # windows (0-based): last = x[n-h .. n-1], previous = x[n-2h .. n-h-1]
                if h == self.h[k]:  # both windows slide by one sample
                    self.a[k] += x[n - 1] - x[n - 1 - h]
                    self.b[k] += x[n - 1 - h] - x[n - 1 - 2 * h]
                    self.c[k] += (n - 1) * x[n - 1] - (n - 1 - h) * x[n - 1 - h]
                    self.d[k] += (n - 1 - h) * x[n - 1 - h] - (n - 1 - 2 * h) * x[n - 1 - 2 * h]
                else:  # h grew by one: each window gains one sample at its start/end
                    self.a[k] += x[n - 1]
                    self.b[k] += x[n - 2 * h]
                    self.c[k] += (n - 1) * x[n - 1]
                    self.d[k] += (n - 2 * h) * x[n - 2 * h]
                if h > 0:
                    spread = self.a[k] - self.b[k]
                    self.mean[k] = ((2 * h - n + 1) * spread + self.c[k] - self.d[k]) / h**2
                    self.trend[k] = (t - n) * (self.a[k] - self.b[k]) / h**2
                else:
                    self.mean[k] = self.trend[k] = 0.0
                self.h[k] = h
            if h > 0:
                width = self.sigma * (t - n + h - 1) * math.sqrt(10 * math.log(1 / delta) / h**3)
                self.bound[k] = self.mean[k] + self.trend[k] + width
            else:
                self.bound[k] = 1.0
