"""The compiled round loops (numba): one replication after another, every round in machine code.

Each function here is a transcription of the readable, batched implementation it names, with
the same floating-point operations in the same order, so the numbers are identical (tested in
``tests/test_kernels.py`` against :func:`~impactbandits.core.simulate.simulate` run without
kernels). Environments enter as a *pull model* (:func:`~impactbandits.kernels.noise.outcome`):
the expected reward of the m-th pull of arm i in replication r (``values[r or 0, i, m or 0]``)
and its common noise, computed on the spot from the counter (r, i, m), so nothing is stored
per arm and pull.

Imported only when numba is installed (:mod:`impactbandits.kernels`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.kinds import (
    DONE,
    DUCB,
    EXP3,
    GREEDY,
    HKR,
    LAST_GREEDY,
    ONE_STEP,
    PATIL,
    REXP3,
    SPO,
    STOPPED,
    SWUCB,
    UCB1,
)
from impactbandits.kernels.noise import outcome
from impactbandits.kernels.spo import bound_add, capped_linear_sum, linear_sum, optimistic_sum
from impactbandits.kernels.stop import stopped
from impactbandits.kernels.ucb_groups import UCB1_GROUP_ARMS, full_argmax, ucb1_replication


@njit(cache=True, nogil=True)
def _greedy(counts: np.ndarray, sums: np.ndarray) -> int:
    """:class:`~impactbandits.policies.classic.Greedy`: ``argmax`` of the empirical means,
    unpulled arms (+inf) first, ties to the lowest index."""
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        value = sums[i] / counts[i] if counts[i] > 0 else math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@njit(cache=True, nogil=True)
def _padded_index(counts: np.ndarray, sums: np.ndarray, padding: float, numerator: float) -> int:
    """:class:`~impactbandits.policies.nonstationary.DiscountedUCB` /
    :class:`~impactbandits.policies.nonstationary.SlidingWindowUCB` (paper variants):
    ``argmax sums/counts + padding·sqrt(numerator/counts)``, arms with no (window) count first
    (+inf), ties to the lowest index."""
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            value = sums[i] / counts[i] + padding * math.sqrt(numerator / counts[i])
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@njit(cache=True, nogil=True)
def _last_two(
    pulls: np.ndarray, last: np.ndarray, previous: np.ndarray, kind: int, b: float
) -> int:
    """:class:`~impactbandits.policies.single_peaked.LastRewardGreedy` (``argmax`` of the last
    reward, unpulled arms first) and :class:`~impactbandits.policies.single_peaked.
    OneStepOptimistic` (index ``min(1, 2u − l)`` if ``u ≥ l`` else ``u``, with
    ``u = last + ε̄``, ``l = previous − ε̄``; arms with fewer than two pulls first); paper
    variants, ties to the lowest index."""
    best = 0
    best_value = -math.inf
    for i in range(pulls.size):
        if kind == LAST_GREEDY:
            value = last[i] if pulls[i] > 0 else math.inf
        elif pulls[i] >= 2:
            upper = last[i] + b
            lower = previous[i] - b
            value = min(1.0, 2.0 * upper - lower) if upper >= lower else upper
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@njit(cache=True, nogil=True)
def _spo(
    last: np.ndarray,
    previous: np.ndarray,
    width: float,
    remaining: int,
    n: np.ndarray,
    feasible: np.ndarray,
    x: np.ndarray,
    d: np.ndarray,
) -> int:
    """:class:`~impactbandits.policies.single_peaked.SPO` (paper variant) after the initial
    pulls: ``argmax`` of the noise-free index (``width = 0``) or of LP (⋆)'s optimum, ``cap``
    for arms whose (⋆) is infeasible; ties to the lowest index."""
    best = 0
    best_value = -math.inf
    for i in range(last.size):
        if width > 0:
            if not feasible[i]:
                value = min(1.0, last[i] + width) * remaining
            elif n[i] <= 1:
                value = float(remaining)
            else:
                value = capped_linear_sum(x[i], d[i], remaining)
        else:
            slope = last[i] - previous[i]
            if slope >= 0:
                value = optimistic_sum(last[i], max(slope, 0.0), remaining)
            else:
                value = last[i] * remaining
        if value > best_value:
            best, best_value = i, value
    return best


@njit(cache=True, nogil=True)
def _patil(
    pulls: np.ndarray,
    state: np.ndarray,
    scores: np.ndarray,
    bounds: np.ndarray,
    eps: float,
) -> int:
    """:class:`~impactbandits.policies.improving.PatilAnytime` ``select`` after the initial
    pulls, its operations in its order: the optimistic estimates p_i and their rounding bounds,
    the first maximal p_i, then among the estimates tied with it (within the two bounds) the
    fewest pulls, then the lowest index. ``state`` rows: cumulative reward, its Neumaier
    compensation, Σ|reward|, last reward, last increment."""
    k = pulls.size
    most = pulls.max()
    for i in range(k):
        m = most - pulls[i]
        half = m * (m + 1) / 2
        f = state[3, i]
        d = state[4, i]
        scores[i] = (state[0, i] + state[1, i]) + m * f + d * half
        bounds[i] = eps * (state[2, i] + m * abs(f) + half * (abs(f) + abs(f - d)))
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


@njit(cache=True, nogil=True)
def _patil_update(a: int, reward: float, pulls: np.ndarray, state: np.ndarray) -> None:
    """:class:`~impactbandits.policies.improving.PatilAnytime` ``update`` (``pulls`` already
    counts this pull): Neumaier's compensated sum, Σ|reward|, the last increment."""
    total = state[0, a]
    new = total + reward
    if abs(total) >= abs(reward):
        state[1, a] += (total - new) + reward
    else:
        state[1, a] += (reward - new) + total
    state[0, a] = new
    state[2, a] += abs(reward)
    state[4, a] = reward - state[3, a] if pulls[a] > 1 else 0.0
    state[3, a] = reward


