"""Exact oracles on the ε-grid of the simplex for action-dependent bandits.

Paper: Tang, Ho & Liu, "Bandit Learning with Delayed Impact of Actions", NeurIPS 2021,
Section 4 (Algorithm 1, Eq. 6) and Section 2.

Model and notation (Section 4)
------------------------------
``K`` groups (base arms). A meta-arm is ``p = (p_1, …, p_K)`` on the ε-grid of the simplex: every
``p_k ∈ {ε, 2ε, …, 1}`` (strictly positive, as in the paper's discretisation) and ``Σ_k p_k = 1``,
with ``M = 1/ε`` an integer. Writing ``p_k = j_k·ε`` a meta-arm is a *level vector*
``j = (j_1, …, j_K)``: a composition of ``M`` into ``K`` positive parts (there are
``C(M−1, K−1)`` of them, about 2·10⁸ for ``K = 10, M = 40``, so nothing here enumerates them
except the brute-force references). A *discretized arm* is a pair ``(k, j)`` (``p_k = jε``).
All ``(K, M)`` arrays below use column ``j − 1`` for level ``j``. Levels ``j > M − K + 1`` can
never be used (the other ``K − 1`` groups need at least one level each); their entries are
ignored everywhere.

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

p* oracles (Section 4, Theorem 4.2)
-----------------------------------
:func:`best_fixed_policy` maximises ``Σ_k v(k, j_k)`` (``v(k, j) = jε·r_k(jε)``) over the grid by a
suffix DP (``O(K·M²)``, lexicographically smallest maximiser). :func:`best_continuous_policy`
maximises ``g(p) = Σ_k p_k r_k(p_k)`` over the continuous simplex ``P = Δ([K])`` (``p_k = 0``
allowed): exact grid optimum, then numerical refinement; see there and :func:`grid_gap_bound` for
the certified sandwich.

Measured (2-core machine, ``benchmarks/bench_simplex.py``): one :func:`maximise_index` for
``K = 10, M = 40`` takes about 1 ms (target ≤ 100 ms), with or without ties; the threshold
method 1–25 ms with the paper's bonus (pruning) and up to about 95 ms without pruning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize

from impactbandits.errors import SpecError

__all__ = [
    "Bonus",
    "best_continuous_policy",
    "best_fixed_policy",
    "brute_force_index",
    "brute_force_policy",
    "compositions",
    "continuous_value",
    "enumerate_index",
    "grid_gap_bound",
    "index_value",
    "maximise_index",
    "maximise_index_by_thresholds",
    "paper_bonus",
]

#: A UCB bonus: vectorised, called with an array of positive counts, non-increasing in the count.
Bonus = Callable[[np.ndarray], np.ndarray]

#: Largest number of compositions the brute-force references agree to enumerate.
MAX_BRUTE_FORCE_COMPOSITIONS = 2_000_000
#: Grids with at most this many meta-arms are maximised by :func:`enumerate_index`.
ENUMERATION_LIMIT = 1_000
#: Relative slack when pruning thresholds against floating-point rounding (pruning stays exact).
PRUNE_SLACK = 1e-9
#: Default grid resolution N (grid {0, 1/N, …, 1}) of :func:`best_continuous_policy`.
DEFAULT_CONTINUOUS_RESOLUTION = 400
#: Tolerance when checking that r_k maps into [0, 1] and is L-Lipschitz on the grid.
REWARD_CHECK_TOL = 1e-9
#: Refinement settings of :func:`best_continuous_policy`.
SLSQP_MAX_ITER = 200
SLSQP_FTOL = 1e-14
PAIR_SWEEPS = 6
PAIR_XATOL = 1e-12

_NEG_INF = -np.inf


# --------------------------------------------------------------------------------------------
# Validation and small helpers
# --------------------------------------------------------------------------------------------


def paper_bonus(n_groups: int, t: int) -> Bonus:
    """The exploration bonus of Eq. (6): ``c ↦ sqrt(K·ln t / c)`` (non-increasing in ``c``)."""
    if n_groups < 1 or t < 1:
        raise SpecError("paper_bonus", f"need n_groups ≥ 1 and t ≥ 1, got {n_groups}, {t}")
    scale = n_groups * math.log(t)

    def bonus(counts: np.ndarray) -> np.ndarray:
        return np.sqrt(scale / np.asarray(counts, dtype=float))

    return bonus


def _grid_arrays(
    scores: np.ndarray, counts: np.ndarray | None = None, name: str = "scores"
) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate ``(K, M)`` score (and count) arrays; need ``M ≥ K ≥ 1`` and finite entries."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < s.shape[0]:
        raise SpecError(name, f"must be a (K, M) array with M ≥ K ≥ 1, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise SpecError(name, "must be finite")
    if counts is None:
        return s, None
    n = np.asarray(counts, dtype=float)
    if n.shape != s.shape:
        raise SpecError("counts", f"must have the shape of scores {s.shape}, got {n.shape}")
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise SpecError("counts", "must be finite and ≥ 0")
    return s, n


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


def compositions(n_groups: int, total: int) -> np.ndarray:
    """All level vectors (compositions of ``total`` into ``n_groups`` positive parts).

    Returned as a ``(C(total − 1, n_groups − 1), n_groups)`` integer array in lexicographic
    order. Refuses more than ``MAX_BRUTE_FORCE_COMPOSITIONS`` rows.
    """
    if n_groups < 1 or total < n_groups:
        raise SpecError("compositions", f"need total ≥ n_groups ≥ 1, got {total}, {n_groups}")
    size = math.comb(total - 1, n_groups - 1)
    if size > MAX_BRUTE_FORCE_COMPOSITIONS:
        raise SpecError("compositions", f"{size} compositions is too many to enumerate")
    # Cut points in lexicographic order give partial sums, hence parts, in lexicographic order.
    cuts = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(1, total), n_groups - 1)),
        dtype=np.int64,
        count=size * (n_groups - 1),
    ).reshape(size, n_groups - 1)
    edges = np.concatenate(
        [np.zeros((size, 1), np.int64), cuts, np.full((size, 1), total, np.int64)], axis=1
    )
    return np.diff(edges, axis=1)


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
# Max-plus machinery
# --------------------------------------------------------------------------------------------


def _shift_index(total: int, width: int) -> np.ndarray:
    """``idx[t, j − 1] = t − j`` for ``1 ≤ j ≤ t``, else ``total + 1`` (a padded −∞ slot)."""
    t = np.arange(total + 1)[:, None]
    j = np.arange(1, width + 1)[None, :]
    return np.where(j <= t, t - j, total + 1)


def _pad(x: np.ndarray) -> np.ndarray:
    """Append a −∞ column (the target of invalid shifts)."""
    return np.concatenate([x, np.full((*x.shape[:-1], 1), _NEG_INF)], axis=-1)


def _maxplus(x: np.ndarray, a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Batched max-plus convolution ``out[b, t] = max_{1 ≤ j ≤ t} a[b, j − 1] + x[b, t − j]``."""
    return (_pad(x)[:, idx] + a[:, None, :]).max(axis=2)


