"""SPO's compiled step: Lindner et al. (2021) Algorithm 1's index and the LP (⋆) bound of §4.

Transcriptions, operation for operation, of
:func:`~impactbandits.policies.spo.linear_optimistic_sum` (noise-free index),
:class:`~impactbandits.oracles.concave_bound.ConcaveBound` (``add``, ``_push_hull``,
``_tangent``, ``value``) and :func:`~impactbandits.oracles.concave_bound.capped_linear_sum`
(noisy index), over per-arm arrays instead of objects. The compiled-step tests check the
whole loop against :class:`~impactbandits.policies.spo.SPO` bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits.core.compiled import kernel

#: :data:`impactbandits.oracles.concave_bound.FEASIBILITY_TOLERANCE`.
FEASIBILITY_TOLERANCE = 1e-9


@kernel(inline=True)
def optimistic_sum(value: float, slope: float, remaining: int) -> float:
    """``linear_optimistic_sum`` for slope ≥ 0 (the only case SPO's noise-free index uses)."""
    r = float(remaining)
    below = np.ceil((1.0 - value) / slope) - 1.0 if slope > 0 else (r if value < 1 else 0.0)
    k = min(max(below, 0.0), r)
    return k * value + slope * k * (k + 1) / 2.0 + (r - k)


@kernel(inline=True)
def linear_sum(value: float, slope: float, remaining: int) -> float:
    """:func:`impactbandits.policies.spo.linear_optimistic_sum` for one value and
    slope of any sign, with its operations in its order."""
    r = float(remaining)
    below = np.ceil((1.0 - value) / slope) - 1.0 if slope > 0 else (r if value < 1 else 0.0)
    above = np.floor((value - 1.0) / -slope) if slope < 0 else 0.0
    k = min(max(below, 0.0), r)
    j = min(max(above if value >= 1 else 0.0, 0.0), r)
    if slope >= 0:
        return k * value + slope * k * (k + 1) / 2.0 + (r - k)
    return j + (r - j) * value + slope * (r * (r + 1) - j * (j + 1)) / 2.0


@kernel(inline=True)
def capped_linear_sum(value: float, slope: float, remaining: int) -> float:
    """:func:`impactbandits.oracles.concave_bound.capped_linear_sum`."""
    if remaining <= 0:
        return 0.0
    if value >= 1.0:
        return float(remaining)
    if slope <= 0.0:
        return remaining * value
    gap = 1.0 - value
    if slope * remaining < gap:
        return remaining * value + slope * (remaining * (remaining + 1) / 2)
    k = min(remaining, max(0, math.ceil(gap / slope) - 1))
    return k * value + slope * (k * (k + 1) / 2) + (remaining - k)


@kernel(inline=True)
def _push_hull(
    arm: int, i: int, y: float, hx: np.ndarray, hy: np.ndarray, hlen: np.ndarray
) -> None:
    m = hlen[arm]
    while m >= 2:
        x0, y0, x1, y1 = hx[arm, m - 2], hy[arm, m - 2], hx[arm, m - 1], hy[arm, m - 1]
        if (y1 - y0) * (i - x0) <= (y - y0) * (x1 - x0):
            m -= 1
        else:
            break
    hx[arm, m] = i
    hy[arm, m] = y
    hlen[arm] = m + 1


@kernel(inline=True)
def _tangent(arm: int, n: int, y: float, hx: np.ndarray, hy: np.ndarray, hlen: np.ndarray) -> float:
    lo, hi = 0, hlen[arm] - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        x0, y0 = hx[arm, mid], hy[arm, mid]
        if (hy[arm, mid + 1] - y0) * (n - x0) < (y - y0) * (hx[arm, mid + 1] - x0):
            hi = mid
        else:
            lo = mid + 1
    return (y - hy[arm, lo]) / (n - hx[arm, lo])


@kernel(inline=True)
def bound_add(
    arm: int,
    lower: float,
    upper: float,
    n: np.ndarray,
    feasible: np.ndarray,
    x: np.ndarray,
    d: np.ndarray,
    running_max: np.ndarray,
    pending: np.ndarray,
    hx: np.ndarray,
    hy: np.ndarray,
    hlen: np.ndarray,
) -> None:
    """``ConcaveBound.add`` for ``arm``."""
    n[arm] += 1
    if not feasible[arm]:
        return
    a = lower if lower > 0.0 else 0.0
    b = upper if upper < 1.0 else 1.0
    m = n[arm]
    top = x[arm] + d[arm] if m > 1 else math.inf
    value = b if b < top else top
    floor = a if a > running_max[arm] else running_max[arm]
    if floor > value:
        if floor > value + FEASIBILITY_TOLERANCE:
            feasible[arm] = False
            return
        value = floor
    if m > 1:
        _push_hull(arm, m - 1, pending[arm], hx, hy, hlen)
        d[arm] = _tangent(arm, m, value, hx, hy, hlen)
    x[arm] = value
    running_max[arm] = floor
    pending[arm] = a
