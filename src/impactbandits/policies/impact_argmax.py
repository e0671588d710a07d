"""The compiled forms of the learners' index search (:mod:`impactbandits.core.compiled`).

:func:`table_argmax` is
:func:`~impactbandits.policies.impact_index.enumerate_index` and :func:`pinning_argmax` is
:func:`~impactbandits.policies.impact_index.maximise_index`, for one replication, every sum,
maximum and tie as those functions take them, for the learners' bonus
b(c) = err + sqrt(scale·ln t / c) (AD-UCB: err = 0, scale = K; HD-UCB: scale = 3K). The
compiled steps of :class:`~impactbandits.policies.impact.ActionDependentUCB` and
:class:`~impactbandits.policies.impact.HistoryDependentUCB` call them every round; the tests
check them against the NumPy functions they transcribe.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits.core.compiled import kernel
from impactbandits.oracles.simplex import numpy_sum

__all__ = ["pinning_argmax", "table_argmax"]


@kernel(inline=True)
def _index_bonus(count: float, err: float, scale: float, log_t: float) -> float:
    """``b(count)`` of a positive count: ``err + sqrt(scale·ln t / count)`` (AD-UCB's bonus
    ``sqrt(K·ln t / c)`` is ``0.0 +`` it, the same number)."""
    return err + math.sqrt(scale * log_t / count)


@kernel
def table_argmax(
    table: np.ndarray,
    scores: np.ndarray,
    counts: np.ndarray,
    err: float,
    scale: float,
    log_t: float,
    gathered: np.ndarray,
    levels: np.ndarray,
) -> None:
    """:func:`~impactbandits.policies.impact_index.enumerate_index`'s level vector, written
    into ``levels``; ``gathered``: ``K`` floats of work. A row's score is summed as NumPy sums
    the gathered row (pairwise, from ``0.0``); rows whose minimum count is 0 (bonus +∞) win by
    score, else by score + bonus; ties to the first row."""
    rows, n_groups = table.shape
    best_infinite, best_infinite_score = -1, -np.inf
    best, best_value = -1, -np.inf
    for row in range(rows):
        low = np.inf
        for k in range(n_groups):
            j = table[row, k] - 1
            gathered[k] = scores[k, j]
            if counts[k, j] < low:
                low = counts[k, j]
        score = numpy_sum(gathered, 0, n_groups)
        if low > 0.0:
            if best_infinite < 0:  # once a row has an infinite bonus, no finite one can win
                value = score + _index_bonus(low, err, scale, log_t)
                if best < 0 or value > best_value:
                    best, best_value = row, value
        elif best_infinite < 0 or score > best_infinite_score:
            best_infinite, best_infinite_score = row, score
    chosen = best_infinite if best_infinite >= 0 else best
    for k in range(n_groups):
        levels[k] = table[chosen, k]


@kernel(inline=True)
def _maxplus_row(x: np.ndarray, a: np.ndarray, out: np.ndarray) -> None:
    """``_maxplus`` of one row: ``out[t] = max_{1 ≤ j ≤ t} x[t − j] + a[j − 1]`` (−∞ at t = 0)."""
    for t in range(out.size):
        best = -np.inf
        for j in range(1, t + 1):
            value = x[t - j] + a[j - 1]
            if value > best:
                best = value
        out[t] = best


@kernel
def _lex_first_flagged_one(
    scores: np.ndarray, marks: np.ndarray, free: np.ndarray, flagged: np.ndarray, out: np.ndarray
) -> None:
    """``impact_index._lex_first_flagged`` for one batch row (``free``, ``flagged``:
    ``(K + 1, M + 1)`` work), the level vector written into ``out``."""
    n_groups, total = scores.shape
    for t in range(total + 1):
        free[n_groups, t] = 0.0 if t == 0 else -np.inf
        flagged[n_groups, t] = -np.inf
    for i in range(n_groups - 1, -1, -1):
        for t in range(total + 1):
            best_free, best_flagged = -np.inf, -np.inf
            for j in range(1, t + 1):
                gain = scores[i, j - 1]
                w = free[i + 1, t - j]
                value = w + gain
                if value > best_free:
                    best_free = value
                value = (w if marks[i, j - 1] else flagged[i + 1, t - j]) + gain
                if value > best_flagged:
                    best_flagged = value
            free[i, t] = best_free
            flagged[i, t] = best_flagged
    remaining = total
    need = True
    for i in range(n_groups):
        best_j, best = 0, -np.inf
        for j in range(1, total + 1):
            following = -np.inf
            if j <= remaining:
                table = free if not need or marks[i, j - 1] else flagged
                following = table[i + 1, remaining - j]
            value = scores[i, j - 1] + following
            if j == 1 or value > best:
                best_j, best = j - 1, value
        out[i] = best_j + 1
        if marks[i, best_j]:
            need = False
        remaining = max(remaining - out[i], 0)


@kernel
def pinning_argmax(
    scores: np.ndarray,
    counts: np.ndarray,
    err: float,
    scale: float,
    log_t: float,
    pins: np.ndarray,
    marks: np.ndarray,
    dp: np.ndarray,
    trial: np.ndarray,
    levels: np.ndarray,
) -> None:
    """:func:`~impactbandits.policies.impact_index.maximise_index`'s level vector, written
    into ``levels``. Work: ``pins`` ``(3, K, M)``, ``marks`` ``(K, M)`` booleans, ``dp``
    ``(5, K + 1, M + 1)``, ``trial`` ``K`` integers. Pins (k, j) with the largest candidate are
    grouped by their value G(k, j); each group's flagged DP gives a vector, and the
    lexicographically smallest is returned."""
    n_groups, total = scores.shape
    bonus, pinned, candidate = pins[0], pins[1], pins[2]
    prefix, suffix, others = dp[0], dp[1], dp[2]
    for k in range(n_groups):
        for j in range(total):
            c = counts[k, j]
            bonus[k, j] = _index_bonus(c, err, scale, log_t) if c > 0.0 else np.inf
    run, following = dp[3, 0], dp[3, 1]
    for t in range(total + 1):
        run[t] = 0.0 if t == 0 else -np.inf
    for k in range(n_groups):
        prefix[k, :] = run
        _maxplus_row(run, scores[k], following)
        run[:] = following
    for t in range(total + 1):
        run[t] = 0.0 if t == 0 else -np.inf
    for k in range(n_groups - 1, -1, -1):
        suffix[k, :] = run
        _maxplus_row(run, scores[k], following)
        run[:] = following
    for k in range(n_groups):
        for u in range(total + 1):
            best = -np.inf
            for t in range(u + 1):
                value = suffix[k, u - t] + prefix[k, t]
                if value > best:
                    best = value
            others[k, u] = best
    infinite = False
    for k in range(n_groups):
        for j in range(total):
            pinned[k, j] = scores[k, j] + others[k, total - 1 - j]
            if pinned[k, j] > -np.inf and bonus[k, j] == np.inf:
                infinite = True
    top = -np.inf
    for k in range(n_groups):
        for j in range(total):
            feasible = pinned[k, j] > -np.inf
            if infinite:
                value = pinned[k, j] if feasible and bonus[k, j] == np.inf else -np.inf
            else:
                value = pinned[k, j] + bonus[k, j] if feasible else -np.inf
            candidate[k, j] = value
            if value > top:
                top = value
    first = True
    for pin in range(n_groups * total):
        k, j = pin // total, pin % total
        if candidate[k, j] != top:
            continue
        gamma = pinned[k, j]
        seen = False
        for other in range(pin):  # an earlier optimal pin of the same value: its group is done
            if candidate[other // total, other % total] == top:
                seen = seen or pinned[other // total, other % total] == gamma
        if seen:
            continue
        for a in range(n_groups):
            for b in range(total):
                marks[a, b] = candidate[a, b] == top and pinned[a, b] == gamma
        _lex_first_flagged_one(scores, marks, dp[3], dp[4], trial)
        smaller = first
        for a in range(n_groups):
            if trial[a] != levels[a] and not first:
                smaller = trial[a] < levels[a]
                break
        if smaller:
            levels[:] = trial
        first = False
