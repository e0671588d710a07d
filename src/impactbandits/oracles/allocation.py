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

The single-peaked method's machinery (its exactness argument included) lives in
:mod:`impactbandits.oracles.allocation_single_peaked`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from impactbandits.errors import SpecError
from impactbandits.oracles.allocation_single_peaked import (
    _monotone_row_argmax,  # noqa: F401  (moved there; re-exported for the tests)
    _prefix_counts,
    _single_peaked_counts,
)

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