@njit(cache=True, nogil=True)
def _hkr_eliminate(
    active: np.ndarray,
    n_active: int,
    pulls: np.ndarray,
    total: np.ndarray,
    last: np.ndarray,
    previous: np.ndarray,
    horizon: int,
    upper: np.ndarray,
    lower: np.ndarray,
) -> int:
    """:class:`~impactbandits.policies.improving.HKR` (paper variant) ``_eliminate`` after a
    phase: the survivors replace ``active[:n_active]`` (index order); returns their number."""
    p = pulls[active[0]]
    if p < 2:
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


@njit(cache=True, nogil=True)
def _exp3(log_w: np.ndarray, p: np.ndarray, gamma: float, u: float) -> int:
    """:class:`~impactbandits.policies.classic.EXP3` ``select`` and
    :meth:`~impactbandits.core.random.BatchRNG.categorical` (inverse CDF with ``u``); fills
    ``p`` with the probabilities used."""
    k = log_w.size
    top = log_w.max()
    total = 0.0
    for i in range(k):
        p[i] = math.exp(log_w[i] - top)
        total += p[i]
    cdf_last = 0.0
    for i in range(k):
        p[i] = (1.0 - gamma) * p[i] / total + gamma / k
        cdf_last += p[i]
    threshold = u * cdf_last
    index = 0
    cdf = 0.0
    for i in range(k):
        cdf += p[i]
        if cdf < threshold:
            index += 1
    return min(index, k - 1)


