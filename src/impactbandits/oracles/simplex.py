"""Exact oracles on the ε-grid of the simplex for action-dependent bandits: the benchmark p*.

Paper: Tang, Ho & Liu, "Bandit Learning with Delayed Impact of Actions", NeurIPS 2021,
Section 4 (the grid of Algorithm 1; the benchmarks of Theorem 4.2) and Section 2.

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

p* oracles (Section 4, Theorem 4.2)
-----------------------------------
:func:`best_fixed_policy` maximises ``Σ_k v(k, j_k)`` (``v(k, j) = jε·r_k(jε)``) over the grid by a
suffix DP (``O(K·M²)``, lexicographically smallest maximiser). :func:`best_continuous_policy`
maximises ``g(p) = Σ_k p_k r_k(p_k)`` over the continuous simplex ``P = Δ([K])`` (``p_k = 0``
allowed): exact grid optimum, then numerical refinement; see there and :func:`grid_gap_bound` for
the certified sandwich.

Shared with the learners
------------------------
The input checks, :func:`compositions` and the max-plus DP over groups (``_maxplus``,
``_lex_first_maximisers``) also serve the learners' per-round index maximiser (the ``argmax``
of Eq. 6 in AD-UCB and HD-UCB), which lives next to the policies in
``impactbandits.policies.impact_index``: ``Bonus``, ``ENUMERATION_LIMIT``, ``PRUNE_SLACK``,
``paper_bonus``, ``index_value``, ``maximise_index``, ``maximise_index_by_thresholds``,
``brute_force_index`` and ``enumerate_index`` moved there from this module. They are not
re-exported here: oracles never import policies (the layers of the architecture page,
https://impactbandits.readthedocs.io/en/latest/architecture/).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from impactbandits.core.compiled import kernel
from impactbandits.errors import SpecError

__all__ = [
    "best_continuous_policy",
    "best_fixed_policy",
    "brute_force_policy",
    "composition_table",
    "compositions",
    "continuous_value",
    "grid_gap_bound",
    "lex_first_maximiser",
    "numpy_sum",
]

# The layers (oracles never import policies) are enforced by tests/test_layers.py.

#: Largest number of compositions the brute-force references agree to enumerate.
MAX_BRUTE_FORCE_COMPOSITIONS = 2_000_000
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
# Validation and compositions
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Compiled forms (impactbandits.core.compiled): the operations above for one replication, in the
# same order, so that the compiled loop gives the readable loop's bits
# --------------------------------------------------------------------------------------------

#: NumPy adds blocks of up to this many values with eight accumulators, longer arrays by halves
#: (``PW_BLOCKSIZE`` of its pairwise summation).
_PAIRWISE_BLOCK = 128


@kernel(inline=True)
def _block_sum(values: np.ndarray, start: int, n: int) -> float:
    """NumPy's pairwise sum of ``values[start : start + n]`` for ``n ≤ 128``."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = 8
    while i < n - n % 8:
        j = start + i
        r0 += values[j]
        r1 += values[j + 1]
        r2 += values[j + 2]
        r3 += values[j + 3]
        r4 += values[j + 4]
        r5 += values[j + 5]
        r6 += values[j + 6]
        r7 += values[j + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@kernel
def numpy_sum(values: np.ndarray, start: int, n: int) -> float:
    """``values[start : start + n].sum()`` added as NumPy adds a contiguous 1-d array, or each
    row of a C-contiguous array along its last axis: ``0.0`` plus the pairwise sum (blocks of at
    most 128 values with eight accumulators, a longer run split at half its length rounded down
    to a multiple of 8). The recursion runs on a stack of frames (start, length, stage)."""
    if n <= _PAIRWISE_BLOCK:
        return 0.0 + _block_sum(values, start, n)
    frames = np.empty((64, 3), dtype=np.int64)
    left = np.empty(64)
    frames[0, 0], frames[0, 1], frames[0, 2] = start, n, 0
    top = 0
    result = 0.0
    while top >= 0:
        lo, size, stage = frames[top, 0], frames[top, 1], frames[top, 2]
        half = size // 2
        half -= half % 8
        if size <= _PAIRWISE_BLOCK:
            result = _block_sum(values, lo, size)
            top -= 1
        elif stage == 0:  # the left half first
            frames[top, 2] = 1
            top += 1
            frames[top, 0], frames[top, 1], frames[top, 2] = lo, half, 0
        elif stage == 1:  # the left half's sum is in result: the right half
            left[top] = result
            frames[top, 2] = 2
            top += 1
            frames[top, 0], frames[top, 1], frames[top, 2] = lo + half, size - half, 0
        else:
            result = left[top] + result
            top -= 1
    return 0.0 + result


@kernel
def composition_table(n_groups: int, total: int) -> np.ndarray:
    """:func:`compositions` (lexicographic order), built by the same successive cut points."""
    size = 1
    for i in range(n_groups - 1):  # C(total − 1, n_groups − 1), exactly
        size = size * (total - 1 - i) // (i + 1)
    table = np.empty((size, n_groups), dtype=np.int64)
    cuts = np.arange(1, n_groups)
    for row in range(size):
        previous = 0
        for i in range(n_groups - 1):
            table[row, i] = cuts[i] - previous
            previous = cuts[i]
        table[row, n_groups - 1] = total - previous
        i = n_groups - 2  # the next combination of cut points
        while i >= 0 and cuts[i] == total - n_groups + 1 + i:
            i -= 1
        if i < 0:
            break
        cuts[i] += 1
        for j in range(i + 1, n_groups - 1):
            cuts[j] = cuts[j - 1] + 1
    return table


@kernel
def lex_first_maximiser(values: np.ndarray, suffix: np.ndarray, levels: np.ndarray) -> None:
    """:func:`best_fixed_policy`'s level vector for one ``(K, M)`` array of finite ``values``
    (:func:`_lex_first_maximisers` with one batch row, every sum and maximum as it takes
    them), written into ``levels`` (``K`` integers); ``suffix`` is ``(K + 1, M + 1)`` work."""
    n_groups, total = values.shape
    suffix[n_groups, 0] = 0.0
    for t in range(1, total + 1):
        suffix[n_groups, t] = -np.inf
    for i in range(n_groups - 1, -1, -1):
        for t in range(total + 1):
            best = -np.inf
            for j in range(1, t + 1):  # levels j > t meet the −∞ slot
                value = suffix[i + 1, t - j] + values[i, j - 1]
                if value > best:
                    best = value
            suffix[i, t] = best
    remaining = total
    for i in range(n_groups):
        best_j = 0
        best = values[i, 0] + (suffix[i + 1, remaining - 1] if remaining >= 1 else -np.inf)
        for j in range(2, total + 1):
            value = values[i, j - 1] + (suffix[i + 1, remaining - j] if j <= remaining else -np.inf)
            if value > best:
                best_j, best = j - 1, value
        levels[i] = best_j + 1
        remaining = max(remaining - levels[i], 0)


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

    def total(x: np.ndarray) -> float:
        return np.sum(x) - 1.0

    if n_groups > 1:
        from scipy import optimize  # imported here: the grid learners' modules need none of it

        result = optimize.minimize(
            objective,
            best_p,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n_groups,
            constraints=[{"type": "eq", "fun": total}],
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
    from scipy import optimize

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
