"""``mean ± half-width`` of a 95% Student-t interval, for the side-by-side harnesses' tables.
Imports nothing at module level beyond the standard library: the harnesses also run as workers
in the authors' environments, which may lack scipy."""

from __future__ import annotations

import math


def mean_interval(values: list[float], width: int = 9) -> str:
    """``"  mean ± half"`` (one decimal), the mean right-aligned in ``width`` characters."""
    from scipy import stats

    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
    return f"{mean:{width}.1f} ± {half:6.1f}"