@njit(cache=True, nogil=True)
def run(
    kind: int,
    params: np.ndarray,
    values: np.ndarray,
    noise: int,
    sigma: float,
    key: np.ndarray,
    replications_ids: np.ndarray,
    uniforms: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds of policy ``kind`` in every replication; writes the checkpoint
    summaries of :class:`~impactbandits.core.simulate.Trajectory` into the ``out_*`` arrays and
    returns :data:`~impactbandits.kernels.kinds.DONE`, or :data:`~impactbandits.kernels.kinds.
    STOPPED` early (the outputs unfinished) once ``stop[0]`` is set
    (:mod:`~impactbandits.kernels.stop`).

    ``params``: UCB1 ``(c,)``; EXP3 ``(γ,)``; Rexp3 ``(γ, Δ)``; D-UCB ``(padding, ξ, discount)``;
    SW-UCB ``(B, ξ, τ)``; one-step-optimistic ``(ε̄,)``; SPO ``(ε̄ or the δ-interval half-width,
    T, initial pulls per arm)`` — the values the policy object resolved in ``reset``.
    ``values``: ``(R or 1, K, M or 1)`` expected rewards (a curve per arm, or a mean per
    replication and arm); ``noise``, ``sigma``, ``key`` and ``replications_ids`` (the
    seeds, as ``uint64``): the common noise (:func:`~impactbandits.kernels.noise.outcome`)."""
    replications, k = replications_ids.size, values.shape[1]
    per_replication = values.shape[0] > 1
    per_pull = values.shape[2] > 1
    n_cp = checkpoints.size
    window = int(params[2]) if kind == SWUCB else 1
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        if kind == UCB1 and k >= UCB1_GROUP_ARMS:
            if ucb1_replication(
                params[0], values[r if per_replication else 0], per_pull, noise, sigma, key,
                replications_ids[r], rounds, checkpoints, out_reward[r], out_expected[r],
                out_pulls[r], out_switches[r], stop,
            ):  # fmt: skip
                return STOPPED
            continue
        counts = np.zeros(k)
        sums = np.zeros(k)
        pulls = np.zeros(k, dtype=np.int64)
        log_w = np.zeros(k)
        p = np.empty(k)
        ring_actions = np.zeros(window, dtype=np.int64)
        ring_rewards = np.zeros(window)
        last = np.full(k, np.nan)
        previous_value = np.full(k, np.nan)
        lp = kind == SPO and params[0] > 0  # SPO's LP (⋆) state per arm (ConcaveBound)
        bound_n = np.zeros(k, dtype=np.int64)
        feasible = np.ones(k, dtype=np.bool_)
        bound_x = np.full(k, np.nan)
        bound_d = np.full(k, math.inf)
        running_max = np.full(k, -math.inf)
        pending = np.full(k, np.nan)
        hull = rounds if lp else 1
        hull_x = np.empty((k, hull), dtype=np.int64)
        hull_y = np.empty((k, hull))
        hull_len = np.zeros(k, dtype=np.int64)
        patil = np.zeros((5, k if kind == PATIL else 1))  # PatilAnytime's per-arm state
        active = np.arange(k)  # HKR's active arms, active[:n_active], and its phase queue
        n_active = k
        queued = 0
        scores = np.empty(k)
        bounds = np.empty(k)
        reward = 0.0
        value = 0.0
        switches = 0
        previous = -1
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            if kind == GREEDY:
                a = _greedy(counts, sums)
            elif kind == UCB1:
                a = full_argmax(counts, sums, params[0] * math.log(t))
            elif kind == EXP3:
                a = _exp3(log_w, p, params[0], uniforms[r, t - 1])
            elif kind == REXP3:
                if (t - 1) % int(params[1]) == 0:
                    log_w[:] = 0.0  # restart at the start of each batch of Δ rounds
                a = _exp3(log_w, p, params[0], uniforms[r, t - 1])
            elif kind == DUCB:
                if t <= k:
                    a = t - 1
                else:
                    total = 0.0
                    for i in range(k):
                        total += counts[i]
                    a = _padded_index(counts, sums, params[0], params[1] * math.log(total))
            elif kind in (LAST_GREEDY, ONE_STEP):
                a = _last_two(pulls, last, previous_value, kind, params[0])
            elif kind == SPO:
                initial = int(params[2])
                if t <= initial * k:
                    a = (t - 1) // initial
                else:
                    remaining = int(params[1]) - (t - 1)
                    a = _spo(
                        last, previous_value, params[0], remaining, bound_n, feasible, bound_x,
                        bound_d,
                    )  # fmt: skip
            elif kind == HKR:
                if n_active > 1 and queued == n_active:  # a phase ends
                    n_active = _hkr_eliminate(
                        active, n_active, pulls, sums, last, previous_value, int(params[0]),
                        scores, bounds,
                    )  # fmt: skip
                    queued = 0
                if n_active == 1:
                    a = active[0]
                else:
                    a = active[queued]
                    queued += 1
            elif kind == PATIL:
                # each arm twice, arm by arm, then Algorithm 1
                a = (t - 1) // 2 if t <= 2 * k else _patil(pulls, patil, scores, bounds, params[0])
            else:  # SWUCB
                plays = min(t - 1, window)
                if plays == 0:
                    a = 0
                else:
                    a = _padded_index(counts, sums, params[0], params[1] * math.log(plays))
            m = pulls[a]
            v = values[r if per_replication else 0, a, m if per_pull else 0]
            x = outcome(noise, sigma, key, replications_ids[r], a, m, v)
            reward += x
            value += v
            pulls[a] = m + 1
            if kind in (EXP3, REXP3):
                log_w[a] += params[0] * x / (p[a] * k)
                top = log_w.max()
                for i in range(k):
                    log_w[i] -= top
            elif kind == DUCB:
                if params[2] != 1.0:
                    for i in range(k):
                        counts[i] *= params[2]
                        sums[i] *= params[2]
                counts[a] += 1.0
                sums[a] += x
            elif kind == SWUCB:
                slot = (t - 1) % window
                if t > window:  # the play of round t − τ leaves the window
                    old = ring_actions[slot]
                    counts[old] -= 1.0
                    sums[old] -= ring_rewards[slot]
                counts[a] += 1.0
                sums[a] += x
                ring_actions[slot] = a
                ring_rewards[slot] = x
            elif kind == PATIL:
                _patil_update(a, x, pulls, patil)
            elif kind == HKR:
                sums[a] += x  # HKR's cumulative observed reward
                previous_value[a] = last[a]
                last[a] = x
            elif kind in (LAST_GREEDY, ONE_STEP, SPO):
                previous_value[a] = last[a]
                last[a] = x
                if lp:
                    bound_add(
                        a, x - params[0], x + params[0], bound_n, feasible, bound_x, bound_d,
                        running_max, pending, hull_x, hull_y, hull_len,
                    )  # fmt: skip
            else:
                counts[a] += 1.0
                sums[a] += x
            if previous >= 0 and a != previous:
                switches += 1
            previous = a
            if c < n_cp and t == checkpoints[c]:
                record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c, reward,
                       value, pulls, switches)  # fmt: skip
                c += 1
    return DONE
