"""Validation of rested reward curves, shared by :mod:`impactbandits.envs.rested` and
:mod:`impactbandits.envs.improving` (kept apart so that neither module imports the other's
internals: ``rested_families`` builds IMAB instances from ``improving``, ``improving`` only
needs this check), and the memory bound of a table of curves (:func:`check_table`), checked
before it is built."""

from __future__ import annotations

import numpy as np

from impactbandits.errors import SpecError
from impactbandits.params import MAX_LENGTH

__all__ = ["check_table", "validate_curves"]


def check_table(rows: int, length: int, rows_field: str, length_field: str = "length") -> None:
    """Refuse a table of ``rows`` curves of ``length`` values each beyond the memory bound of
    one tabulated curve (:data:`~impactbandits.params.LENGTH`: 10⁸ float64 values, 800 MB) —
    each bound alone holds, their product may not — naming both parameters, before anything
    is allocated."""
    limit = MAX_LENGTH
    if rows * length > limit:
        raise SpecError(
            length_field,
            f"{rows_field} × {length_field} = {rows:,} × {length:,} values exceed the {limit:,} "
            f"a table of curves may hold (8 bytes each: {8 * limit // 10**6:,} MB); give fewer "
            f"{rows_field} or a shorter {length_field}",
        )


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
