"""Exact optimal allocations of pulls for rested bandits with known deterministic reward curves.

Setting (Heidari, Kearns & Roth, "Tight policy regret bounds for improving and decaying bandits",
IJCAI 2016; Lindner, Heidari & Krause, "Addressing the long-term impact of ML decisions via policy
regret", 2021, Section 2 and Appendix B): arm ``i`` pays ``f_i(m)`` on its ``m``-th pull and
``F_i(m) = f_i(1) + … + f_i(m)`` (``F_i(0) = 0``). The total reward of a policy depends only on how
often it pulls each arm, so the best total reward over ``h`` pulls is

    OPT(h) = max { Σ_i F_i(n_i) : n_i ≥ 0 integers, Σ_i n_i = h }.

:func:`optimal_allocation` returns ``OPT(h)`` and one optimal count vector for every horizon
``h = 0, …, T`` at once. Methods (``N`` arms, ``T`` pulls; all exact):

- ``general``: any curves; max-plus dynamic programme over arms, O(N T²) time, O(N T) memory.
- ``increasing``: every ``f_i`` nondecreasing; best single arm, O(N T).
- ``decreasing``: every ``f_i`` nonincreasing; greedy merge, O(N T log N).
- ``single-peaked``: every ``f_i`` nondecreasing, then nonincreasing; subset enumeration with
  greedy tails and a monotone-argmax convolution, O(2^R (N T + Σ_j q_j log T)).
- ``enumerate``: any curves, tiny instances only (the test reference); O(C(T+N, N) N).

(``R`` = number of arms whose maximum is not at their first pull, ``q_j`` = number of pulls
before arm ``j`` first reaches its maximum.) ``auto`` picks the most specific shape the curves
have, checked exactly (no tolerance), and never a method that is not valid for them; for
single-peaked curves it uses the general DP instead when that is estimated to be cheaper (small
``T``, many rising arms). Each method's exactness argument is in its function's docstring.

The authors of Lindner et al. (2021) computed OPT by brute force (``OptimalSolver`` in
github.com/david-lindner/single-peaked-bandits): every split of ``T`` pulls over the arms, i.e.
C(T+3, 3) ≈ T³/6 count vectors for one horizon with 4 arms and about T⁴/24 evaluations to cover
every horizon up to ``T`` (increasing and constant bandits used the single-arm shortcut). The
methods here cover all horizons at once in O(N T²) for any curves and in roughly linear time for
the shapes the papers study.

``values[h]`` is always recomputed from ``counts[h]`` as ``F_0(n_0) + F_1(n_1) + …`` (in arm
order, ``F_i`` the running sums of ``curves[i]``), so a returned allocation achieves its value
exactly in floating point; different methods may differ in the last bits and, on ties, in which
optimal count vector they return.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from impactbandits.errors import SpecError

__all__ = ["METHODS", "SHAPES", "Allocation", "detect_shape", "optimal_allocation"]

METHODS = ("auto", "general", "increasing", "decreasing", "single-peaked", "enumerate")
"""Accepted values of ``optimal_allocation(..., method=...)``."""

SHAPES = ("increasing", "decreasing", "single-peaked", "general")
"""Shapes :func:`detect_shape` can report, most specific first."""

_SHAPE_WORDS = {
    "increasing": "nondecreasing",
    "decreasing": "nonincreasing",
    "single-peaked": "single-peaked (nondecreasing, then nonincreasing)",
}

_DP_BLOCK_ENTRIES = 1 << 22
"""Largest (rows × columns) block of the general DP evaluated at once: 32 MiB of float64."""

_ENUMERATE_MAX_VECTORS = 5_000_000
"""Largest number of count vectors (C(T+N, N)) that ``enumerate`` agrees to visit."""

_SP_WORK_FACTOR = 8
"""Rough cost, in DP-entry units, of one element of the single-peaked method's O(N T) passes."""

_SP_MAX_RISING_ARMS = 20
"""The single-peaked method visits 2^R subsets of the R rising arms; beyond this, refuse."""


