"""Single-peaked curves: the machinery of ``optimal_allocation(..., method="single-peaked")``.

The setting and notation are those of :mod:`impactbandits.oracles.allocation`, whose
:func:`~impactbandits.oracles.allocation.optimal_allocation` calls :func:`_single_peaked_counts`:
subset enumeration over the rising arms, greedy tails (:func:`_prefix_counts`, which the
decreasing method uses too) and a monotone-argmax convolution (:func:`_monotone_row_argmax`,
vectorised with :func:`_ragged_arange`). The exactness argument is in the docstring of
:func:`_single_peaked_counts`. Every name here is private; moved unchanged from
``impactbandits.oracles.allocation``.
"""

from __future__ import annotations

import numpy as np

from impactbandits.errors import SpecError

_SP_MAX_RISING_ARMS = 20
"""The single-peaked method visits 2^R subsets of the R rising arms; beyond this, refuse."""


def _prefix_counts(labels: np.ndarray, n_arms: int, width: int) -> np.ndarray:
    """``out[r, i]`` = how many of ``labels[:r]`` equal ``i``, for ``r < width``."""
    counts = np.zeros((width, n_arms), dtype=np.int64)
    np.cumsum(labels[: width - 1, None] == np.arange(n_arms), axis=0, out=counts[1:])
    return counts


