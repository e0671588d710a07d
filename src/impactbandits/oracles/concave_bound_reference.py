"""Certificates for the LP (⋆) solver of :mod:`impactbandits.oracles.concave_bound`.

Lindner, Heidari & Krause (IJCAI 2021), Section 4, LP (⋆), Theorem 2. Two helpers for tests:

* :func:`optimal_sequence` builds the explicit optimal curve of the module docstring's proof
  (the "tightness" half of Theorem 2): a concave, nondecreasing v_1..v_{n+R} in [0, 1] that fits
  every interval and whose future sum equals :func:`~impactbandits.oracles.concave_bound.lp_bound`.
  Its feasibility is a primal certificate that the bound is attained; HiGHS supplies the other
  side (no feasible point does better).
* :func:`lp_violation` measures how far a candidate v is from satisfying (⋆)'s constraints.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from impactbandits.oracles.concave_bound import (
    REWARD_MAX,
    REWARD_MIN,
    ConcaveBound,
    _as_intervals,
    _check_remaining,
    _upper_hull,
)

__all__ = ["lp_violation", "optimal_sequence"]


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
