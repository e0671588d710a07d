"""Certificates for the LP (⋆) solver of :mod:`impactbandits.oracles.concave_bound`.

Lindner, Heidari & Krause (IJCAI 2021), Section 4, LP (⋆), Theorem 2. Two helpers for tests:

* :func:`optimal_sequence` builds the explicit optimal curve of the module docstring's proof
  (the "tightness" half of Theorem 2): a concave, nondecreasing v_1..v_{n+R} in [0, 1] that fits
  every interval and whose future sum equals :func:`~impactbandits.oracles.concave_bound.lp_bound`.
  Its feasibility is a primal certificate that the bound is attained; HiGHS supplies the other
  side (no feasible point does better).
* :func:`lp_violation` measures how far a candidate v is from satisfying (⋆)'s constraints.
* :func:`lp_solution_highs` / :func:`lp_bound_highs` solve (⋆) with SciPy's HiGHS, the
  independent reference the fast solver is tested against (kept here so the production path
  never imports ``scipy.optimize``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.optimize import linprog

from impactbandits.oracles.concave_bound import (
    REWARD_MAX,
    REWARD_MIN,
    ConcaveBound,
    _as_intervals,
    _check_remaining,
    _upper_hull,
)

__all__ = ["lp_bound_highs", "lp_solution_highs", "lp_violation", "optimal_sequence"]

#: HiGHS primal/dual feasibility tolerance for the reference solver (its default is 1e-7).
HIGHS_TOLERANCE = 1e-10
#: Coefficients of v_j, v_{j+1} in the monotonicity rows and of v_{j−2}, v_{j−1}, v_j in the
#: concavity rows of (⋆), each row ≤ 0.
_MONOTONE_STENCIL = (1.0, -1.0)
_CONCAVE_STENCIL = (1.0, -2.0, 1.0)
#: scipy ``linprog`` status codes.
_LINPROG_OPTIMAL = 0
_LINPROG_INFEASIBLE = 2


def lp_violation(solution: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> float:
    """Largest violation (≥ 0) of LP (⋆)'s constraints by ``solution`` = v_1..v_{n+R}.

    Constraints of Lindner et al. (2021, Section 4, (⋆)): 0 ≤ v ≤ 1, L_j ≤ v_j ≤ U_j for the n
    past observations, v nondecreasing, and v_j ≤ 2v_{j−1} − v_{j−2} for j ≥ 3. Returns 0.0 for a
    feasible ``solution``.
    """
    v = np.asarray(solution, dtype=float)
    lo, up = _as_intervals(lower, upper)
    n = lo.size
    if v.ndim != 1 or v.size < n:
        raise ValueError(f"solution must be 1-D with at least n = {n} entries")
    parts = [
        REWARD_MIN - v,
        v - REWARD_MAX,
        lo - v[:n],
        v[:n] - up,
        -np.diff(v),
        np.diff(v, n=2),
        np.zeros(1),
    ]
    return float(max(part.max(initial=0.0) for part in parts))


def optimal_sequence(lower: ArrayLike, upper: ArrayLike, remaining: int) -> np.ndarray | None:
    """An optimal solution v_1..v_{n+R} of LP (⋆), built from the proof; ``None`` if infeasible.

    Theorem 2 (Lindner et al. 2021, Section 4 and Appendix C.2) says the optimum is attained by a
    concave increasing curve; this is one. With x*, d* from :class:`ConcaveBound` (steps 2–4 of
    :mod:`impactbandits.oracles.concave_bound`):

    * n = 1: v_1 = max(L_1, 0), then all ones;
    * n ≥ 2: past ``min(C, ℓ)`` with C the least concave majorant of the points
      {(i, a_i) : i < n} ∪ {(n, x*)} (a past ending at x*, step 6) and ℓ_k = x* − (n − k)·d*
      (which makes the last increment d*, step 3); future ``min(1, x* + k·d*)`` (step 1).
    """
    lo, up = _as_intervals(lower, upper)
    r = _check_remaining(remaining)
    bound = ConcaveBound.from_intervals(lo, up)
    if not bound.feasible:
        return None
    a = np.maximum(lo, REWARD_MIN)
    n = a.size
    if n == 1:
        return np.concatenate([a, np.full(r, REWARD_MAX)])
    x = bound.max_last_value
    d = bound.max_last_increment
    assert x is not None and d is not None
    points = np.append(a[:-1], x)
    hull = _upper_hull(points)
    grid = np.arange(n, dtype=float)
    chain = np.interp(grid, hull.astype(float), points[hull])
    past = np.minimum(chain, x - (n - 1 - grid) * d)
    future = np.minimum(REWARD_MAX, x + np.arange(1, r + 1) * d)
    return np.concatenate([past, future])


def _constraint_matrix(size: int) -> sp.csr_matrix:
    """Rows v_j − v_{j+1} ≤ 0 (monotone) then v_{j−2} − 2v_{j−1} + v_j ≤ 0 (concave)."""
    blocks = []
    for stencil in _MONOTONE_STENCIL, _CONCAVE_STENCIL:
        rows = max(size - len(stencil) + 1, 0)
        first = np.arange(rows)
        blocks.append(
            sp.coo_matrix(
                (
                    np.repeat([stencil], rows, axis=0).ravel(),
                    (
                        np.repeat(first, len(stencil)),
                        (first[:, None] + np.arange(len(stencil))).ravel(),
                    ),
                ),
                shape=(rows, size),
            )
        )
    return sp.vstack(blocks, format="csr")


def lp_solution_highs(lower: ArrayLike, upper: ArrayLike, remaining: int) -> np.ndarray | None:
    """An optimal v_1..v_{n+R} of LP (⋆) (Lindner et al. 2021, Section 4) by HiGHS, or ``None``.

    Reference solver for tests (not the production path): ``scipy.optimize.linprog`` with
    ``method="highs"`` on (⋆) truncated at j = n + R (exact, see step 0 of the module
    docstring), sparse constraints, feasibility tolerances :data:`HIGHS_TOLERANCE`. Returns
    ``None`` when HiGHS reports infeasibility (including an interval empty after clipping).
    """
    lo, up = _as_intervals(lower, upper)
    r = _check_remaining(remaining)
    n = lo.size
    size = n + r
    lb = np.full(size, REWARD_MIN)
    ub = np.full(size, REWARD_MAX)
    lb[:n] = np.maximum(lo, REWARD_MIN)
    ub[:n] = np.minimum(up, REWARD_MAX)
    if (lb > ub).any():  # scipy rejects crossed bounds before calling HiGHS
        return None
    cost = np.zeros(size)
    cost[n:] = -1.0
    matrix = _constraint_matrix(size)
    # scipy-stubs type A_ub as a dense array and bounds as pairs; HiGHS takes the sparse matrix
    # and the (size, 2) array as they are
    result = linprog(  # type: ignore[call-overload]
        cost,
        A_ub=matrix if matrix.shape[0] else None,
        b_ub=np.zeros(matrix.shape[0]) if matrix.shape[0] else None,
        bounds=np.column_stack([lb, ub]),
        method="highs",
        options={
            "primal_feasibility_tolerance": HIGHS_TOLERANCE,
            "dual_feasibility_tolerance": HIGHS_TOLERANCE,
        },
    )
    if result.status == _LINPROG_INFEASIBLE:
        return None
    if result.status != _LINPROG_OPTIMAL:
        raise RuntimeError(f"HiGHS failed on LP (⋆): {result.message}")
    return np.asarray(result.x, dtype=float)


def lp_bound_highs(lower: ArrayLike, upper: ArrayLike, remaining: int) -> float | None:
    """Optimum of LP (⋆) (Lindner et al. 2021, Section 4, Theorem 2) by HiGHS, or ``None``.

    The test reference for :func:`lp_bound`: same inputs and conventions, solved by
    :func:`lp_solution_highs`.
    """
    solution = lp_solution_highs(lower, upper, remaining)
    if solution is None:
        return None
    n = np.asarray(lower).size
    return float(solution[n:].sum())