@dataclass(frozen=True)
class Allocation:
    """Optimal total rewards and one optimal count vector for every horizon ``0..T``.

    ``values[h] = OPT(h)`` (``values[0] = 0``), shape ``(T+1,)``; ``counts[h]`` is an optimal
    count vector for horizon ``h`` (int64, nonnegative, sums to ``h``), shape ``(T+1, N)``;
    ``method`` is the method that produced them (what ``"auto"`` resolved to; empty if built by
    hand). Arrays returned by :func:`optimal_allocation` are read-only.
    """

    values: np.ndarray
    counts: np.ndarray
    method: str = ""


# ---------------------------------------------------------------------------------------------
# Input checks and shape detection
# ---------------------------------------------------------------------------------------------


def _as_curves(curves: np.ndarray) -> np.ndarray:
    array = np.asarray(curves, dtype=float)
    if array.ndim != 2 or array.shape[0] < 1:
        raise SpecError("curves", f"need a 2-D array (arms, pulls) with ≥ 1 arm, got {array.shape}")
    if not np.all(np.isfinite(array)):
        arm, index = np.argwhere(~np.isfinite(array))[0]
        raise SpecError("curves", f"must be finite; curves[{arm}, {index}] = {array[arm, index]}")
    return array


def _violations(curves: np.ndarray, shape: str) -> np.ndarray:
    """Boolean ``(N, T-1)``: True where the step from index ``j`` to ``j+1`` breaks ``shape``.

    The first True of a row (at ``j``) is where the arm's prefix first loses the shape, reported
    as index ``j+1``; for single-peaked that is the first rise after a fall.
    """
    steps = np.diff(curves, axis=1)
    if shape == "increasing":
        return steps < 0
    if shape == "decreasing":
        return steps > 0
    fallen = np.logical_or.accumulate(steps < 0, axis=1)
    bad = np.zeros_like(fallen)
    bad[:, 1:] = (steps[:, 1:] > 0) & fallen[:, :-1]
    return bad


def _first_violation(curves: np.ndarray, shape: str) -> tuple[int, int] | None:
    """``(arm, index)`` of the first index at which an arm's prefix stops having ``shape``."""
    bad = _violations(curves, shape)
    arms = np.flatnonzero(bad.any(axis=1))
    if arms.size == 0:
        return None
    arm = int(arms[0])
    return arm, int(np.argmax(bad[arm])) + 1


def _check_shape(curves: np.ndarray, method: str) -> None:
    violation = _first_violation(curves, method)
    if violation is None:
        return
    arm, index = violation
    relation = ">" if method != "increasing" else "<"
    where = f"curves[{arm}, {index}] {relation} curves[{arm}, {index - 1}]"
    raise SpecError(
        "curves",
        f"method {method!r} needs {_SHAPE_WORDS[method]} curves, but arm {arm} is not: "
        f"first violation at index {index} ({where})",
    )


def detect_shape(curves: np.ndarray) -> str:
    """The most specific of :data:`SHAPES` that *every* curve has, checked exactly.

    Constant curves count as increasing. No tolerance: a sampled curve with a one-ulp wiggle is
    not monotone (repair such curves explicitly, e.g. with ``np.maximum.accumulate``).
    """
    array = _as_curves(curves)
    for shape in SHAPES[:-1]:
        if _first_violation(array, shape) is None:
            return shape
    return "general"


def _auto_method(curves: np.ndarray) -> str:
    """``detect_shape``, except that single-peaked falls back to the DP when that is cheaper."""
    shape = detect_shape(curves)
    if shape != "single-peaked":
        return shape
    n_arms, horizon = curves.shape
    rising = int(np.count_nonzero(np.argmax(curves, axis=1) > 0))
    single_peaked_cost = _SP_WORK_FACTOR * 2**rising * (n_arms + rising) * (horizon + 1)
    general_cost = (n_arms - 1) * horizon * (horizon + 1) // 2
    return "single-peaked" if single_peaked_cost <= general_cost else "general"


