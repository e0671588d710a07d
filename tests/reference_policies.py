"""Slow, plainly written single-replication references, straight from the papers' pseudo-code.

They run through :class:`~impactbandits.core.policy.BatchedSimplePolicy`, receive the same
per-replication generator and the same common-random-number rewards as the batched versions,
so on the same seeds the two must take the same actions.
"""

from __future__ import annotations

import itertools
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


class ReferenceMOSS(SimplePolicy):
    """MOSS-anytime (Degenne & Perchet 2016), as the textbook writes it: each arm once, then
    argmax x̄_i + sqrt((1 + α)/2 · max(0, ln(t / (K n_i))) / n_i)."""

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.t = 0
        self.counts = [0] * self.k
        self.sums = [0.0] * self.k

    def select(self):
        self.t += 1
        if self.t <= self.k:
            return self.t - 1
        best, best_value = 0, -math.inf
        for i in range(self.k):
            n = self.counts[i]
            explore = (1 + self.alpha) / 2 * max(0.0, math.log(self.t / (self.k * n))) / n
            value = self.sums[i] / n + math.sqrt(explore)
            if value > best_value:
                best, best_value = i, value
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


def _meta_arms(k, m):
    """Every level vector (j_1..j_K), j_k ≥ 1, Σ j_k = m, in lexicographic order."""
    return [c for c in itertools.product(range(1, m + 1), repeat=k) if sum(c) == m]


class ReferenceActionDependentUCB(SimplePolicy):
    """Tang et al. (2021), Algorithm 1 with Eq. (5)–(6), enumerating every meta-arm.

    UCB_t(p) = Σ_k p_k r̄(p_k) + sqrt(K ln t / min_k n(p_k)); a meta-arm holding a never-played
    discretized arm has UCB +∞ (initialisation), and among those the largest Σ_k p_k r̄(p_k)
    is played. Ties: the lexicographically first meta-arm.
    """

    def __init__(self, resolution):
        self.m = resolution

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.t = 0
        self.arms = _meta_arms(self.k, self.m)
        self.sums = {}
        self.counts = {}

    def _mean(self, k, j):
        n = self.counts.get((k, j), 0)
        return self.sums[(k, j)] / n if n else 0.0

    def _index(self, arm, log_t, scale):
        score = sum(j / self.m * self._mean(k, j) for k, j in enumerate(arm))
        least = min(self.counts.get((k, j), 0) for k, j in enumerate(arm))
        if least == 0:
            return math.inf, score
        return score + math.sqrt(scale * log_t / least), score

    def _argmax(self, log_t, scale):
        best, best_key = None, None
        for arm in self.arms:
            value, score = self._index(arm, log_t, scale)
            key = (value, score if math.isinf(value) else 0.0)
            if best_key is None or key > best_key:
                best, best_key = arm, key
        return best

    def select(self):
        self.t += 1
        self.arm = self._argmax(math.log(max(self.t, 2)), self.k)
        return np.array(self.arm) / self.m

    def _record(self, feedback):
        for k, j in enumerate(self.arm):
            observed = float(feedback.observed[k])
            weighted = 0.0 if math.isnan(observed) else observed / (j / self.m)
            self.sums[(k, j)] = self.sums.get((k, j), 0.0) + weighted
            self.counts[(k, j)] = self.counts.get((k, j), 0) + 1

    def update(self, action, feedback):
        self._record(feedback)


