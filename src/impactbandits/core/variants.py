"""The ``variant`` switch shared by components whose authors' code departs from their paper.

``variant = "paper"`` (every default) follows the paper's algorithm; ``variant =
"authors-code"`` reproduces the authors' public implementation, difference by difference, as
documented in each component's docstring and in the fidelity ledger
(https://impactbandits.readthedocs.io/en/latest/fidelity/).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from impactbandits.core.compiled import kernel

__all__ = ["VARIANTS", "Variant", "kept_argmax", "refresh_stale", "stale_arms", "stale_init"]

Variant = Literal["paper", "authors-code"]
VARIANTS: tuple[str, ...] = ("paper", "authors-code")


def refresh_stale(kept: np.ndarray, fresh: np.ndarray, pulled: np.ndarray | None) -> np.ndarray:
    """Indices as the authors' loops keep them: only the arm pulled last round is recomputed.

    ``kept`` ``(R, K)`` holds each arm's index from when it was last refreshed and is updated in
    place: ``pulled = None`` refreshes every arm (the first round after the initial pulls),
    otherwise only ``kept[r, pulled[r]] = fresh[r, pulled[r]]``. Returns ``kept``.
    """
    if pulled is None:
        kept[:] = fresh
    else:
        rows = np.arange(kept.shape[0])
        kept[rows, pulled] = fresh[rows, pulled]
    return kept


@kernel(inline=True)
def stale_init(k: int) -> Any:
    """One replication's kept indices and the arm pulled last round (``pulled[0]``, written by
    the step's ``update``): the state of :func:`refresh_stale`'s compiled form."""
    return np.zeros(k), np.zeros(1, dtype=np.int64)


@kernel(inline=True)
def stale_arms(kept: np.ndarray, pulled: np.ndarray, first: bool) -> tuple[int, int]:
    """The arms :func:`refresh_stale` recomputes in one replication, as ``range(*…)``: every
    arm when ``first`` (``pulled = None`` there), else the one pulled last round."""
    if first:
        return 0, kept.size
    return pulled[0], pulled[0] + 1


@kernel(inline=True)
def kept_argmax(kept: np.ndarray) -> int:
    """``np.argmax`` of one replication's kept indices: the first maximum, or the first NaN."""
    best = 0
    best_value = kept[0]
    if best_value != best_value:
        return 0
    for i in range(1, kept.size):
        value = kept[i]
        if value != value:
            return i
        if value > best_value:
            best, best_value = i, value
    return best