# ---------------------------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------------------------


def optimal_allocation(curves: np.ndarray, method: str = "auto") -> Allocation:
    """OPT(h) and an optimal count vector for every horizon ``h = 0..T``.

    ``curves`` is ``(N, T)``: ``curves[i, m-1] = f_i(m)``. Values need not lie in [0, 1]; they must
    be finite. ``method`` is one of :data:`METHODS`; a special method (``increasing``,
    ``decreasing``, ``single-peaked``) on curves without that shape raises :class:`ValueError`
    (a :class:`~impactbandits.errors.SpecError`) naming the first offending arm and index. See the
    module docstring for the methods and their costs.
    """
    if method not in METHODS:
        raise SpecError("method", f"must be one of {', '.join(METHODS)}; got {method!r}")
    array = _as_curves(curves)
    if method == "auto":
        method = _auto_method(array)
    elif method in _SHAPE_WORDS:
        _check_shape(array, method)
    n_arms, horizon = array.shape
    cumulative = np.zeros((n_arms, horizon + 1))
    np.cumsum(array, axis=1, out=cumulative[:, 1:])
    if horizon == 0:
        counts = np.zeros((1, n_arms), dtype=np.int64)
    elif method == "increasing":
        counts = _increasing_counts(cumulative)
    elif method == "decreasing":
        counts = _decreasing_counts(array)
    elif method == "single-peaked":
        counts = _single_peaked_counts(array, cumulative)
    elif method == "enumerate":
        counts = _enumerate_counts(cumulative)
    else:
        counts = _general_counts(cumulative)
    values = _values_of(cumulative, counts)
    values.flags.writeable = False
    counts.flags.writeable = False
    return Allocation(values=values, counts=counts, method=method)


