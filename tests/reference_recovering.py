"""Plainly written references for recovering bandits (tests/test_recovering.py).

Written from the model and the authors' code as stated in :mod:`impactbandits.envs.recovering`
and :mod:`impactbandits.policies.recovering` (github.com/ciarapb/recovering_bandits,
``functs/gen_functs.py``, ``rgpucb_functs.py``, ``drgpucb_functs.py``, ``rgpts_functs.py``,
``drgpts_functs.py``), independently of :mod:`impactbandits.oracles.recovering`: Python lists
and loops, one replication, every arm sequence enumerated, each planned ``z`` found by playing
the plan forward.

The learners' GP posterior is either the textbook formula over the raw observations
(``np.linalg.inv``; :func:`textbook_posterior`) or the library's grid form
(:func:`impactbandits.policies.gp.grid_posterior`, itself checked against the textbook formula
in the tests), which makes the comparison bit for bit: everything else — the rounds, the plans,
the index, β, the draws and their positions in the stream, the sums and their order, ties — is
written here again.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy


def step_z(z: list[int], arm: int, z_max: int) -> list[int]:
    """Every arm's z after pulling ``arm``: +1 capped at ``z_max``, the pulled arm's 0."""
    out = [min(x + 1, z_max) for x in z]
    out[arm] = 0
    return out


def rewards_along(values, initial_z: int, arms) -> list[float]:
    """Expected reward of every round along ``arms``."""
    z_max = len(values[0]) - 1
    z = [initial_z] * len(values)
    out = []
    for a in arms:
        out.append(float(values[a][z[a]]))
        z = step_z(z, a, z_max)
    return out


def brute_force_optimum(values, initial_z: int, horizon: int) -> float:
    """The best total expected reward over every arm sequence of length ``horizon``."""
    best = -math.inf if horizon else 0.0
    for arms in itertools.product(range(len(values)), repeat=horizon):
        best = max(best, sum(rewards_along(values, initial_z, arms)))
    return best


def planned_z(z: list[int], plan, z_max: int) -> list[int]:
    """The z each pull of ``plan`` meets, by playing it forward from ``z``."""
    out = []
    for a in plan:
        out.append(z[a])
        z = step_z(z, a, z_max)
    return out


def all_plans(k: int, d: int, repetitions: bool = True):
    if repetitions:
        return list(itertools.product(range(k), repeat=d))
    return list(itertools.permutations(range(k), d))


def best_block(values, z: list[int], d: int) -> tuple[tuple[int, ...], float]:
    """The first ``d``-arm sequence (arms may repeat) of highest total expected reward from
    ``z``, and that total."""
    z_max = len(values[0]) - 1
    best, best_total = (), -math.inf
    for plan in all_plans(len(values), d):
        total = 0.0
        for a, za in zip(plan, planned_z(z, plan, z_max), strict=True):
            total = total + float(values[a][za])
        if total > best_total:
            best, best_total = plan, total
    return best, best_total


def lookahead_arms(values, initial_z: int, d: int, rounds: int) -> list[int]:
    """The oracle d-step lookahead policy: blocks of ``d`` from round 1."""
    z_max = len(values[0]) - 1
    z = [initial_z] * len(values)
    arms: list[int] = []
    while len(arms) < rounds:
        plan, _ = best_block(values, z, d)
        for a in plan[: rounds - len(arms)]:
            arms.append(a)
            z = step_z(z, a, z_max)
    return arms


def lookahead_regret(values, initial_z: int, d: int, arms) -> list[float]:
    """The authors' d-step lookahead regret (``RGPUCBds``), cumulative after every round:
    instantaneous in the first K rounds, then per block of d from round K + 1 the best plan's
    value from the learner's z minus the learner's pulls, spread evenly over the block."""
    k, z_max = len(values), len(values[0]) - 1
    z = [initial_z] * k
    out, total, t = [], 0.0, 0
    while t < len(arms):
        if t < k:
            a = arms[t]
            total += max(float(values[j][z[j]]) for j in range(k)) - float(values[a][z[a]])
            out.append(total)
            z = step_z(z, a, z_max)
            t += 1
            continue
        block = arms[t : t + d]
        _, best = best_block(values, z, d)
        got = sum(rewards_along_from(values, z, block))
        for a in block:
            total += (best - got) / d
            out.append(total)
            z = step_z(z, a, z_max)
            t += 1
    return out


def rewards_along_from(values, z: list[int], arms) -> list[float]:
    z_max = len(values[0]) - 1
    out = []
    for a in arms:
        out.append(float(values[a][z[a]]))
        z = step_z(z, a, z_max)
    return out


def se(z1: float, z2: float, lengthscale: float, variance: float) -> float:
    return variance * math.exp(-0.5 * ((z1 - z2) / lengthscale) ** 2)


def textbook_posterior(zs, ys, z_max, lengthscale, variance, noise):
    """Posterior mean and covariance of f on 0..z_max from raw observations ``(zs, ys)``:
    μ = k_*ᵀ (K_XX + σ²I)⁻¹ y, Σ = K_** − k_*ᵀ (K_XX + σ²I)⁻¹ k_* (Rasmussen & Williams 2006,
    eqs. 2.23–2.24), with ``np.linalg.inv``."""
    grid = range(z_max + 1)
    prior = np.array([[se(a, b, lengthscale, variance) for b in grid] for a in grid])
    if not zs:
        return np.zeros(z_max + 1), prior
    kxx = np.array([[se(a, b, lengthscale, variance) for b in zs] for a in zs])
    cross = np.array([[se(a, b, lengthscale, variance) for b in zs] for a in grid])
    inv = np.linalg.inv(kxx + noise**2 * np.eye(len(zs)))
    return cross @ inv @ np.asarray(ys, dtype=float), prior - cross @ inv @ cross.T


class _PlainGP(SimplePolicy):
    """The rounds of both learners: arms 0 … K−1 once, then every d rounds a plan."""

    def __init__(self, lookahead=1, repetitions=True, posterior="grid", stream=None):
        self.d, self.repetitions, self.posterior, self.stream = (
            lookahead, repetitions, posterior, stream)  # fmt: skip

    def reset(self, space, horizon, rng):
        known = space.known
        self.k, self.z_max = space.n, int(known["z_max"])
        self.z = [int(x) for x in known["initial_z"]]
        self.sigma = float(known["sigma"])
        self.ell, self.var0 = float(known["lengthscale"]), float(known["kernel_variance"])
        self.obs: list[list[tuple[int, float]]] = [[] for _ in range(self.k)]
        self.t, self.queue = 0, []

    def arm_posterior(self, arm):
        data = self.obs[arm]
        if self.posterior == "textbook":
            return textbook_posterior([z for z, _ in data], [y for _, y in data], self.z_max,
                                      self.ell, self.var0, self.sigma)  # fmt: skip
        from impactbandits.oracles.recovering import se_kernel
        from impactbandits.policies.gp import grid_posterior

        counts, sums = np.zeros(self.z_max + 1), np.zeros(self.z_max + 1)
        for z, y in data:
            counts[z] += 1.0
            sums[z] += y
        mean, cov = grid_posterior(se_kernel(self.z_max, self.ell, self.var0), counts[None],
                                   sums[None], self.sigma)  # fmt: skip
        return mean[0], cov[0]

    def select(self):
        self.t += 1
        if self.t <= self.k:
            return self.t - 1
        if not self.queue:
            self.queue = list(self.choose())
        return self.queue.pop(0)

    def update(self, action, feedback: Feedback):
        a = int(action)
        self.obs[a].append((self.z[a], float(feedback.reward)))
        self.z = step_z(self.z, a, self.z_max)


class PlainRGPUCB(_PlainGP):
    """``UCBSeqRep``: Σ μ + √β √(Σ (v + σ²) + 2 Σ same-arm covariances), β = 2 log((t + d − 1)²
    K^d z_max), t the rounds played."""

    deterministic = True

    def __init__(self, lookahead=1, repetitions=True, posterior="grid", include_noise=None):
        super().__init__(lookahead, repetitions, posterior)
        self.include_noise = include_noise is not False  # None: GPy's predict, with σ²

    def indices(self) -> list[float]:
        """Every plan's index (plans in lexicographic order) in the round being chosen."""
        post = [self.arm_posterior(a) for a in range(self.k)]
        t = self.t - 1  # rounds already played
        beta = 2.0 * math.log((t + self.d - 1) ** 2 * self.k**self.d * self.z_max)
        extra = self.sigma**2 if self.include_noise else 0.0
        out = []
        for plan in all_plans(self.k, self.d, self.repetitions):
            zs = planned_z(self.z, plan, self.z_max)
            mean, var = 0.0, 0.0
            for a, z in zip(plan, zs, strict=True):
                mean = mean + post[a][0][z]
                var = var + (post[a][1][z, z] + extra)
            for first, second in itertools.combinations(range(self.d), 2):
                if plan[first] == plan[second]:
                    var = var + 2.0 * post[plan[first]][1][zs[first], zs[second]]
            out.append(mean + math.sqrt(beta) * math.sqrt(max(var, 0.0)))
        return out

    def choose(self):
        plans = all_plans(self.k, self.d, self.repetitions)
        index = self.indices()
        return plans[max(range(len(plans)), key=lambda p: (index[p], -p))]