def _delta(batch: int, total: int) -> np.ndarray:
    """The max-plus unit: 0 at total 0, −∞ elsewhere."""
    out = np.full((batch, total + 1), _NEG_INF)
    out[:, 0] = 0.0
    return out


def _lex_first_maximisers(scores: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Lexicographically smallest maximiser of ``Σ_k scores[b, k, j_k − 1]`` per batch row.

    ``scores`` is ``(B, K, W)`` (entries may be −∞ to forbid levels), ``Σ_k j_k = total``. Suffix
    DP ``Q_i(t)`` (best of groups ``i..K−1`` using total ``t``) then a forward pass that takes the
    smallest level keeping the optimum; the pass recomputes exactly the sums the DP maximised, so
    the float comparisons are consistent. Rows with no feasible vector get value −∞ and
    meaningless levels.
    """
    batch, n_groups, width = scores.shape
    idx = _shift_index(total, width)
    suffix = np.empty((n_groups + 1, batch, total + 1))
    suffix[n_groups] = _delta(batch, total)
    for i in range(n_groups - 1, -1, -1):
        suffix[i] = _maxplus(suffix[i + 1], scores[:, i, :], idx)
    levels = np.zeros((batch, n_groups), dtype=np.int64)
    remaining = np.full(batch, total)
    rows = np.arange(batch)
    for i in range(n_groups):
        shifted = idx[remaining]  # (B, W): remaining − j, or the −∞ slot
        candidates = scores[:, i, :] + _pad(suffix[i + 1])[rows[:, None], shifted]
        levels[:, i] = np.argmax(candidates, axis=1) + 1
        remaining = np.maximum(remaining - levels[:, i], 0)
    return levels, suffix[0][:, total]


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


# --------------------------------------------------------------------------------------------
# p* oracles (Theorem 4.2's benchmarks)
# --------------------------------------------------------------------------------------------


def best_fixed_policy(values: np.ndarray) -> tuple[np.ndarray, float]:
    """The best meta-arm on the ε-grid: maximise ``Σ_k v(k, j_k)`` over compositions of ``M``.

    ``values`` is ``(K, M)`` with ``values[k, j − 1] = jε·r_k(jε)`` (Section 4: the optimal
    strategy ``p*_ε`` in the discretized space). Exact suffix DP over groups, ``O(K·M²)``;
    returns ``(levels, value)`` with the lexicographically smallest maximiser and its value
    (summed in group order).
    """
    v, _ = _grid_arrays(values, name="values")
    levels = _lex_first_maximisers(v[None], v.shape[1])[0][0]
    return levels, float(v[np.arange(v.shape[0]), levels - 1].sum())


def brute_force_policy(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Reference for :func:`best_fixed_policy` by enumeration (lexicographically first max)."""
    v, _ = _grid_arrays(values, name="values")
    comps = compositions(*v.shape)
    total = v[np.arange(v.shape[0]), comps - 1].sum(axis=1)
    best = int(np.argmax(total))
    return comps[best], float(total[best])


def grid_gap_bound(
    n_groups: int, lipschitz: float, resolution: int, *, include_zero: bool = True
) -> float:
    """Bound on ``max_Δ g − max_grid g`` for ``g(p) = Σ_k p_k r_k(p_k)``, ``r_k: [0,1] → [0,1]``.

    Each ``h_k(x) = x·r_k(x)`` is ``(1 + L)``-Lipschitz: ``|x r(x) − y r(y)| ≤ |x − y|·r(x) +
    y·|r(x) − r(y)| ≤ (1 + L)|x − y|``. So ``g(p*) − g(q) ≤ (1 + L)·‖p* − q‖₁`` and it remains to
    round the continuous optimum ``p*`` to a grid point ``q`` (``N = resolution``, ``ε = 1/N``):

    * ``include_zero=True`` (grid ``{0, ε, …, 1}``): floor every ``N p*_k`` and round up the
      ``R`` largest fractional parts ``f_k`` (``R = Σ f_k``). Then ``N‖p* − q‖₁ = 2D`` with
      ``D = Σ_up (1 − f_k) = Σ_down f_k ≤ R(K − R)/K ≤ K/4`` (the rounded-up parts have the larger
      average fraction ``a``; ``D ≤ min(R(1 − a), (K − R)a)``). Bound: ``(1 + L)·K·ε/2``.
    * ``include_zero=False`` (the paper's ``P_ε``: ``p_k ∈ {ε, …, 1}``, needs ``N ≥ K``): take
      ``q = ε·1 + (1 − Kε)·u`` with ``u`` the zero-inclusive rounding of ``p*`` at resolution
      ``N − K``; ``‖q − p*‖₁ ≤ ε·Σ_k|1 − K p*_k| + (1 − Kε)·K/(2(N − K)) ≤ 2(K − 1)ε + Kε/2``.
      Bound: ``(1 + L)·(2(K − 1) + K/2)·ε`` (the ``2(K − 1)ε`` part is needed at a vertex).
    """
    if n_groups < 1 or resolution < 1 or not lipschitz >= 0:
        raise SpecError("grid_gap_bound", "need n_groups ≥ 1, resolution ≥ 1 and lipschitz ≥ 0")
    eps = 1.0 / resolution
    if include_zero:
        return (1.0 + lipschitz) * n_groups * eps / 2.0
    if resolution < n_groups:
        raise SpecError("resolution", f"the positive grid needs resolution ≥ K = {n_groups}")
    return (1.0 + lipschitz) * (2.0 * (n_groups - 1) + n_groups / 2.0) * eps


def continuous_value(
    p: np.ndarray, reward_fns: Sequence[Callable[[np.ndarray], np.ndarray]]
) -> float:
    """Expected reward ``g(p) = Σ_k p_k·r_k(p_k)`` of a meta-arm (Section 4, action-dependent)."""
    p = np.asarray(p, dtype=float)
    return float(
        sum(p[k] * float(np.asarray(fn(p[k : k + 1]))[0]) for k, fn in enumerate(reward_fns))
    )


def _project_to_simplex(x: np.ndarray) -> np.ndarray:
    """Euclidean projection onto ``{p ≥ 0, Σ p = 1}`` (sort-based)."""
    u = np.sort(x)[::-1]
    cumulative = np.cumsum(u) - 1.0
    ks = np.arange(1, len(x) + 1)
    rho = np.nonzero(u - cumulative / ks > 0)[0][-1]
    p = np.maximum(x - cumulative[rho] / (rho + 1), 0.0)
    return p / p.sum()


def best_continuous_policy(
    reward_fns: Sequence[Callable[[np.ndarray], np.ndarray]],
    lipschitz: float | Sequence[float],
    resolution_hint: int | None = None,
) -> tuple[np.ndarray, float]:
    """Best meta-arm on the continuous simplex ``P = Δ([K])`` for ``g(p) = Σ_k p_k r_k(p_k)``.

    The comparator of Theorem 4.2 ("regret with respect to the optimal arm in non-discretized
    P"); ``p_k = 0`` is allowed here. ``reward_fns[k]`` is a vectorised ``r_k: [0, 1] → [0, 1]``,
    ``lipschitz`` its Lipschitz constant (scalar or per group) and ``resolution_hint`` the grid
    resolution ``N`` (default ``DEFAULT_CONTINUOUS_RESOLUTION``).

    Method: exact grid optimum over ``{0, 1/N, …, 1}`` (the DP of :func:`best_fixed_policy` on
    compositions of ``N + K``, shifted by one level), then a numerical refinement — SLSQP from the
    grid point, then sweeps of exact-on-a-line pairwise mass transfers (bounded Brent plus both
    endpoints; for concave ``h_k`` pairwise optimality is the KKT condition). A step is kept only
    if it increases ``g``. Guarantee (not a proof of optimality):

        grid optimum ≤ returned value ≤ max_P g ≤ grid optimum + grid_gap_bound(K, L, N),

    with ``L = max_k L_k``; the grid value is a certified lower bound and the Lipschitz bound the
    certified gap. The inputs are checked on the grid (values in [0, 1], increments at most
    ``L_k/N``), a necessary condition for the certificate.
    """
    n_groups = len(reward_fns)
    if n_groups < 1:
        raise SpecError("reward_fns", "need at least one reward function")
    lips = np.broadcast_to(np.asarray(lipschitz, dtype=float), (n_groups,))
    if not np.all(np.isfinite(lips)) or np.any(lips < 0):
        raise SpecError("lipschitz", "must be finite and ≥ 0")
    res = DEFAULT_CONTINUOUS_RESOLUTION if resolution_hint is None else int(resolution_hint)
    if res < 1:
        raise SpecError("resolution_hint", f"must be ≥ 1, got {resolution_hint}")

    grid = np.arange(res + 1) / res
    rewards = np.stack(
        [np.broadcast_to(np.asarray(fn(grid), float), grid.shape) for fn in reward_fns]
    )
    if (
        np.any(~np.isfinite(rewards))
        or np.any(rewards < -REWARD_CHECK_TOL)
        or np.any(rewards > 1 + REWARD_CHECK_TOL)
    ):
        raise SpecError("reward_fns", "every r_k must map [0, 1] into [0, 1]")
    steps = np.abs(np.diff(rewards, axis=1))
    if np.any(steps > lips[:, None] / res + REWARD_CHECK_TOL):
        raise SpecError("lipschitz", "some r_k changes faster than its Lipschitz constant")

    # Grid optimum: nonnegative compositions of N ↔ positive compositions of N + K (j' = j + 1).
    shifted = np.full((n_groups, res + n_groups), _NEG_INF)
    shifted[:, : res + 1] = grid * rewards
    levels = _lex_first_maximisers(shifted[None], res + n_groups)[0][0]
    best_p = (levels - 1) / res
    best_value = continuous_value(best_p, reward_fns)

    def objective(x: np.ndarray) -> float:
        return -continuous_value(np.clip(x, 0.0, 1.0), reward_fns)

    if n_groups > 1:
        result = optimize.minimize(
            objective,
            best_p,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n_groups,
            constraints=[{"type": "eq", "fun": lambda x: np.sum(x) - 1.0}],
            options={"maxiter": SLSQP_MAX_ITER, "ftol": SLSQP_FTOL},
        )
        candidate = _project_to_simplex(np.asarray(result.x, dtype=float))
        value = continuous_value(candidate, reward_fns)
        if value > best_value:
            best_p, best_value = candidate, value
        best_p, best_value = _pairwise_refine(best_p, best_value, reward_fns)
    return best_p, best_value


def _pairwise_refine(
    p: np.ndarray, value: float, reward_fns: Sequence[Callable[[np.ndarray], np.ndarray]]
) -> tuple[np.ndarray, float]:
    """Sweeps of 1-D searches moving mass between two groups; keep strict improvements only."""

    def h(k: int, x: float) -> float:
        return x * float(np.asarray(reward_fns[k](np.array([x])))[0])

    n_groups = len(p)
    for _ in range(PAIR_SWEEPS):
        improved = False
        for a, c in itertools.combinations(range(n_groups), 2):
            mass = p[a] + p[c]
            if mass <= 0:
                continue

            def pair(x: float, a: int = a, c: int = c, mass: float = mass) -> float:
                return -(h(a, x) + h(c, mass - x))

            found = optimize.minimize_scalar(
                pair, bounds=(0.0, mass), method="bounded", options={"xatol": PAIR_XATOL}
            )
            for x in (float(found.x), 0.0, mass):
                trial = p.copy()
                trial[a], trial[c] = x, mass - x
                trial_value = continuous_value(trial, reward_fns)
                if trial_value > value:
                    p, value, improved = trial, trial_value, True
        if not improved:
            break
    return p, value
