"""The learners' per-round step: the exact argmax of the UCB index (Eq. 6) on the ε-grid.

Paper: Tang, Ho & Liu, "Bandit Learning with Delayed Impact of Actions", NeurIPS 2021,
Section 4 (Algorithm 1, line 4, Eq. 6). Used every round by
:class:`~impactbandits.policies.impact.ActionDependentUCB` and
:class:`~impactbandits.policies.impact.HistoryDependentUCB`. Moved here, unchanged, from
``impactbandits.oracles.simplex`` (which cannot re-export these names: oracles never import
policies). Their compiled forms, which the learners' compiled steps call, are in
:mod:`impactbandits.policies.impact_argmax`.

The ε-grid, level vectors and the ``(K, M)`` array layout (column ``j − 1`` for level ``j``;
levels ``j > M − K + 1`` can never be used and are ignored) are those of
:mod:`impactbandits.oracles.simplex`. Its input checks, compositions and max-plus DP are shared
with the benchmark optimum there (policies may import oracles, not the reverse).

The learner keeps an empirical mean ``r̄(k, j)`` and a count ``n(k, j)`` per discretized arm;
with scores ``s(k, j) = jε·r̄(k, j)`` the UCB index of Eq. (6) is

    UCB_t(j) = Σ_k s(k, j_k) + b(min_k n(k, j_k)),        b(c) = sqrt(K·ln t / c),

and Algorithm 1 (line 4) plays its argmax. :func:`maximise_index` takes any bonus ``b`` that is
non-increasing in the count (:func:`paper_bonus` builds the paper's).

Zero counts (Algorithm 1, line 2)
---------------------------------
``b(0) := +∞`` (the bonus is never called with 0). So every level vector that contains an
unplayed discretized arm has index ``+∞``, which matches the paper's initialisation ("for each
discretized arm, play an arbitrary meta arm such that this discretized arm is included") and
makes the UCB rule itself perform it. Among the ``+∞`` vectors the oracles return one of largest
score ``Σ_k s(k, j_k)`` (scores of unplayed arms are used as given; the paper initialises
``r̄ = 0``). The same rule applies if the bonus returns ``+∞`` for a positive count. An unplayed
arm at an unusable level (``j > M − K + 1``) is in no vector and has no effect.

The pinning algorithm (:func:`maximise_index`) and why it is exact
-------------------------------------------------------------------
For a discretized arm ("pin") ``(k, j)`` let ``G(k, j)`` be the best score of a level vector with
``j_k = j``. Then, for ``b`` non-increasing,

    max_j UCB(j) = max_{(k, j)} G(k, j) + b(n(k, j)).                                     (★)

*Proof.* (≤) Let ``j*`` be optimal and let ``(k, j*_k)`` attain its minimum count ``c*``. Then
``G(k, j*_k) ≥ S(j*)`` and ``b(n(k, j*_k)) = b(c*)``, so the right side is ``≥ UCB(j*)``.
(≥) For any pin, let ``v`` attain ``G(k, j)``. ``v`` contains the pin, so
``min n(v) ≤ n(k, j)`` and, ``b`` being non-increasing, ``UCB(v) = G(k, j) + b(min n(v)) ≥
G(k, j) + b(n(k, j))``: every term of the right side is achieved by a real vector. ∎

The same argument shows that the maximisers of UCB are exactly the score-maximisers of the
optimal pins, which gives the tie rule below. Note how it sidesteps both classic traps of the
threshold method: the minimum attained by several groups at once is harmless (any one of them
pins), and nothing is ever credited with a bonus larger than its own minimum count earns.

``G`` for all ``K·M`` pins comes from one prefix and one suffix max-plus DP over the groups
(``P_k(t)``: best score of groups ``< k`` using total level ``t``; ``Q_k(t)``: groups ``> k``) and
``G(k, j) = s(k, j) + max_t P_k(t) + Q_k(M − j − t)``: ``O(K·M²)`` time and ``O(K·M²)`` memory in
total, independent of the number of distinct counts, vectorised with numpy (max-plus convolution
by broadcasting a gathered shift matrix).

Ties. Among all maximisers of the index the **lexicographically smallest level vector** is
returned (exactly so in exact arithmetic; with floating-point scores, near-ties are decided by
rounding; with integer or dyadic scores the rule holds exactly). By (★) the maximisers are the
score-maximisers of the optimal pins; optimal pins with the same ``G`` value ``γ`` share one
flagged suffix DP ("best score among vectors using at least one of these pins", whose optimum is
``γ``) with a lexicographically-first forward pass, and the smallest of the per-``γ`` vectors is
returned. Usually there is one optimal pin; even when all ``K·M`` pins tie the cost stays one DP.

The threshold algorithm (:func:`maximise_index_by_thresholds`), an independent cross-check
------------------------------------------------------------------------------------------
For each threshold ``c`` among the counts at usable levels, restrict group ``k`` to levels with
``n(k, j) ≥ c`` and run a max-plus DP over groups on the total level with a flag "some group
uses a level whose count equals ``c`` exactly": ``E(c)`` (the flagged value) is the best score
among vectors whose minimum count is exactly ``c``, so ``max_c E(c) + b(c)`` is the index
optimum for *any* bonus (monotone or not). Without the flag, ``F(c) + b(c)`` with
``F(c) = best score with all counts ≥ c`` over-estimates whenever ``F(c)``'s maximiser has a
larger minimum count (see the tests). Thresholds with ``b(c) + U`` below a known index value
(``U`` = best unconstrained score) are pruned, which keeps it exact. Cost ``O(D·K·M²)`` for
``D`` surviving thresholds, vectorised over thresholds and levels. Ties: smallest ``c`` among
maximal values, then the lexicographically smallest vector with that exact minimum count.

Measured (2-core machine): one :func:`maximise_index` for
``K = 10, M = 40`` takes about 1 ms (target ≤ 100 ms), with or without ties; the threshold
method 1–25 ms with the paper's bonus (pruning) and up to about 95 ms without pruning.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from impactbandits.errors import SpecError
from impactbandits.oracles.simplex import (
    _NEG_INF,
    _delta,
    _grid_arrays,
    _lex_first_maximisers,
    _maxplus,
    _pad,
    _shift_index,
    compositions,
)

__all__ = [
    "Bonus",
    "brute_force_index",
    "enumerate_index",
    "index_value",
    "maximise_index",
    "maximise_index_by_thresholds",
    "paper_bonus",
]

#: A UCB bonus: vectorised, called with an array of positive counts, non-increasing in the count.
Bonus = Callable[[np.ndarray], np.ndarray]

#: Grids with at most this many meta-arms are maximised by :func:`enumerate_index`.
ENUMERATION_LIMIT = 1_000
#: Relative slack when pruning thresholds against floating-point rounding (pruning stays exact).
PRUNE_SLACK = 1e-9


def paper_bonus(n_groups: int, t: int) -> Bonus:
    """The exploration bonus of Eq. (6): ``c ↦ sqrt(K·ln t / c)`` (non-increasing in ``c``)."""
    if n_groups < 1 or t < 1:
        raise SpecError("paper_bonus", f"need n_groups ≥ 1 and t ≥ 1, got {n_groups}, {t}")
    scale = n_groups * math.log(t)

    def bonus(counts: np.ndarray) -> np.ndarray:
        return np.sqrt(scale / np.asarray(counts, dtype=float))

    return bonus


def _bonus_of(bonus: Bonus, counts: np.ndarray) -> np.ndarray:
    """``b`` at ``counts`` with ``b(0) = +∞``; the bonus is only called with positive counts."""
    counts = np.asarray(counts, dtype=float)
    out = np.full(counts.shape, np.inf)
    positive = counts > 0
    if np.any(positive):
        values = np.asarray(bonus(counts[positive]), dtype=float)
        values = np.broadcast_to(values, (int(positive.sum()),))
        if np.any(np.isnan(values)) or np.any(values == _NEG_INF):
            raise SpecError("bonus", "must return numbers that are not NaN or −∞")
        out[positive] = values
    return out


def _bonus_table(bonus: Bonus, counts: np.ndarray, *, monotone: bool) -> np.ndarray:
    """``b(n(k, j))`` as a ``(K, M)`` array (one bonus call on the distinct counts)."""
    distinct, inverse = np.unique(counts, return_inverse=True)
    values = _bonus_of(bonus, distinct)
    if monotone and np.any(np.diff(values) > 0):
        bad = int(np.argmax(np.diff(values) > 0))
        raise SpecError(
            "bonus",
            f"must be non-increasing in the count, but b({distinct[bad]:g}) = {values[bad]:g}"
            f" < b({distinct[bad + 1]:g}) = {values[bad + 1]:g}; "
            "maximise_index_by_thresholds accepts any bonus",
        )
    return values[inverse.reshape(counts.shape)]


def _check_levels(levels: np.ndarray, n_groups: int, total: int) -> np.ndarray:
    j = np.asarray(levels)
    if (
        j.shape != (n_groups,)
        or not np.issubdtype(j.dtype, np.integer)
        or np.any(j < 1)
        or int(j.sum()) != total
    ):
        raise SpecError("levels", f"must be {n_groups} integers ≥ 1 summing to {total}, got {j}")
    return j.astype(np.int64)


def index_value(levels: np.ndarray, scores: np.ndarray, counts: np.ndarray, bonus: Bonus) -> float:
    """The UCB index of Eq. (6) of one level vector: ``Σ_k s(k, j_k) + b(min_k n(k, j_k))``.

    ``b(0) = +∞`` (module docstring). Scores are summed in group order.
    """
    s, n = _grid_arrays(scores, counts)
    assert n is not None
    j = _check_levels(levels, *s.shape)
    rows = np.arange(s.shape[0])
    minimum = n[rows, j - 1].min()
    return float(s[rows, j - 1].sum() + _bonus_of(bonus, np.array([minimum]))[0])


# --------------------------------------------------------------------------------------------
# Max-plus DP with a flag (the pinning and threshold methods)
# --------------------------------------------------------------------------------------------


def _lex_first_flagged(
    scores: np.ndarray, marks: np.ndarray, total: int
) -> tuple[np.ndarray, np.ndarray]:
    """Lexicographically smallest best-scoring vector that uses at least one marked level.

    ``scores`` and ``marks`` are ``(B, K, W)`` (scores may be −∞ to forbid levels). Suffix DP with
    a flag, per total level ``t``:

        W_i(t) = best score of groups i..K−1 (no requirement),
        V_i(t) = best score of groups i..K−1 using some marked level,
        V_i(t) = max_j scores(i, j) + (W_{i+1}(t − j) if marks(i, j) else V_{i+1}(t − j)),

    then a forward pass that takes the smallest level keeping the optimum (it recomputes exactly
    the sums the DP maximised). Several groups may use marked levels: a vector is counted
    whenever at least one does. Rows without such a vector get value −∞ and meaningless levels.
    """
    batch, n_groups, width = scores.shape
    idx = _shift_index(total, width)
    free = np.empty((n_groups + 1, batch, total + 1))
    flagged = np.empty((n_groups + 1, batch, total + 1))
    free[n_groups] = _delta(batch, total)
    flagged[n_groups] = _NEG_INF
    for i in range(n_groups - 1, -1, -1):
        w_next = _pad(free[i + 1])[:, idx]  # (B, total + 1, W)
        v_next = _pad(flagged[i + 1])[:, idx]
        gain = scores[:, i, None, :]
        free[i] = (w_next + gain).max(axis=2)
        flagged[i] = (np.where(marks[:, i, None, :], w_next, v_next) + gain).max(axis=2)
    levels = np.zeros((batch, n_groups), dtype=np.int64)
    remaining = np.full(batch, total)
    need = np.ones(batch, dtype=bool)
    rows = np.arange(batch)
    for i in range(n_groups):
        shifted = idx[remaining]  # (B, W): remaining − j, or the −∞ slot
        w_next = _pad(free[i + 1])[rows[:, None], shifted]
        v_next = _pad(flagged[i + 1])[rows[:, None], shifted]
        nxt = np.where(need[:, None] & ~marks[:, i, :], v_next, w_next)
        levels[:, i] = np.argmax(scores[:, i, :] + nxt, axis=1) + 1
        need &= ~marks[rows, i, levels[:, i] - 1]
        remaining = np.maximum(remaining - levels[:, i], 0)
    return levels, flagged[0][:, total]


def _lex_smallest_row(rows: np.ndarray) -> np.ndarray:
    """The lexicographically smallest row of a 2-D integer array."""
    return rows[np.lexsort(rows.T[::-1])[0]]


# --------------------------------------------------------------------------------------------
# The index oracles (Eq. 6, Algorithm 1 line 4)
# --------------------------------------------------------------------------------------------


# The timings of the module docstring (maximise_index, maximise_index_by_thresholds) are
# measured by benchmarks/bench_simplex.py.
def maximise_index(
    scores: np.ndarray, counts: np.ndarray, bonus: Bonus
) -> tuple[np.ndarray, float]:
    """Exact ``argmax`` of the UCB index of Eq. (6) over the ε-grid (Algorithm 1, line 4).

    Parameters
    ----------
    scores, counts:
        ``(K, M)`` arrays, column ``j − 1`` = level ``j``: ``scores[k, j − 1] = jε·r̄(k, j)``
        (finite) and ``counts[k, j − 1] = n(k, j) ≥ 0``. Needs ``M ≥ K``.
    bonus:
        Vectorised ``b(c)`` for positive counts, **non-increasing** in ``c`` (checked on the
        counts present; e.g. :func:`paper_bonus`). ``b(0) = +∞`` by convention.

    Returns
    -------
    ``(levels, value)``: the level vector (``K`` integers ≥ 1 summing to ``M``; ``p = levels/M``)
    and its index ``value = index_value(levels, …)``. If some vector contains a count-0
    discretized arm the value is ``+∞`` and ``levels`` maximises the score among such vectors.
    Ties: the lexicographically smallest maximiser.

    Algorithm: the pinning identity (★) of the module docstring, ``O(K·M²)`` time (about 1 ms for
    ``K = 10, M = 40``), never enumerating compositions or thresholds.
    """
    s, n = _grid_arrays(scores, counts)
    assert n is not None
    n_groups, total = s.shape
    b = _bonus_table(bonus, n, monotone=True)
    idx = _shift_index(total, total)

    # Prefix P[k] (groups < k) and suffix Q[k] (groups > k), each (K, M + 1).
    prefix = np.empty((n_groups, total + 1))
    suffix = np.empty((n_groups, total + 1))
    run = _delta(1, total)
    for k in range(n_groups):
        prefix[k] = run[0]
        run = _maxplus(run, s[k][None], idx)
    run = _delta(1, total)
    for k in range(n_groups - 1, -1, -1):
        suffix[k] = run[0]
        run = _maxplus(run, s[k][None], idx)
    # Leave-one-out L[k, u] = max_t P[k, t] + Q[k, u − t]; G[k, j − 1] = s[k, j − 1] + L[k, M − j].
    u = np.arange(total + 1)[:, None]
    t = np.arange(total + 1)[None, :]
    split = np.where(t <= u, u - t, total + 1)
    others = (_pad(suffix)[:, split] + prefix[:, None, :]).max(axis=2)
    pinned = s + others[:, total - 1 :: -1]

    feasible = pinned > _NEG_INF
    infinite = feasible & np.isinf(b)
    if np.any(infinite):
        candidate = np.where(infinite, pinned, _NEG_INF)
    else:
        candidate = np.where(feasible, pinned + np.where(feasible, b, 0.0), _NEG_INF)
    best_pins = np.argwhere(candidate == candidate.max())

    # The maximisers of the index are the score-maximisers of the optimal pins. Optimal pins with
    # the same G value γ share one flagged DP ("uses some pin of value γ"; its optimum is γ);
    # the answer is the lexicographically smallest of the per-γ smallest maximisers.
    gammas, group_of = np.unique(pinned[best_pins[:, 0], best_pins[:, 1]], return_inverse=True)
    marks = np.zeros((len(gammas), n_groups, total), dtype=bool)
    marks[group_of.ravel(), best_pins[:, 0], best_pins[:, 1]] = True
    batch_scores = np.broadcast_to(s, marks.shape)
    levels = _lex_smallest_row(_lex_first_flagged(batch_scores, marks, total)[0])
    return levels, index_value(levels, s, n, bonus)


def maximise_index_by_thresholds(
    scores: np.ndarray, counts: np.ndarray, bonus: Bonus
) -> tuple[np.ndarray, float]:
    """Exact index maximiser by thresholds with an "exactly-c" flag; any bonus (cross-check).

    Same inputs, outputs and zero-count convention as :func:`maximise_index`, but ``bonus`` need
    not be monotone. For every threshold ``c`` (distinct counts at usable levels) the suffix DP
    over groups keeps, per total level ``t``,

        W_i(t) = best score of groups i..K−1 with every count ≥ c,
        V_i(t) = the same, but some group uses a level whose count equals c exactly,

    ``V_i(t) = max_j s(i, j) + (W_{i+1}(t − j) if n(i, j) = c else V_{i+1}(t − j))`` over levels
    with ``n(i, j) ≥ c``. ``E(c) = V_0(M)`` is the best score among vectors whose minimum count is
    exactly ``c``, so the optimum is ``max_c E(c) + b(c)``: every vector is counted once, at its
    own minimum, whether one or several groups attain it. Thresholds with
    ``b(c) + U < UCB(v_U)`` (``U`` the best unconstrained score, ``v_U`` its maximiser) cannot win
    and are skipped. Ties: the smallest such ``c``, then the lexicographically smallest vector.
    """
    s, n = _grid_arrays(scores, counts)
    assert n is not None
    n_groups, total = s.shape
    usable = n[:, : total - n_groups + 1]
    thresholds = np.unique(usable)
    b_thr = _bonus_of(bonus, thresholds)

    # Pruning against the unconstrained maximiser (exact: E(c) ≤ U for every c).
    v_u, best_score = _lex_first_maximisers(s[None], total)
    lower = index_value(v_u[0], s, n, bonus)
    if np.isinf(lower):
        keep = np.isinf(b_thr)
    else:
        slack = PRUNE_SLACK * (1.0 + abs(lower) + abs(best_score[0]))
        keep = b_thr + best_score[0] >= lower - slack
    thresholds, b_thr = thresholds[keep], b_thr[keep]

    at_least = n[None] >= thresholds[:, None, None]  # (D, K, M)
    exactly = n[None] == thresholds[:, None, None]
    allowed = np.where(at_least, s[None], _NEG_INF)
    all_levels, exact_best = _lex_first_flagged(allowed, exactly, total)

    finite = exact_best > _NEG_INF
    infinite = finite & np.isinf(b_thr)
    if np.any(infinite):
        d = int(np.argmax(np.where(infinite, exact_best, _NEG_INF)))
    else:
        d = int(np.argmax(np.where(finite, exact_best + np.where(finite, b_thr, 0.0), _NEG_INF)))
    levels = all_levels[d]
    return levels, index_value(levels, s, n, bonus)


def brute_force_index(
    scores: np.ndarray, counts: np.ndarray, bonus: Bonus
) -> tuple[np.ndarray, float]:
    """Reference for :func:`maximise_index` by enumerating every composition (tiny cases).

    Same conventions (``b(0) = +∞``, best score among ``+∞`` vectors, lexicographically smallest
    maximiser); any bonus.
    """
    s, _ = _grid_arrays(scores, counts)
    return enumerate_index(compositions(*s.shape), scores, counts, bonus)


def enumerate_index(
    table: np.ndarray, scores: np.ndarray, counts: np.ndarray, bonus: Bonus
) -> tuple[np.ndarray, float]:
    """:func:`maximise_index` by scanning ``table`` = :func:`compositions` ``(K, M)`` (exact).

    Faster than the pinning DP while the grid has at most :data:`ENUMERATION_LIMIT` meta-arms
    (e.g. every ``K = 2`` grid); the learners precompute ``table`` once per run. Same
    conventions as :func:`maximise_index`; any bonus.
    """
    s, n = _grid_arrays(scores, counts)
    assert n is not None
    if table.ndim != 2 or table.shape[1] != s.shape[0]:
        raise SpecError("table", f"must be compositions({s.shape[0]}, {s.shape[1]})")
    rows, columns = np.arange(s.shape[0]), table - 1
    score = s[rows, columns].sum(axis=1)
    bonus_of_min = _bonus_of(bonus, n[rows, columns].min(axis=1))
    infinite = np.isinf(bonus_of_min)
    if np.any(infinite):
        best = int(np.argmax(np.where(infinite, score, _NEG_INF)))
        return table[best], float("inf")
    value = score + bonus_of_min
    best = int(np.argmax(value))
    return table[best], float(value[best])
