"""Validation of rested reward curves, shared by :mod:`impactbandits.envs.rested` and
:mod:`impactbandits.envs.improving` (kept apart so that neither module imports the other's
internals: ``rested`` builds IMAB instances from ``improving``, ``improving`` only needs this
check)."""

from __future__ import annotations

import numpy as np

from impactbandits.errors import SpecError

__all__ = ["validate_curves"]


def validate_curves(
    curves: np.ndarray, field: str = "curves", upper: float = 1.0, lower: float = 0.0
) -> np.ndarray:
    """Check an ``(N, length)`` array: finite, within [``lower``, ``upper``] (default [0, 1]).
    One-line error otherwise."""
    curves = np.asarray(curves, dtype=float)
    if curves.ndim != 2 or curves.shape[0] < 1 or curves.shape[1] < 1:
        raise SpecError(
            field, f"must be a non-empty (arms × pulls) table, got shape {curves.shape}"
        )
    bad = ~np.isfinite(curves) | (curves < lower) | (curves > upper)
    if bad.any():
        arm, index = (int(x) for x in np.argwhere(bad)[0])
        raise SpecError(
            field,
            f"arm {arm} has value {float(curves[arm, index])} at pull {index + 1} (index {index}); "
            f"rewards must be finite and within [{lower:g}, {upper:g}]",
        )
    return curves
