"""SRUM on the reward-opportunity bandit inside a compiled loop (Ron, Ben-Porat & Shalit 2021,
"Corporate Social Responsibility via Multi-Armed Bandits", Algorithm 2; full version Algorithm 4).

:func:`run_srum` transcribes, operation for operation and per replication,

* :class:`~impactbandits.policies.opportunity.SelfRegulatedUtilityMaximization` (paper variant;
  ``select``, ``update``, ``_advance`` with the Lines 5–7 tests, ``_finish_phase3``): phases 1–2
  pull every arm once per cycle and re-test after each full cycle with the confidence radius
  c_i = √(2 ln T / N_i) (:data:`~impactbandits.policies.opportunity.CONFIDENCE_SCALE` = 2),
  LCB/UCB(Δ_i) = μ̂_{j*} − μ̂_i ∓ 2c_i and the box C_t = Π [μ̂_i − c_i, μ̂_i + c_i], all clipped
  to [0, 1], against λ ± β and α (Theorem 2's α = K^{2/3} L^{2/3} T^{−1/3} ln^{1/3} T,
  β = T^{−1/3} ln^{1/3} T unless given: the values the policy resolved in ``reset``); phase 3
  pulls the first arm with N_i < ⌊T f(μ̂)_i⌋ (μ̂ frozen when it starts); phase 4 runs the black
  box, UCB1 (:class:`~impactbandits.policies.classic.UCB1`, paper variant, index
  x̄_i + √(c ln t / n_i), c = 2 by default), restarted when phase 4 begins;
* the range oracle of Line 6 and f itself for the built-in fairness functions
  (:mod:`impactbandits.oracles.opportunity_fairness`): constant (zero, uniform; range 0), monotone
  Cartesian f(μ)_i = scale·μ_i^power (``linear``: scale 1/K, power 1; range
  g(upper_i) − g(lower_i)) and softmax (Proposition 1's corners), with NumPy's own orders —
  ``x ** p`` takes NumPy's shortcuts for p = 2, 0.5, −1 and the softmax's Σ_j is NumPy's
  pairwise sum (:func:`pairwise_sum`); ⌊T f(μ̂)_i⌋ is
  :func:`~impactbandits.oracles.opportunity.requirements`;
* :class:`~impactbandits.envs.opportunity.OpportunityBandit`'s ``step``: the reward of the m-th
  pull of arm i in replication r is 1{u < μ_i} (Bernoulli) or the Beta(μ_iκ, (1 − μ_i)κ)
  quantile of u (SciPy's ``betaincinv`` through its C entry point), u the common uniform at
  (r, i, m) (:mod:`impactbandits.kernels.noise`);
* :func:`~impactbandits.core.simulate.simulate`'s bookkeeping, phases and per-arm rewards
  included.

``tests/test_kernels_srum.py`` compares everything with ``simulate(..., compiled=False)``, bit
for bit. Imported only when numba is installed (:mod:`impactbandits.kernels`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.codes import (
    BERNOULLI_REWARDS,
    CONSTANT,
    DONE,
    MONOTONE,
    STOPPED,
)
from impactbandits.kernels.loop import compile_kernel
from impactbandits.kernels.noise import beta_inverse, uniform53
from impactbandits.kernels.stop import stopped
from impactbandits.oracles.opportunity import FLOOR_TOLERANCE
from impactbandits.policies.ucb_buckets import full_argmax as _declared_argmax

#: UCB1's argmax (the black box's select), compiled
full_argmax = compile_kernel(_declared_argmax)

#: NumPy's pairwise summation: blocks of this size are summed with 8 accumulators.
_PAIRWISE_BLOCK = 128


@njit(cache=True, nogil=True)
def _block_sum(x: np.ndarray, start: int, n: int) -> float:
    """NumPy's ``pairwise_sum`` for n ≤ 128 values: a plain loop below 8 values, else 8
    accumulators, combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
    values left over."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += x[i]
        return total
    r0, r1, r2, r3 = x[start], x[start + 1], x[start + 2], x[start + 3]
    r4, r5, r6, r7 = x[start + 4], x[start + 5], x[start + 6], x[start + 7]
    i = 8
    while i < n - (n % 8):
        j = start + i
        r0 += x[j]
        r1 += x[j + 1]
        r2 += x[j + 2]
        r3 += x[j + 3]
        r4 += x[j + 4]
        r5 += x[j + 5]
        r6 += x[j + 6]
        r7 += x[j + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += x[start + i]
        i += 1
    return total


@njit(cache=True, nogil=True)
def pairwise_sum(x: np.ndarray, start: int, n: int) -> float:
    """``np.sum`` of ``x[start:start + n]`` in NumPy's order (``pairwise_sum`` of its add
    reduction): :func:`_block_sum` up to 128 values; beyond, the sum of the two halves (the
    first a multiple of 8 values), each summed the same way. The recursion runs on an explicit
    stack: numba cannot load a self-recursive function from its on-disk cache."""
    if n <= _PAIRWISE_BLOCK:
        return _block_sum(x, start, n)
    depth = 2 * int(math.log2(n)) + 2
    begin = np.empty(depth, dtype=np.int64)
    size = np.empty(depth, dtype=np.int64)
    left = np.empty(depth)  # the finished left half's sum, once its right half is pending
    right_pending = np.zeros(depth, dtype=np.bool_)
    top = 0
    begin[0], size[0] = start, n
    while True:
        m = size[top]
        if m > _PAIRWISE_BLOCK:  # descend into the left half
            half = m // 2
            half -= half % 8
            begin[top + 1], size[top + 1] = begin[top], half
            right_pending[top + 1] = False
            top += 1
            continue
        value = _block_sum(x, begin[top], m)
        while True:  # hand the value up until a node still needs its right half
            if top == 0:
                return value
            top -= 1
            half = size[top] // 2
            half -= half % 8
            if not right_pending[top]:
                left[top] = value
                right_pending[top] = True
                begin[top + 1], size[top + 1] = begin[top] + half, size[top] - half
                right_pending[top + 1] = False
                top += 1
                break
            value = left[top] + value


@njit(cache=True, nogil=True)
def _clip01(x: float) -> float:
    """``np.clip(x, 0.0, 1.0)``: min(max(x, 0), 1) as NumPy orders it (signed zeros too)."""
    x = x if x > 0.0 else 0.0
    return x if x < 1.0 else 1.0


@njit(cache=True, nogil=True, error_model="numpy")
def _power(x: float, p: float) -> float:
    """``x ** p`` of a float64 array and a scalar exponent, with NumPy's shortcuts."""
    if p == 2.0:
        return x * x
    if p == 0.5:
        return math.sqrt(x)
    if p == -1.0:
        return 1.0 / x
    if p == 1.0:
        return x
    return x**p


@njit(cache=True, nogil=True)
def _softmax_entry(h: np.ndarray, i: int, c: float, work: np.ndarray) -> float:
    """``SoftmaxFairness.__call__(h)[i]``: z = c·h, exp(z − max z) / Σ exp(z − max z)."""
    k = h.size
    top = -math.inf
    for j in range(k):
        z = c * h[j]
        work[j] = z
        if z > top:
            top = z
    for j in range(k):
        work[j] = math.exp(work[j] - top)
    return work[i] / pairwise_sum(work, 0, k)


@njit(cache=True, nogil=True, error_model="numpy")
def _fairness(
    kind: int, fp: np.ndarray, gamma: np.ndarray, mu: np.ndarray, out: np.ndarray, work: np.ndarray
) -> None:
    """f(μ) into ``out``; ``fp``: monotone (scale, power), softmax (c,)."""
    k = mu.size
    for i in range(k):
        if kind == CONSTANT:
            out[i] = gamma[i]
        elif kind == MONOTONE:
            out[i] = fp[0] * _power(mu[i], fp[1])
        else:
            out[i] = _softmax_entry(mu, i, fp[0], work)


@njit(cache=True, nogil=True, error_model="numpy")
def _range(
    kind: int,
    fp: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    out: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
) -> None:
    """The range oracle ``FairnessFunction.range(lower, upper)`` into ``out``."""
    k = lower.size
    if kind == CONSTANT:
        for i in range(k):
            out[i] = 0.0
    elif kind == MONOTONE:
        for i in range(k):
            out[i] = fp[0] * _power(upper[i], fp[1]) - fp[0] * _power(lower[i], fp[1])
    else:
        c = fp[0]
        lo, up = (upper, lower) if c < 0 else (lower, upper)
        for i in range(k):
            for j in range(k):  # the maximum's corner: up_i, lo_j elsewhere
                corner[j] = lo[j]
            corner[i] = up[i]
            high = _softmax_entry(corner, i, c, work)
            for j in range(k):  # the minimum's corner: lo_i, up_j elsewhere
                corner[j] = up[j]
            corner[i] = lo[i]
            out[i] = high - _softmax_entry(corner, i, c, work)


@njit(cache=True, nogil=True, error_model="numpy")
def _advance(
    phase: int,
    counts: np.ndarray,
    sums: np.ndarray,
    targets: np.ndarray,
    lam: np.ndarray,
    alpha: float,
    beta: float,
    scale_log: float,
    horizon: float,
    kind: int,
    fp: np.ndarray,
    gamma: np.ndarray,
    buffers: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
) -> int:
    """``SelfRegulatedUtilityMaximization._advance`` (paper variant) for one replication at the
    end of a cycle (phase 0 or 1, every arm pulled): the phase it moves to; fills ``targets``
    when phase 3 starts (index 2; the caller then runs ``_finish_phase3``)."""
    k = counts.size
    mu, radius, lcb = buffers[0], buffers[1], buffers[2]
    lower, upper, spread = buffers[3], buffers[4], buffers[5]
    best = 0
    for i in range(k):
        mu[i] = sums[i] / counts[i] if counts[i] > 0 else 0.0
        radius[i] = math.sqrt(scale_log / counts[i])
        if mu[i] > mu[best]:
            best = i
    stay1 = False
    for i in range(k):
        gap = mu[best] - mu[i]
        width = 2.0 * radius[i]
        lcb[i] = _clip01(gap - width)
        ucb = _clip01(gap + width)
        lower[i] = _clip01(mu[i] - radius[i])
        upper[i] = _clip01(mu[i] + radius[i])
        if ucb > lam[i] + beta and lcb[i] < lam[i] - beta:
            stay1 = True
    _range(kind, fp, lower, upper, spread, corner, work)
    stay2 = False
    for i in range(k):
        if spread[i] > alpha and lcb[i] < lam[i]:
            stay2 = True
    if phase == 0 and stay1:
        return 0
    if stay2:
        return 1
    _fairness(kind, fp, gamma, mu, spread, work)  # f(μ̂), μ̂ as means() gives it
    for i in range(k):
        targets[i] = np.floor(spread[i] * horizon + FLOOR_TOLERANCE) if lcb[i] < lam[i] else 0.0
    return 2


@njit(cache=True, nogil=True)
def run_srum(
    means: np.ndarray,
    rewards: int,
    concentration: float,
    key: np.ndarray,
    replication_ids: np.ndarray,
    kind: int,
    fp: np.ndarray,
    gamma: np.ndarray,
    lam: np.ndarray,
    alpha: float,
    beta: float,
    scale_log: float,
    horizon: int,
    ucb_c: float,
    initial_phase: np.ndarray,
    initial_targets: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    out_phases: np.ndarray,
    out_arm_rewards: np.ndarray,
    out_phase_switches: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds of SRUM in every replication; writes the checkpoint summaries of
    :class:`~impactbandits.core.simulate.Trajectory` into the ``out_*`` arrays and returns
    :data:`~impactbandits.kernels.codes.DONE`, or :data:`~impactbandits.kernels.codes.STOPPED`
    early (the outputs unfinished) once ``stop[0]`` is set (:mod:`~impactbandits.kernels.stop`).

    ``means``: ``(R, K)`` arm means; ``rewards``: :data:`BERNOULLI_REWARDS` or
    :data:`BETA_REWARDS` (concentration κ); ``key``, ``replication_ids``: the common uniforms.
    ``kind``, ``fp``, ``gamma``: the fairness function (:data:`CONSTANT` with γ,
    :data:`MONOTONE` with (scale, power), :data:`SOFTMAX` with (c,)); ``lam``, ``alpha``,
    ``beta``, ``scale_log`` = 2 ln max(T, 2), ``horizon`` T and UCB1's ``ucb_c``: what the
    policy resolved in ``reset``, as are ``initial_phase`` ``(R,)`` (0..3 for phases 1..4) and
    ``initial_targets`` ``(R, K)`` (its ``_advance(initial=True)``)."""
    replications, k = means.shape
    n_cp = checkpoints.size
    t_float = float(horizon)
    buffers = np.empty((6, k))
    corner = np.empty(k)
    work = np.empty(k)
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        counts = np.zeros(k)
        sums = np.zeros(k)
        targets = initial_targets[r].copy()
        inner_counts = np.zeros(k)
        inner_sums = np.zeros(k)
        inner_t = 0
        phase = initial_phase[r]
        cycle = 0
        pulls = np.zeros(k, dtype=np.int64)
        arm_rewards = np.zeros(k)
        phase_counts = np.zeros(out_phases.shape[2], dtype=np.int64)
        reward = 0.0
        value = 0.0
        switches = 0
        phase_switches = 0
        previous = -1
        previous_phase = -1
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            if phase <= 1:
                a = cycle
            elif phase == 2:
                a = 0  # the first arm below its requirement (argmax of N < R)
                for i in range(k):
                    if counts[i] < targets[i]:
                        a = i
                        break
            else:
                inner_t += 1
                a = full_argmax(inner_counts, inner_sums, ucb_c * math.log(inner_t))
            phase_counts[phase] += 1
            if previous_phase >= 0 and phase != previous_phase:
                phase_switches += 1
            previous_phase = phase
            m = pulls[a]
            v = means[r, a]
            u = uniform53(key[0], key[1], replication_ids[r], a, m)
            if rewards == BERNOULLI_REWARDS:
                x = 1.0 if u < v else 0.0
            else:
                x = beta_inverse(v * concentration, (1.0 - v) * concentration, u)
            counts[a] += 1.0
            sums[a] += x
            if phase == 3:  # before phase 4 the black box is restarted anyway
                inner_counts[a] += 1.0
                inner_sums[a] += x
            elif phase <= 1:
                cycle += 1
                if cycle == k:
                    cycle = 0
                    phase = _advance(
                        phase, counts, sums, targets, lam, alpha, beta, scale_log, t_float,
                        kind, fp, gamma, buffers, corner, work,
                    )  # fmt: skip
            if phase == 2:  # _finish_phase3: every requirement met
                done = True
                for i in range(k):
                    if counts[i] < targets[i]:
                        done = False
                        break
                if done:
                    phase = 3
                    inner_counts[:] = 0.0
                    inner_sums[:] = 0.0
                    inner_t = 0
            reward += x
            value += v
            pulls[a] = m + 1
            arm_rewards[a] += x
            if previous >= 0 and a != previous:
                switches += 1
            previous = a
            if c < n_cp and t == checkpoints[c]:
                record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c, reward,
                       value, pulls, switches)  # fmt: skip
                for i in range(k):
                    out_arm_rewards[r, c, i] = arm_rewards[i]
                for p in range(phase_counts.size):
                    out_phases[r, c, p] = phase_counts[p]
                out_phase_switches[r, c] = phase_switches
                c += 1
    return DONE
