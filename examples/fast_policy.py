"""A policy of your own that runs compiled: KL-UCB for Bernoulli rewards, written twice in one file.

    .venv/bin/python examples/fast_policy.py

The class is the readable form (batched NumPy, what the library runs without numba); the three
``@kernel`` functions are its compiled step, one replication at a time, which the library's
generic round loop compiles with numba (a dependency of the package). Name it in a
spec as ``kind = "fast_policy:KLUCB"`` with this directory on ``PYTHONPATH``.

KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded stochastic bandits and beyond",
COLT, Algorithm 1 with c = 0): pull each arm once, then the arm maximising
``max{q ∈ [x̄_i, 1] : n_i · kl(x̄_i, q) ≤ ln t}``, with kl the Bernoulli divergence; ties to the
lowest arm. The upper bound is found by bisection, a fixed number of halvings, so that both forms
do the same floating-point operations and agree bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits import CompiledStep, Policy, kernel

#: Halvings of the bisection for the upper confidence bound (2⁻³² of the interval).
HALVINGS = 32


@kernel
def bernoulli_kl(p: float, q: float) -> float:
    """kl(p, q) for Bernoulli laws, with 0 ln 0 = 0 and q kept inside (0, 1)."""
    eps = 1e-15
    q = min(max(q, eps), 1.0 - eps)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


@kernel
def upper_bound(mean: float, pulls: float, level: float) -> float:
    """The largest q in [mean, 1] with pulls · kl(mean, q) <= level, by bisection."""
    low, high = mean, 1.0
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        if pulls * bernoulli_kl(mean, middle) <= level:
            low = middle
        else:
            high = middle
    return low


class KLUCB(Policy):
    """KL-UCB for rewards in [0, 1] (module docstring). Anytime and deterministic."""

    deterministic = True

    def reset(self, space, horizon, rng):
        self.n, self.t = space.n, 0
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)

    def select(self):
        self.t += 1
        actions = np.empty(self.counts.shape[0], dtype=np.int64)
        level = math.log(self.t)
        for r in range(self.counts.shape[0]):  # the readable form: the same bound, row by row
            actions[r] = _choose(self.counts[r], self.sums[r], level)
        return actions

    def update(self, actions, feedback):
        self.counts[self.rows, actions] += 1.0
        self.sums[self.rows, actions] += feedback.reward

    def compiled_step(self):
        return CompiledStep(_init, _select, _update, np.zeros(0))


@kernel
def _choose(counts: np.ndarray, sums: np.ndarray, level: float) -> int:
    best, best_value = 0, -math.inf
    for i in range(counts.size):
        if counts[i] == 0:
            return i  # each arm once, in index order
        value = upper_bound(sums[i] / counts[i], counts[i], level)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _init(params, k, rounds):
    return np.zeros(k), np.zeros(k)


@kernel
def _select(state, params, t, u):
    counts, sums = state
    return _choose(counts, sums, math.log(t))


@kernel
def _update(state, params, t, arm, reward):
    counts, sums = state
    counts[arm] += 1.0
    sums[arm] += reward


if __name__ == "__main__":
    import time

    from impactbandits import BatchRNG, EnvironmentRandom
    from impactbandits.envs.stationary import BernoulliBandit
    from impactbandits.kernels import simulate

    means = [0.3, 0.5, 0.55, 0.6]
    for compiled in (True, False):
        start = time.process_time()
        run = simulate(
            BernoulliBandit(means),
            KLUCB(),
            10_000,
            None,
            np.array([10_000]),
            EnvironmentRandom(1, 2, list(range(100))),
            BatchRNG.from_key(1, (3,), list(range(100))),
            compiled=compiled,
        )
        regret = (10_000 * max(means) - run.expected[:, -1]).mean()
        label = "compiled" if compiled else "readable"
        print(f"{label}: mean regret {regret:.2f}, {time.process_time() - start:.2f} CPU s")