class PlainRGPTS(_PlainGP):
    """``GetTS`` (d = 1: θ_i ~ N(μ_i(z_i), v_i(z_i) + σ²)) and ``SampleFuncts`` / ``TSSeq``
    (d > 1: one joint sample of each f_i, without noise), the normals read from the stream
    ``stream`` (key words and replication) at the positions the library documents."""

    def __init__(self, stream, lookahead=1, repetitions=True, posterior="grid",
                 include_noise=None):  # fmt: skip
        super().__init__(lookahead, repetitions, posterior, stream)
        self.include_noise = (lookahead == 1) if include_noise is None else include_noise

    def normal(self, channel):
        from impactbandits.core.streams import stream_normal

        return stream_normal(self.stream, channel, self.t, 0)

    def choose(self):
        post = [self.arm_posterior(a) for a in range(self.k)]
        size = self.z_max + 1
        if self.d == 1:
            extra = self.sigma**2 if self.include_noise else 0.0
            theta = []
            for a in range(self.k):
                mu, cov = post[a]
                spread = math.sqrt(max(cov[self.z[a], self.z[a]], 0.0) + extra)
                theta.append(mu[self.z[a]] + spread * self.normal(a))
            return (max(range(self.k), key=lambda i: (theta[i], -i)),)
        draws = []
        for a in range(self.k):
            mu, cov = post[a]
            eigenvalues, vectors = np.linalg.eigh(cov)
            root = vectors * np.sqrt(np.maximum(eigenvalues, 0.0))
            draw = mu.copy()
            for g in range(size):
                draw = draw + root[:, g] * self.normal(a * size + g)
            if self.include_noise:
                noise = np.array([self.normal(self.k * size + a * size + g) for g in range(size)])
                draw = draw + self.sigma * noise
            draws.append(draw)
        best, best_total = None, -math.inf
        for plan in all_plans(self.k, self.d, self.repetitions):
            total = 0.0
            for a, z in zip(plan, planned_z(self.z, plan, self.z_max), strict=True):
                total = total + draws[a][z]
            if total > best_total:
                best, best_total = plan, total
        return best
