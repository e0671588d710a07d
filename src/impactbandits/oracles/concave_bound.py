r"""Exact solver for SPO's optimistic future bound, the LP (⋆) of Lindner, Heidari & Krause
(IJCAI 2021, "Addressing the Long-term Impact of ML Decisions via Policy Regret"), Section 4.

For one arm with n past observations whose true rewards lie in confidence intervals
[L_j, U_j] (j = 1..n) and R remaining pulls, (⋆) reads

.. code-block:: text

    maximize    Σ_{j=n+1}^{n+R} v_j
    subject to  0 ≤ v_j ≤ 1                   (all j)
                L_j ≤ v_j ≤ U_j               (j = 1..n)
                v_j ≤ v_{j+1}                 (nondecreasing)
                v_j ≤ 2 v_{j−1} − v_{j−2}     (j ≥ 3; concave: increments nonincreasing)

Theorem 2 of the paper (Appendix C.2): its optimum is an upper bound on the future reward
Σ_{j=n+1}^{n+R} f(j) of every concave increasing f: ℕ → [0, 1] with f(j) ∈ [L_j, U_j], and it is
attained by such an f. If (⋆) is infeasible the arm is in its decreasing phase (SPO then uses
U_n·R; that is the caller's business). This module solves (⋆) exactly — :class:`ConcaveBound`
incrementally, in O(1) per query after O(log n) work per observation; :func:`lp_bound` in one
vectorised pass — instead of calling an LP solver (the test reference is
:func:`~impactbandits.oracles.concave_bound_reference.lp_bound_highs`).

Notation: a_j = max(L_j, 0) and b_j = min(U_j, 1) are the clipped interval ends (the LP's two
bound constraints on v_j together); Δ_j = v_j − v_{j−1}. A *feasible past* is v_1..v_n with
a ≤ v ≤ b, Δ_j ≥ 0 and Δ_2 ≥ Δ_3 ≥ … ≥ Δ_n. Let g_R(x, d) = Σ_{k=1}^{R} min(1, x + k·d).

**Result.** (⋆) is feasible iff a feasible past exists. Then its optimum is

* ``R`` if n = 1 (and 0 if R = 0);
* ``g_R(x*, d*)`` if n ≥ 2, where x* = max v_n and d* = max Δ_n over feasible pasts — the two
  maxima are attained *by the same past* (step 3). They satisfy, with m_n = max_{j≤n} a_j:

  - x*_2 = b_2 and, for n ≥ 3, x*_n = min(b_n, x*_{n−1} + d*_{n−1});
  - the n-past is feasible iff the (n−1)-past is and m_n ≤ x*_n (for n = 1: a_1 ≤ b_1);
  - d*_n = min_{i<n} (x*_n − a_i)/(n − i), the slope of the tangent from the point (n, x*_n) to
    the upper convex hull of the lower ends {(i, a_i) : i < n}.

**Proof.**

0. *Horizon.* The paper lets j run to T ≥ n + R. Variables after n + R are not in the objective,
   and any feasible v_1..v_{n+R} extends feasibly by the constant v_j = v_{n+R} (increment
   0 ≤ every earlier increment, value in [0, 1]); so it suffices to take j ≤ n + R.
1. *Future given the past.* Let n ≥ 2, x = v_n, d = Δ_n ≥ 0. Every feasible v has future
   increments ≤ d (concavity), hence v_{n+k} ≤ min(1, x + k·d). Conversely
   v_{n+k} = min(1, x + k·d) is feasible: it is nondecreasing, within [x, 1] ⊆ [0, 1], and its
   increments are d, …, d, (something in [0, d]), 0, … — nonincreasing and ≤ Δ_n = d at the
   junction. So (⋆) = max{g_R(x, d) : (x, d) ∈ P} with P = {(v_n, Δ_n) : v a feasible past}.
   For n = 1 the future v_2 = … = 1 is feasible for any v_1 ∈ [a_1, b_1] (v_2 ≥ v_1, and
   v_3 = 1 ≤ 2·v_2 − v_1 = 2 − v_1), so (⋆) = R: with one observation the curve may jump to 1.
2. *Lattice.* If v, w are feasible pasts and c ≥ 0 then u = min(v, w + c) is one: a pointwise
   minimum of concave nondecreasing sequences is concave and nondecreasing, u ≤ v ≤ b and
   u ≥ min(a, a + c) = a. Take v attaining (x₁, d₁) ∈ P and w attaining (x₂, d₂) ∈ P with
   x₁ ≥ x₂, and c = x₁ − x₂: then u_n = x₁ and u_{n−1} = x₁ − max(d₁, d₂). So P is closed
   under componentwise maximum; being compact, it has a greatest element (x*, d*), x* = max v_n,
   d* = max Δ_n. g_R is nondecreasing in both arguments, so (⋆) = g_R(x*, d*).
3. *d* from x*.* Since the increments after i are all ≥ Δ_n, Δ_n ≤ (v_n − v_i)/(n − i)
   ≤ (x* − a_i)/(n − i) for each i < n. Let δ be the minimum of the right-hand sides (δ ≥ 0, as
   x* ≥ v_i ≥ a_i) and v a past with v_n = x*. Then min(v, ℓ) with ℓ_k = x* − (n − k)·δ is
   feasible by step 2's argument (ℓ is concave, nondecreasing and ℓ_k ≥ a_k by the choice of
   δ), ends at x*, and its last increment is max(x* − v_{n−1}, δ) = δ. So d* = δ. Minimising
   (y − a_i)/(n − i) over i is the tangent from (n, y) to the upper hull of the points (i, a_i)
   (every point lies under the line through (n, y) of slope s iff s ≤ each ratio).
4. *x* and feasibility, recursively.* Any feasible past is ≥ the least concave nondecreasing
   majorant A of the points (j, a_j) (concave and ≥ a at two points ⇒ ≥ the chord between them;
   nondecreasing ⇒ ≥ the running maximum), and A ≥ a is itself concave and nondecreasing, so
   the least value of v_{n−1} over feasible (n−1)-pasts is A_{n−1} = m_{n−1}. The set of
   (v_{n−1}, Δ_{n−1}, v_n) with v_{n−1} ≤ v_n ≤ min(1, v_{n−1} + Δ_{n−1}) is convex, so the
   values v_n that extend a feasible (n−1)-past form an interval; its largest element is
   max over P_{n−1} of (x + d) = x*_{n−1} + d*_{n−1} (step 2; +∞, i.e. 1, for n = 2, where no
   concavity constraint involves v_2), and its smallest is m_{n−1} (take v_n = v_{n−1}). With
   the constraint v_n ∈ [a_n, b_n] this gives the recursion and the feasibility test above.
5. *Evaluating g.* With K = #{k ≤ R : x + k·d < 1} = min(R, ⌈(1 − x)/d⌉ − 1) (d > 0),
   g_R(x, d) = K·x + d·K(K + 1)/2 + (R − K), O(1).
6. *Closed form, for the one-shot* :func:`lp_bound`. The n-past is feasible iff A ≤ b on 1..n
   (step 4: A is the least candidate), and then x*_n = min(b_n, min_{i<k<n} λ_ik), where
   λ_ik = b_k + (n − k)(b_k − a_i)/(k − i) is the line through (i, a_i) and (k, b_k) at n.
   Direct proof: for x ≥ m_n the least concave majorant C of {(i, a_i) : i < n} ∪ {(n, x)} is
   nondecreasing (its maximum is at n) and lies below every past ending at x, so x is attained
   iff C ≤ b. C(k) is the larger of the hull of the a's (≤ b_k when the (n−1)-past is feasible)
   and the chords from (i, a_i), i < k, to (n, x); such a chord is ≤ b_k at k iff x ≤ λ_ik.
   Only the vertices i of the upper hull H of {(j, a_j) : j < n} matter: if (i, a_i) lies under
   an edge pq of H (p < i < q) then either q < k — the slope from (k, b_k) to the points of pq is
   monotone along pq, so p or q gives a smaller slope than i, hence a smaller λ — or k ≤ q, and
   then b_k ≥ A_k ≥ pq(k) puts (i, a_i) under the line from (p, a_p) to (k, b_k), so
   λ_pk ≤ λ_ik. For each k the best vertex is the tangent from (k, b_k) to the vertices of H left
   of k (as in step 3); :func:`lp_bound` finds all of them by one vectorised binary search.
   (Unrolling the recursion of step 4 gives the same minimum; the tests check that the two
   implementations agree.)

Tightness (Theorem 2's second half) is the explicit optimum of steps 1–3: past
min(C, ℓ) with C the least concave majorant of {(i, a_i) : i < n} ∪ {(n, x*)}, future
min(1, x* + k·d*); :func:`impactbandits.oracles.concave_bound_reference.optimal_sequence`
builds it and the tests check it against the LP's constraints.

**Cost.** Adding an observation: O(1) amortised to push a point on the upper hull (monotone
chain; abscissae arrive in order) plus an O(log h) binary search for the tangent, h ≤ n the hull
size. A query ``value(R)``: O(1), any order of R. Memory O(h). One-shot :func:`lp_bound`:
O(n log h) in numpy (hull by vectorised elimination passes finished by a monotone chain;
tangents by a vectorised binary search, or a dense table when n·h is small).

**Rounding.** Everything is exact in real arithmetic. In floating point the feasibility tests
(m_n ≤ x*_n, resp. A ≤ b) allow :data:`FEASIBILITY_TOLERANCE` (noise-free data with L = U on a
straight line meets them with equality, which rounding may break by an ulp); x*_n is then raised
to m_n.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "FEASIBILITY_TOLERANCE",
    "ConcaveBound",
    "capped_linear_sum",
    "lp_bound",
]

#: Absolute slack allowed in the feasibility test m_n ≤ x*_n (float rounding only).
FEASIBILITY_TOLERANCE = 1e-9
#: Largest reward: the LP's upper bound on every v_j.
REWARD_MAX = 1.0
#: Smallest reward: the LP's lower bound on every v_j.
REWARD_MIN = 0.0
#: Vectorised elimination passes of :func:`_upper_hull` before its monotone-chain finish.
MAX_HULL_PASSES = 16
#: Largest (k, vertex) table :func:`lp_bound` builds densely for the tangent slopes σ_k; beyond,
#: a vectorised binary search over the hull.
DENSE_TANGENT_BUDGET = 1 << 18


def capped_linear_sum(value: float, slope: float, remaining: int) -> float:
    """``g_R(x, d) = Σ_{k=1}^{R} min(1, x + k·d)`` for x ≤ 1, d ≥ 0, in O(1).

    The optimal continuation of (⋆) after a past ending at value x with last increment d
    (Lindner et al. 2021, Section 4, LP (⋆); step 1 of the module docstring): the linear
    extension capped at 1. With K = #{k ≤ R : x + k·d < 1} the sum is
    ``K·x + d·K(K+1)/2 + (R − K)``.
    """
    if remaining <= 0:
        return 0.0
    if value >= REWARD_MAX:
        return float(remaining)
    if slope <= 0.0:
        return remaining * value
    gap = REWARD_MAX - value
    if slope * remaining < gap:  # no term reaches the cap
        return remaining * value + slope * (remaining * (remaining + 1) / 2)
    k = min(remaining, max(0, math.ceil(gap / slope) - 1))  # (1 − x)/d ≤ R: finite
    return k * value + slope * (k * (k + 1) / 2) + (remaining - k)


class ConcaveBound:
    """One arm's LP (⋆) of Lindner et al. (2021, Section 4), solved exactly and incrementally.

    Feed the confidence intervals [L_j, U_j] of the arm's observations in pull order with
    :meth:`add`; :meth:`value` then returns the optimum of (⋆) for any number R of remaining
    pulls — the optimistic future reward that Theorem 2 proves is a tight upper bound over all
    concave increasing reward curves inside the intervals — or ``None`` when (⋆) is infeasible
    (the arm is in its decreasing phase; once infeasible, it stays so). Intervals are clipped to
    [0, 1] like the LP's bounds; an interval empty after clipping makes (⋆) infeasible.

    :meth:`add` costs O(1) amortised plus an O(log h) binary search (h ≤ n, the size of the
    upper hull of the lower ends); :meth:`value` is O(1), for any sequence of R. The algorithm
    and its proof are in the module docstring. With no observation, (⋆) has the all-ones
    solution and ``value(R) = R``.
    """

    __slots__ = ("_d", "_feasible", "_hx", "_hy", "_n", "_pending", "_running_max", "_x")

    def __init__(self) -> None:
        self._n = 0
        self._feasible = True
        self._x = math.nan  # x*_n = max v_n over feasible pasts
        self._d = math.inf  # d*_n = max Δ_n over feasible pasts (unbounded for n = 1)
        self._running_max = -math.inf  # m_n = max_{j ≤ n} a_j
        self._pending = math.nan  # a_n: joins the hull when observation n + 1 arrives
        self._hx: list[int] = []  # upper hull of the points (i, a_i), i < n, abscissae
        self._hy: list[float] = []  # … and ordinates

    @classmethod
    def from_intervals(cls, lower: ArrayLike, upper: ArrayLike) -> ConcaveBound:
        """A bound fed with all intervals ``[lower[j], upper[j]]`` in order (see :meth:`add`)."""
        bound = cls()
        bound.extend(lower, upper)
        return bound

    @property
    def n(self) -> int:
        """Number of observations added so far."""
        return self._n

    @property
    def feasible(self) -> bool:
        """Whether (⋆) is feasible: some concave nondecreasing [0, 1] curve fits all intervals.

        Infeasibility is the paper's signal (Section 4) that the arm is in its decreasing phase.
        """
        return self._feasible

    @property
    def max_last_value(self) -> float | None:
        """x* = max v_n over the feasible pasts of (⋆); ``None`` if infeasible or n = 0."""
        return self._x if self._feasible and self._n > 0 else None

    @property
    def max_last_increment(self) -> float | None:
        """d* = max (v_n − v_{n−1}) over feasible pasts, attained together with x*.

        ``math.inf`` for n = 1 (no concavity constraint binds the next increment); ``None`` if
        infeasible or n = 0.
        """
        return self._d if self._feasible and self._n > 0 else None

    def add(self, lower: float, upper: float) -> None:
        """Append observation n + 1 with confidence interval [lower, upper] (LP (⋆), Section 4).

        Steps 3–4 of the module docstring: x*_{n+1} = min(b, x*_n + d*_n), feasibility test
        max(m_n, a) ≤ x*_{n+1}, then d*_{n+1} by a tangent search on the upper hull of the lower
        ends. Infinite ends are allowed (clipped); NaN is not.
        """
        if lower != lower or upper != upper:  # NaN
            raise ValueError("ConcaveBound.add: interval ends must not be NaN")
        self._n += 1
        if not self._feasible:
            return
        a = lower if lower > REWARD_MIN else REWARD_MIN
        b = upper if upper < REWARD_MAX else REWARD_MAX
        n = self._n
        top = self._x + self._d if n > 1 else math.inf
        x = b if b < top else top
        floor = a if a > self._running_max else self._running_max
        if floor > x:
            if floor > x + FEASIBILITY_TOLERANCE:
                self._feasible = False
                return
            x = floor
        if n > 1:
            self._push_hull(n - 1, self._pending)
            self._d = self._tangent(n, x)
        self._x = x
        self._running_max = floor
        self._pending = a

    def extend(self, lower: ArrayLike, upper: ArrayLike) -> None:
        """:meth:`add` each interval ``[lower[j], upper[j]]`` in order."""
        lo, up = _as_intervals(lower, upper, allow_empty=True)
        for count, (a, b) in enumerate(zip(lo.tolist(), up.tolist(), strict=True), start=1):
            self.add(a, b)
            if not self._feasible:  # nothing left to compute: just count the rest
                self._n += len(lo) - count
                return

    def value(self, remaining: int) -> float | None:
        """Optimum of LP (⋆) with R = ``remaining`` future pulls, or ``None`` if infeasible.

        This is SPO's optimistic future reward p_i for an arm in its increasing phase
        (Lindner et al. 2021, Section 4; Theorem 2: an upper bound on the true future reward
        Σ_{j=n+1}^{n+R} f(j), attained by a concave increasing curve). O(1): g_R(x*, d*) for
        n ≥ 2, R for n ≤ 1, 0 for R = 0.
        """
        if not self._feasible:
            return None
        if remaining < 0:
            raise ValueError(f"remaining must be >= 0, got {remaining}")
        if self._n <= 1:
            return float(remaining)
        return capped_linear_sum(self._x, self._d, remaining)

    def copy(self) -> ConcaveBound:
        """An independent copy of this arm's state."""
        other = ConcaveBound.__new__(ConcaveBound)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other._hx = list(self._hx)
        other._hy = list(self._hy)
        return other

    def _push_hull(self, i: int, y: float) -> None:
        """Add (i, y), i larger than every abscissa so far, to the upper hull (monotone chain)."""
        hx, hy = self._hx, self._hy
        while len(hx) >= 2:
            x0, y0, x1, y1 = hx[-2], hy[-2], hx[-1], hy[-1]
            # drop (x1, y1) unless strictly above the chord from (x0, y0) to (i, y)
            if (y1 - y0) * (i - x0) <= (y - y0) * (x1 - x0):
                hx.pop()
                hy.pop()
            else:
                break
        hx.append(i)
        hy.append(y)

    def _tangent(self, n: int, y: float) -> float:
        """min_{i<n} (y − a_i)/(n − i): slope of the tangent from (n, y) to the upper hull.

        Along the hull the slopes from its vertices V_m to Q = (n, y) decrease while Q is on or
        below the line of edge V_m V_{m+1} and increase afterwards (the edge slopes decrease), so
        the minimum is at the first vertex whose outgoing edge line passes strictly below Q.
        """
        hx, hy = self._hx, self._hy
        lo, hi = 0, len(hx) - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            x0, y0 = hx[mid], hy[mid]
            if (hy[mid + 1] - y0) * (n - x0) < (y - y0) * (hx[mid + 1] - x0):
                hi = mid
            else:
                lo = mid + 1
        return (y - hy[lo]) / (n - hx[lo])


