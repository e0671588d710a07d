"""The ``variant`` switch shared by components whose authors' code departs from their paper.

``variant = "paper"`` (every default) follows the paper's algorithm; ``variant =
"authors-code"`` reproduces the authors' public implementation, difference by difference, as
documented in each component's docstring and in the fidelity ledger (``docs/fidelity.md``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["VARIANTS", "Variant", "refresh_stale"]

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