class ReferenceCUCB(SimplePolicy):
    """CUCB over the discretized arms (Chen et al. 2016), every meta-arm enumerated, in its
    three readings: the value of a meta-arm is Σ_k of, per played arm (k, j) with p = j/M and
    width w = sqrt(1.5 ln t / n):

    * range-scaled: p·mean + w, mean of the importance-weighted outcomes r/p (0 if not
      activated), n = the rounds (k, j) was played;
    * weighted: p·(mean + w), same statistics;
    * triggered: p·(mean + w), mean of the observed r over the rounds group k was activated,
      n = those rounds.

    An arm never counted makes the meta-arm's value infinite (played first)."""

    def __init__(self, resolution, bonus):
        self.m, self.bonus = resolution, bonus

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.t = 0
        self.arms = _meta_arms(self.k, self.m)
        self.sums, self.counts = {}, {}

    def value(self, arm):
        log_t = math.log(max(self.t, 2))
        total = 0.0
        for k, j in enumerate(arm):
            n = self.counts.get((k, j), 0)
            if n == 0:
                return math.inf
            p, mean = j / self.m, self.sums[(k, j)] / n
            w = math.sqrt(1.5 * log_t / n)
            total += p * mean + w if self.bonus == "range-scaled" else p * (mean + w)
        return total

    def select(self):
        self.t += 1
        self.arm = max(self.arms, key=self.value)
        return np.array(self.arm) / self.m

    def update(self, action, feedback):
        for k, j in enumerate(self.arm):
            observed = float(feedback.observed[k])
            if self.bonus == "triggered":
                if math.isnan(observed):
                    continue
                outcome = observed
            else:
                outcome = 0.0 if math.isnan(observed) else observed / (j / self.m)
            self.sums[(k, j)] = self.sums.get((k, j), 0.0) + outcome
            self.counts[(k, j)] = self.counts.get((k, j), 0) + 1


class ReferenceHistoryDependentUCB(ReferenceActionDependentUCB):
    """Tang et al. (2021), Algorithm 2 (phases of L = ⌈s_a/(1 − η)⌉ rounds, the first s_a of them
    approaching) with Algorithm 3 (bonus sqrt(3K ln t / min n_est); the constant err is left
    out: it shifts every UCB equally), s_a = ⌈ln(η^{1/3}/K)/ln γ⌉ (at least 1)."""

    def __init__(self, resolution, eta, gamma):
        super().__init__(resolution)
        self.eta, self.gamma = eta, gamma

    def reset(self, space, horizon, rng):
        super().reset(space, horizon, rng)
        self.s_a = max(1, math.ceil(math.log(self.eta ** (1 / 3) / self.k) / math.log(self.gamma)))
        self.L = max(self.s_a + 1, math.ceil(self.s_a / (1 - self.eta)))

    def select(self):
        self.t += 1
        self.round_in_phase = (self.t - 1) % self.L + 1
        if self.round_in_phase == 1:
            self.arm = self._argmax(math.log(max(self.t, 2)), 3 * self.k)
        return np.array(self.arm) / self.m

    def update(self, action, feedback):
        if self.round_in_phase > self.s_a:
            self._record(feedback)


class ReferenceThompson(SimplePolicy):
    """Agrawal & Goyal (2012), Algorithm 2: for each arm draw θ_i ~ Beta(S_i + α₀, F_i + β₀),
    play the largest (first on ties); count a reward r as a success with probability r
    (``binarize``) or add r and 1 − r. Draws: the replication's counter-based stream
    ``stream`` (key words and replication), read one value at a time with the stream kernels
    called from Python."""

    def __init__(self, stream, prior=(1.0, 1.0), binarize=True):
        self.stream, self.prior, self.binarize = stream, prior, binarize

    def reset(self, space, horizon, rng):
        from impactbandits.core.streams import stream_beta, stream_uniform

        self._beta, self._uniform = stream_beta, stream_uniform
        self.k, self.t = space.n, 0
        self.successes = [0.0] * self.k
        self.failures = [0.0] * self.k

    def select(self):
        self.t += 1
        draws = [
            self._beta(self.stream, self.successes[i] + self.prior[0],
                       self.failures[i] + self.prior[1], i, self.t)
            for i in range(self.k)
        ]  # fmt: skip
        self.arm = max(range(self.k), key=lambda i: (draws[i], -i))
        return self.arm

    def update(self, action, feedback):
        r = float(feedback.reward)
        if self.binarize:
            r = 1.0 if self._uniform(self.stream, 2 * self.k, self.t, 0) < r else 0.0
        self.successes[action] += r
        self.failures[action] += 1.0 - r