def _as_intervals(
    lower: ArrayLike, upper: ArrayLike, *, allow_empty: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    lo = np.asarray(lower, dtype=float)
    up = np.asarray(upper, dtype=float)
    if lo.ndim != 1 or up.ndim != 1 or lo.shape != up.shape:
        raise ValueError(
            f"lower and upper must be 1-D arrays of equal length, got shapes {lo.shape} and "
            f"{up.shape}"
        )
    if not allow_empty and lo.size == 0:
        raise ValueError("need at least one past observation (n >= 1)")
    if np.isnan(lo).any() or np.isnan(up).any():
        raise ValueError("interval ends must not be NaN")
    return lo, up


def _check_remaining(remaining: int) -> int:
    r = int(remaining)
    if r != remaining or r < 0:
        raise ValueError(f"remaining must be a non-negative integer, got {remaining!r}")
    return r


def _upper_hull(y: np.ndarray) -> np.ndarray:
    """Indices of the vertices of the upper convex hull of the points (j, y[j]), in order.

    Vectorised passes drop every point not strictly above the chord of its current neighbours
    (never a vertex: it lies under a chord of two other points); when passes stop paying off a
    monotone chain over the survivors finishes the job. Collinear points are dropped.
    """
    idx = np.arange(y.size)
    for _ in range(MAX_HULL_PASSES):
        if idx.size < 3:
            return idx
        x0, x1, x2 = idx[:-2], idx[1:-1], idx[2:]
        y0 = y[x0]
        under = (y[x1] - y0) * (x2 - x0) <= (y[x2] - y0) * (x1 - x0)
        if not under.any():
            return idx
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~under
        idx = idx[keep]
    hull: list[int] = []
    values = y.tolist()
    for i in idx.tolist():
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (values[i1] - values[i0]) * (i - i0) <= (values[i] - values[i0]) * (i1 - i0):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=np.intp)