def _single_peaked_counts(curves: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """Single-peaked curves: subset enumeration + greedy tails + monotone-argmax convolution.

    Each ``f_i`` is nondecreasing up to its peak and nonincreasing after it (Lindner et al.
    2021, Definition 1, *without* the concavity of the rising part, which is not needed). Let
    ``q_i`` be the number of pulls before arm ``i`` first reaches its maximum (0-based first
    argmax). Then ``F_i`` is convex on ``{0..q_i}`` (increments ``f_i(1..q_i)`` nondecreasing) and
    concave on ``{q_i..T}`` (increments ``f_i(q_i+1) ≥ f_i(q_i+2) ≥ …``: the peak and the tail).

    *Exchange lemma.* Some optimal allocation has at most one arm with ``0 < n_i < q_i``. If arms
    ``i ≠ j`` both do, ``d ↦ F_i(n_i + d) + F_j(n_j - d)`` is convex while both stay in
    ``[0, q_·]``, so its maximum over that integer interval sits at an end, where one of the two
    arms is at ``0`` or at ``q_·``; repeat (the number of such arms drops each time).

    So ``OPT(h)`` is the best, over sets ``S`` of arms with ``n_i ≥ q_i`` ("past the rise"),
    over one optional partial arm ``j ∉ S`` and its pulls ``0 ≤ m ≤ q_j`` (all other arms
    unpulled), of ``Σ_{i∈S} F_i(q_i) + F_j(m) + g_S(h - Q_S - m)``, ``Q_S = Σ_{i∈S} q_i``, where
    ``g_S(r)`` is the best reward of ``r`` further pulls on the concave parts of ``S``: by the
    argument of the decreasing case, the sum of the ``r`` largest tail values, taken as prefixes
    (greedy merge). Every candidate is a feasible allocation, and the lemma shows one of them is
    optimal, so the maximum is exact. Arms with ``q_i = 0`` are always put in ``S`` (in ``S`` with
    no tail pulls = unpulled), so only the ``2^R`` subsets of the ``R`` rising arms are visited.

    *Monotone argmax.* For fixed ``(S, j)``, ``C(x) = max_m a(m) + g(x - m)`` with ``g = g_S``
    concave and ``a = F_j`` on ``{0..q_j}`` arbitrary. For ``x < x'`` and ``m < m'`` (all four
    entries feasible), concavity gives ``g(x'-m') - g(x-m') ≥ g(x'-m) - g(x-m)``, so if ``m'`` is
    at least as good as ``m`` at row ``x`` it is at row ``x'`` too, and if ``m'`` is strictly better
    at ``x`` it is strictly better at ``x'``. (The feasible ``(x, m)`` form a band,
    ``max(0, x - len g + 1) ≤ m ≤ min(x, q_j)``, and the entries the argument compares always lie
    inside it.) Hence divide and conquer on rows is exact (some optimum of every row lies between
    the optima found for the rows bracketing it), which
    :func:`_monotone_row_argmax` runs level by level, vectorised over all rows of a level and all
    partial arms of ``S``; segments whose column range has shrunk to one column are filled at once.

    Cost: one stable merge of the tails (O(N T log N)); per subset an O(N T) filter and running
    sum of the merged tails and, per partial arm ``j``, O(T + q_j log T) for the argmax search —
    in total ``O(2^R (N T + Σ_j q_j log T))``: for fixed ``N``, ``O(T log T)`` or better.
    """
    n_arms, horizon = curves.shape
    width = horizon + 1
    rise = np.argmax(curves, axis=1)
    rising = [int(i) for i in np.flatnonzero(rise > 0)]
    always = [int(i) for i in np.flatnonzero(rise == 0)]
    if len(rising) > _SP_MAX_RISING_ARMS:
        raise SpecError(
            "method",
            f"'single-peaked' would visit 2^{len(rising)} subsets of rising arms "
            f"(limit 2^{_SP_MAX_RISING_ARMS}); use 'general' or 'auto'",
        )
    block_value = cumulative[np.arange(n_arms), rise]

    tails = np.concatenate([curves[i, rise[i] :] for i in range(n_arms)])
    tail_labels = np.repeat(np.arange(n_arms), horizon - rise)
    order = np.argsort(-tails, kind="stable")
    merged_values = tails[order]
    merged_labels = tail_labels[order]

    best = np.full(width, -np.inf)
    winner_set = np.full(width, -1, dtype=np.int64)
    winner_arm = np.full(width, -1, dtype=np.int64)
    winner_pulls = np.zeros(width, dtype=np.int64)
    subsets: list[list[int]] = []

    def offer(start: int, candidate: np.ndarray, set_id: int, arm: int, pulls: np.ndarray) -> None:
        stop = start + candidate.size
        better = candidate > best[start:stop]
        rows = np.flatnonzero(better) + start
        best[rows] = candidate[better]
        winner_set[rows] = set_id
        winner_arm[rows] = arm
        winner_pulls[rows] = pulls[better] if pulls.size else 0

    for bits in range(1 << len(rising)):
        members = always + [arm for k, arm in enumerate(rising) if bits >> k & 1]
        base_pulls = int(rise[members].sum())
        if base_pulls > horizon:
            continue
        set_id = len(subsets)
        subsets.append(members)
        in_set = np.zeros(n_arms, dtype=bool)
        in_set[members] = True
        tail_values = merged_values[in_set[merged_labels]][: horizon - base_pulls]
        tail_best = np.zeros(tail_values.size + 1)
        np.cumsum(tail_values, out=tail_best[1:])
        base_value = float(block_value[members].sum())
        no_pulls = np.zeros(0, dtype=np.int64)
        offer(base_pulls, base_value + tail_best, set_id, -1, no_pulls)

        partial = [arm for arm in rising if not in_set[arm]]
        if not partial:
            continue
        spare = horizon - base_pulls
        heads = [cumulative[arm, : min(int(rise[arm]), spare) + 1] for arm in partial]
        n_rows = np.array([min(spare, head.size - 1 + tail_values.size) + 1 for head in heads])
        picks = _monotone_row_argmax(heads, tail_best, n_rows)
        for arm, head, rows, pulls in zip(partial, heads, n_rows, picks, strict=True):
            candidate = base_value + head[pulls] + tail_best[np.arange(rows) - pulls]
            offer(base_pulls, candidate, set_id, arm, pulls)

    if not np.all(np.isfinite(best)):  # pragma: no cover - guaranteed by the exchange lemma
        raise AssertionError("single-peaked oracle left a horizon uncovered")

    counts = np.zeros((width, n_arms), dtype=np.int64)
    for set_id in np.unique(winner_set):
        members = subsets[set_id]
        rows = np.flatnonzero(winner_set == set_id)
        base_pulls = int(rise[members].sum())
        in_set = np.zeros(n_arms, dtype=bool)
        in_set[members] = True
        labels = merged_labels[in_set[merged_labels]][: horizon - base_pulls]
        taken = rows - base_pulls - winner_pulls[rows]
        per_arm = _prefix_counts(labels, n_arms, labels.size + 1)
        counts[rows[:, None], members] = rise[members] + per_arm[taken[:, None], members]
        extended = winner_arm[rows] >= 0
        counts[rows[extended], winner_arm[rows[extended]]] = winner_pulls[rows[extended]]
    return counts


def _monotone_row_argmax(
    heads: list[np.ndarray], tail: np.ndarray, n_rows: np.ndarray
) -> list[np.ndarray]:
    """Per problem ``p`` and row ``x``: an optimal ``m`` of ``max_m heads[p][m] + tail[x - m]``.

    Rows are ``x = 0 .. n_rows[p]-1``; ``m`` ranges over ``0 ≤ m < len(heads[p])`` with
    ``0 ≤ x - m < len(tail)``; ``tail`` must be concave (then optimal ``m`` can be taken
    nondecreasing in ``x``; see :func:`_single_peaked_counts`). Divide and conquer on rows, run
    breadth-first: every level solves the middle rows of all open segments (of all problems) in
    one ragged, vectorised pass, keeping the leftmost maximiser. The bracketing argument only uses
    integer bounds, so rounding can at worst cost a few ulps, never feasibility. Work per problem
    is O(rows + len(head) · log rows).
    """
    tail_last = tail.size - 1
    head_last = np.array([head.size - 1 for head in heads], dtype=np.int64)
    head_flat = np.concatenate(heads)
    head_start = np.cumsum(head_last + 1) - (head_last + 1)
    row_start = np.cumsum(n_rows) - n_rows
    picks = np.empty(int(n_rows.sum()), dtype=np.int64)

    problem = np.arange(len(heads), dtype=np.int64)
    lo_row = np.zeros(len(heads), dtype=np.int64)
    hi_row = np.asarray(n_rows, dtype=np.int64) - 1
    lo_col = np.zeros(len(heads), dtype=np.int64)
    hi_col = head_last.copy()
    while problem.size:
        settled = lo_col == hi_col
        if settled.any():
            lengths = hi_row[settled] - lo_row[settled] + 1
            first = row_start[problem[settled]] + lo_row[settled]
            picks[_ragged_arange(first, lengths)] = np.repeat(lo_col[settled], lengths)
            open_ = ~settled
            problem, lo_row, hi_row = problem[open_], lo_row[open_], hi_row[open_]
            lo_col, hi_col = lo_col[open_], hi_col[open_]
            if not problem.size:
                break
        mid = (lo_row + hi_row) // 2
        first_col = np.maximum(lo_col, mid - tail_last)
        last_col = np.minimum(hi_col, mid)
        lengths = last_col - first_col + 1
        cols = _ragged_arange(first_col, lengths)
        segment = np.repeat(np.arange(problem.size), lengths)
        totals = head_flat[head_start[problem][segment] + cols] + tail[mid[segment] - cols]
        starts = np.cumsum(lengths) - lengths
        top = np.maximum.reduceat(totals, starts)
        position = np.where(totals == top[segment], np.arange(totals.size), totals.size)
        chosen = cols[np.minimum.reduceat(position, starts)]
        picks[row_start[problem] + mid] = chosen

        left = mid > lo_row
        right = mid < hi_row
        problem = np.concatenate([problem[left], problem[right]])
        lo_row, hi_row = (
            np.concatenate([lo_row[left], mid[right] + 1]),
            np.concatenate([mid[left] - 1, hi_row[right]]),
        )
        lo_col, hi_col = (
            np.concatenate([lo_col[left], chosen[right]]),
            np.concatenate([chosen[left], hi_col[right]]),
        )
    return np.split(picks, row_start[1:])


def _ragged_arange(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for each ``(s, n)``."""
    offsets = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum())) + np.repeat(starts - offsets, lengths)