class ReferenceGaussianThompson(SimplePolicy):
    """Agrawal & Goyal (2013), Algorithm 2 with noise scale σ: θ_i ~ N(S_i/(n_i + 1),
    σ²/(n_i + 1)), the normal of round t on channel i of the stream."""

    def __init__(self, stream, sigma=1.0):
        self.stream, self.sigma = stream, sigma

    def reset(self, space, horizon, rng):
        from impactbandits.core.streams import stream_normal

        self._normal = stream_normal
        self.k, self.t = space.n, 0
        self.n = [0.0] * self.k
        self.s = [0.0] * self.k

    def select(self):
        self.t += 1
        draws = []
        for i in range(self.k):
            z = self._normal(self.stream, i, self.t, 0)
            draws.append(
                self.s[i] / (self.n[i] + 1.0) + self.sigma / math.sqrt(self.n[i] + 1.0) * z
            )
        return max(range(self.k), key=lambda i: (draws[i], -i))

    def update(self, action, feedback):
        self.n[action] += 1.0
        self.s[action] += float(feedback.reward)


class ReferenceKLUCB(SimplePolicy):
    """Garivier & Cappé (2011), Algorithm 1: each arm once, then argmax of
    max{q ≥ x̄ : n d(x̄, q) ≤ ln t + c ln ln t} (KL-UCB+: ln(t/n)), the bound solved to 1e-14
    by Brent's method (scipy), not by the library's bisection; Gaussian: the closed form."""

    def __init__(self, c=0.0, plus=False, gaussian=False, sigma=0.5):
        self.c, self.plus, self.gaussian, self.sigma = c, plus, gaussian, sigma

    def reset(self, space, horizon, rng):
        self.k, self.t = space.n, 0
        self.n = [0] * self.k
        self.s = [0.0] * self.k

    @staticmethod
    def _kl(p, q):
        def term(a, b):
            return 0.0 if a == 0 else a * math.log(a / b)

        return term(p, q) + term(1 - p, 1 - q)

    def _bound(self, mean, n, level):
        from scipy.optimize import brentq

        if self.gaussian:
            return mean + self.sigma * math.sqrt(2 * level / n)
        if mean >= 1.0 or n * self._kl(mean, 1 - 1e-15) <= level:
            return 1.0
        return brentq(lambda q: n * self._kl(mean, q) - level, mean, 1 - 1e-15, xtol=1e-14)

    def select(self):
        self.t += 1
        for i in range(self.k):
            if self.n[i] == 0:
                return i
        best, best_value = 0, -math.inf
        for i in range(self.k):
            x = self.t / self.n[i] if self.plus else self.t
            level = math.log(x) + self.c * math.log(max(1.0, math.log(x)))
            value = self._bound(self.s[i] / self.n[i], self.n[i], level)
            if value > best_value:
                best, best_value = i, value
        return best

    def update(self, action, feedback):
        self.n[action] += 1
        self.s[action] += float(feedback.reward)


class ReferenceUCBV(SimplePolicy):
    """Audibert, Munos & Szepesvári (2009), Eq. (1)-(2): each arm once, then argmax
    x̄ + sqrt(2 V ζ ln t / s) + c 3 b ζ ln t / s, V the empirical variance of the s rewards,
    max(0, mean of squares − squared mean) from the list of rewards (the formula the library
    states: the two-pass mean of squared deviations rounds differently, and near-ties between
    arms then break apart differently)."""

    def __init__(self, zeta=1.2, c=1.0, b=1.0):
        self.zeta, self.c, self.b = zeta, c, b

    def reset(self, space, horizon, rng):
        self.k, self.t = space.n, 0
        self.rewards = [[] for _ in range(self.k)]

    def select(self):
        self.t += 1
        for i in range(self.k):
            if not self.rewards[i]:
                return i
        e = self.zeta * math.log(self.t)
        best, best_value = 0, -math.inf
        for i, xs in enumerate(self.rewards):
            s = len(xs)
            mean = sum(xs) / s
            v = max(sum(x * x for x in xs) / s - mean * mean, 0.0)
            value = mean + math.sqrt(2 * v * e / s) + self.c * 3 * self.b * e / s
            if value > best_value:
                best, best_value = i, value
        return best

    def update(self, action, feedback):
        self.rewards[action].append(float(feedback.reward))