def _push_point(hull: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The upper hull of the points (j, y_j), j ≤ m, from that of the points j < m (m = last)."""
    kept = hull.tolist()
    m = y.size - 1
    while len(kept) >= 2:
        i0, i1 = kept[-2], kept[-1]
        if (y[i1] - y[i0]) * (m - i0) <= (y[m] - y[i0]) * (i1 - i0):
            kept.pop()
        else:
            break
    kept.append(m)
    return np.asarray(kept, dtype=np.intp)


def _tangent_slopes(hull: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """σ_k = min over hull vertices i < k of (b_k − a_i)/(k − i), for k = 1..len(b) − 1 (0-based).

    The slope of the tangent from (k, b_k) to the hull vertices left of k (step 3 of the module
    docstring). Dense when the k × vertex table fits :data:`DENSE_TANGENT_BUDGET`; otherwise a
    binary search vectorised over k: the first vertex m whose outgoing edge line passes strictly
    below (k, b_k), as in :meth:`ConcaveBound._tangent`. Vertex 0 is always left of k.
    """
    hx = hull.astype(float)
    hy = a[hull]
    ks = np.arange(1, b.size)
    kf = ks.astype(float)
    bk = b[1:]
    if ks.size * hull.size <= DENSE_TANGENT_BUDGET:
        run = kf[:, None] - hx[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            slopes = np.where(run > 0, (bk[:, None] - hy[None, :]) / run, np.inf)
        return slopes.min(axis=1)
    lo = np.zeros(ks.size, dtype=np.intp)
    hi = np.searchsorted(hull, ks) - 1  # last vertex strictly left of k
    last = hull.size - 1
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) >> 1
        nxt = np.minimum(mid + 1, last)
        y0 = hy[mid]
        below = (hy[nxt] - y0) * (kf - hx[mid]) < (bk - y0) * (hx[nxt] - hx[mid])
        hi = np.where(active & below, mid, hi)
        lo = np.where(active & ~below, mid + 1, lo)
    return (bk - hy[lo]) / (kf - hx[lo])


def lp_bound(lower: ArrayLike, upper: ArrayLike, remaining: int) -> float | None:
    """Exact optimum of LP (⋆) (Lindner et al. 2021, Section 4, Theorem 2), ``None`` if infeasible.

    ``lower``/``upper``: the n ≥ 1 past confidence intervals [L_j, U_j] in pull order (clipped to
    [0, 1]; an interval empty after clipping makes (⋆) infeasible); ``remaining``: R ≥ 0, the
    number of future pulls summed in the objective. One vectorised pass, O(n log n) numpy work
    (see the module docstring): feasibility A ≤ b (step 4), x* by the closed form of step 6,
    d* = min_{i<n} (x* − a_i)/(n − i) (step 3), value g_R(x*, d*) (steps 1–2, 5). Independent
    of :class:`ConcaveBound`'s recursion, with which it agrees.
    """
    lo, up = _as_intervals(lower, upper)
    r = _check_remaining(remaining)
    a = np.maximum(lo, REWARD_MIN)
    b = np.minimum(up, REWARD_MAX)
    n = a.size
    if n == 1:
        return float(r) if a[0] <= b[0] + FEASIBILITY_TOLERANCE else None
    past = _upper_hull(a[:-1])  # H: the upper hull of the lower ends j < n
    hull = _push_point(past, a)  # … and of all n lower ends
    grid = np.arange(n, dtype=float)
    majorant = np.maximum.accumulate(np.interp(grid, hull.astype(float), a[hull]))  # A
    if (majorant > b + FEASIBILITY_TOLERANCE).any():
        return None
    x = float(b[-1])
    if n > 2:
        lines = b[1:-1] + (n - 1 - grid[1:-1]) * _tangent_slopes(past, a, b[:-1])
        x = min(x, float(lines.min()))
    x = max(x, float(majorant[-1]))  # x* ≥ m_n exactly; restores it after rounding
    d = float(((x - a[:-1]) / grid[n - 1 : 0 : -1]).min())
    return capped_linear_sum(x, d, r)
