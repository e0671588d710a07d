"""Improving multi-armed bandit (IMAB) instances (Heidari et al. 2016; Patil et al. 2023).

An IMAB curve is bounded in [0, 1], nondecreasing and has diminishing returns
(f(n+1) − f(n) ≤ f(n) − f(n−1)). Families, each returning an ``(k, length)`` array of f_i(m)
for m = 1..length:

* :func:`lower_bound_instance` — the family I_m of Patil et al. §3 (Theorem 2): with
  N = ⌈T/k⌉, every arm rises as n/(kN); the others stop at 1/k after N pulls, arm m keeps rising
  to 1 at kN pulls. No algorithm can tell arm m apart before it has N pulls.
* :func:`linear_vs_flat` — the proof of Theorem 3 (round robin is Θ(k²)): one arm rises linearly
  to 1 over ``ramp`` pulls, the others are flat.
* :func:`random_imab_curves` — a documented random generator of bounded, increasing, concave
  curves (saturating exponentials with random asymptote and rate).
* :func:`saturating_curves` — concave quadratics reaching their asymptote a_i exactly after L_i
  pulls and flat afterwards (instances for Theorem 5 with a known saturation point).

:func:`validate_imab` rejects curves that break the assumptions, naming the arm and the first
violating index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from impactbandits.envs.rested import validate_curves
from impactbandits.errors import SpecError

__all__ = [
    "IMAB_TOLERANCE",
    "linear_vs_flat",
    "lower_bound_instance",
    "random_imab_curves",
    "saturating_curves",
    "validate_imab",
]

#: Slack for floating-point rounding in the monotonicity and concavity checks.
IMAB_TOLERANCE = 1e-12
#: Random generator ranges: asymptote a ~ U(A_MIN, 1); rate r log-uniform in [R_MIN, R_MAX]/length.
A_MIN = 0.1
RATE_LOW, RATE_HIGH = 2.0, 200.0


def validate_imab(curves: np.ndarray, field: str = "curves") -> np.ndarray:
    """Check bounded, nondecreasing and diminishing returns; one-line error otherwise."""
    curves = validate_curves(curves, field)  # finite, within [0, 1]
    step = np.diff(curves, axis=1)
    falling = step < -IMAB_TOLERANCE
    if falling.any():
        arm, index = (int(x) for x in np.argwhere(falling)[0])
        raise SpecError(
            field, f"arm {arm} decreases at index {index + 1} (IMAB curves must be nondecreasing)"
        )
    convex = np.diff(step, axis=1) > IMAB_TOLERANCE
    if convex.any():
        arm, index = (int(x) for x in np.argwhere(convex)[0])
        raise SpecError(
            field,
            f"arm {arm} has increasing returns at index {index + 2} (IMAB "
            "curves must have diminishing returns)",
        )
    return curves


def lower_bound_instance(k: int, m: int, horizon: int, length: int | None = None) -> np.ndarray:
    """Instance I_m of Patil et al. (2023, §3) for ``k`` arms and horizon T (arm ``m`` is
    0-based here; the paper's m ∈ [k] is m + 1)."""
    if not 0 <= m < k:
        raise ValueError(f"m must be in 0..{k - 1}, got {m}")
    length = length or horizon
    n_cap = math.ceil(horizon / k)
    n = np.arange(1, length + 1, dtype=float)
    others = np.where(n <= n_cap, n / (k * n_cap), 1.0 / k)
    best = np.where(n <= k * n_cap, n / (k * n_cap), 1.0)
    curves = np.tile(others, (k, 1))
    curves[m] = best
    return curves


def linear_vs_flat(k: int, ramp: int, length: int, flat: float = 0.0) -> np.ndarray:
    """Arm 0 rises as min(1, n/ramp); arms 1..k−1 stay at ``flat`` (Theorem 3's proof)."""
    n = np.arange(1, length + 1, dtype=float)
    curves = np.full((k, length), float(flat))
    curves[0] = np.minimum(1.0, n / ramp)
    return curves


def random_imab_curves(k: int, length: int, seed: int) -> np.ndarray:
    """Saturating exponentials ``f_i(n) = a_i (1 − exp(−r_i n))`` — bounded, increasing and
    concave — with a_i ~ U(0.1, 1) and r_i = ρ_i / length, ρ_i log-uniform in [2, 200] (so
    arms saturate anywhere between the first 0.5% and half of the horizon). Drawn from
    ``numpy.random.default_rng(seed)``: the k asymptotes first, then the k rates."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(A_MIN, 1.0, k)
    rho = np.exp(rng.uniform(math.log(RATE_LOW), math.log(RATE_HIGH), k))
    n = np.arange(1, length + 1, dtype=float)
    return a[:, None] * -np.expm1(-(rho[:, None] / length) * n[None, :])


def saturating_curves(
    asymptotes: Sequence[float], saturation: Sequence[int], length: int, start: float = 0.0
) -> np.ndarray:
    """``f_i(n) = s + (a_i − s)·(1 − (1 − min(n, L_i)/L_i)²)``: concave, increasing, equal to
    a_i exactly from pull L_i on (a known saturation point, for Theorem 5)."""
    n = np.arange(1, length + 1, dtype=float)
    rows = []
    for a, sat in zip(asymptotes, saturation, strict=True):
        x = np.minimum(n, sat) / sat
        rows.append(start + (a - start) * (1.0 - (1.0 - x) ** 2))
    return np.stack(rows)