def _values_of(cumulative: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``Σ_i F_i(counts[:, i])``, summed in arm order."""
    values = np.zeros(counts.shape[0])
    for arm in range(cumulative.shape[0]):
        values += cumulative[arm, counts[:, arm]]
    return values


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------


def _increasing_counts(cumulative: np.ndarray) -> np.ndarray:
    """Nondecreasing curves: one arm takes every pull, ``OPT(h) = max_i F_i(h)``. O(N T).

    Heidari et al. (2016); Lindner et al. (2021), Appendix B.1. Proof: the increments of ``F_i``
    are nondecreasing, so ``F_i`` is convex on ``{0..T}``; with ``F_i(0) = 0`` convexity gives
    ``F_i(n) ≤ (n/h) F_i(h)`` for ``0 ≤ n ≤ h``, hence for any split ``Σ_i n_i = h``
    ``Σ_i F_i(n_i) ≤ Σ_i (n_i/h) F_i(h) ≤ max_i F_i(h)``, which the single best arm attains.
    """
    n_arms, width = cumulative.shape
    best = np.argmax(cumulative, axis=0)
    counts = np.zeros((width, n_arms), dtype=np.int64)
    counts[np.arange(width), best] = np.arange(width)
    return counts


def _decreasing_counts(curves: np.ndarray) -> np.ndarray:
    """Nonincreasing curves: greedy merge of the sorted values. O(N T log N).

    Heidari et al. (2016); Lindner et al. (2021), Appendix B.2 (the greedy policy is optimal).
    Proof: any allocation of ``h`` pulls collects ``h`` distinct items of the pool
    ``{f_i(m)}``, so its reward is at most the sum of the ``h`` largest items. Each arm's items are
    already in nonincreasing order, so a stable sort of the pool (ties broken by arm, then pull)
    lists every arm's items in pull order: its first ``h`` entries are prefixes of the arms, i.e. a
    feasible allocation that attains the bound. The stable sort (timsort) merges ``N`` sorted
    runs, hence the ``log N``.
    """
    n_arms, horizon = curves.shape
    order = np.argsort(-curves.ravel(), kind="stable")[:horizon]
    return _prefix_counts(order // horizon, n_arms, horizon + 1)


def _prefix_counts(labels: np.ndarray, n_arms: int, width: int) -> np.ndarray:
    """``out[r, i]`` = how many of ``labels[:r]`` equal ``i``, for ``r < width``."""
    counts = np.zeros((width, n_arms), dtype=np.int64)
    np.cumsum(labels[: width - 1, None] == np.arange(n_arms), axis=0, out=counts[1:])
    return counts


def _general_counts(cumulative: np.ndarray) -> np.ndarray:
    """Any curves: max-plus DP over arms with argmax bookkeeping. O(N T²) time, O(N T) memory.

    ``G_0 = F_0`` and ``G_k(h) = max_{0 ≤ n ≤ h} G_{k-1}(h - n) + F_k(n)``; by induction ``G_k(h)``
    is the best reward of ``h`` pulls spread over arms ``0..k``, so ``G_{N-1} = OPT`` (this is
    Bellman's principle for the separable objective; no shape assumption). The maximisation is
    evaluated in blocks of rows of the ``(h, n)`` matrix (at most ``_DP_BLOCK_ENTRIES`` entries
    at once); the chosen ``n`` of every ``(k, h)`` is kept, and all horizons are backtracked at
    once.
    """
    n_arms, width = cumulative.shape
    horizon = width - 1
    rows_per_block = max(1, _DP_BLOCK_ENTRIES // width)
    choice = np.empty((n_arms, width), dtype=np.int64)
    choice[0] = np.arange(width)
    best = cumulative[0].copy()
    for arm in range(1, n_arms):
        # reversed[s + n] = best[h - n] for s = horizon - h; -inf past the start (n > h).
        padded = np.concatenate([best[::-1], np.full(horizon, -np.inf)])
        windows = sliding_window_view(padded, width)
        new_best = np.empty(width)
        for start in range(0, width, rows_per_block):
            stop = min(width, start + rows_per_block)
            block = windows[horizon - stop + 1 : horizon - start + 1, :stop][::-1]
            totals = block + cumulative[arm, :stop]
            picks = np.argmax(totals, axis=1)
            new_best[start:stop] = np.take_along_axis(totals, picks[:, None], axis=1)[:, 0]
            choice[arm, start:stop] = picks
        best = new_best
    counts = np.empty((width, n_arms), dtype=np.int64)
    remaining = np.arange(width)
    for arm in range(n_arms - 1, -1, -1):
        counts[:, arm] = choice[arm, remaining]
        remaining = remaining - counts[:, arm]
    return counts


def _enumerate_counts(cumulative: np.ndarray) -> np.ndarray:
    """Brute force over every count vector with ``Σ n_i ≤ T`` (C(T+N, N) of them); tiny cases."""
    n_arms, width = cumulative.shape
    horizon = width - 1
    n_vectors = math.comb(horizon + n_arms, n_arms)
    if n_vectors > _ENUMERATE_MAX_VECTORS:
        raise SpecError(
            "method",
            f"'enumerate' would visit {n_vectors} count vectors (limit {_ENUMERATE_MAX_VECTORS})",
        )
    vectors = np.zeros((1, 0), dtype=np.int64)
    totals = np.zeros(1, dtype=np.int64)
    values = np.zeros(1)
    for arm in range(n_arms):
        choices = horizon - totals + 1
        parent = np.repeat(np.arange(totals.size), choices)
        pulls = np.arange(parent.size) - np.repeat(np.cumsum(choices) - choices, choices)
        vectors = np.column_stack([vectors[parent], pulls])
        totals = totals[parent] + pulls
        values = values[parent] + cumulative[arm, pulls]
    order = np.lexsort((-values, totals))
    first = order[np.searchsorted(totals[order], np.arange(width))]
    return np.ascontiguousarray(vectors[first])


# ---------------------------------------------------------------------------------------------
# Single-peaked curves
# ---------------------------------------------------------------------------------------------


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
