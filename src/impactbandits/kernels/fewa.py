"""FEWA's filter (Seznec et al. 2019, Algorithm 1) as a compiled loop: the same operations as
the NumPy loop of :meth:`impactbandits.policies.rotting.FEWA.select`, one replication at a time
and stopping as soon as it is decided (``tests/test_rotting.py`` compares the two)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fewa_choices"]


@njit(cache=True, nogil=True)
def fewa_choices(
    averages: np.ndarray, counts: np.ndarray, windows: np.ndarray, widths: np.ndarray
) -> np.ndarray:
    """``(R,)`` arms to play. ``averages`` ``(R, K, W)``: average of the last ``windows[j]``
    rewards (NaN with fewer); ``counts`` ``(R, K)``; ``widths`` ``(W,)``: 2c(h, δ_t)."""
    size, arms, n_windows = averages.shape
    out = np.empty(size, dtype=np.int64)
    active = np.empty(arms, dtype=np.bool_)
    for r in range(size):
        for k in range(arms):
            active[k] = True
        choice = -1
        for j in range(n_windows):
            h = windows[j]
            remaining = 0
            for k in range(arms):
                if active[k]:
                    remaining += 1
            best_count = np.iinfo(np.int64).max
            for k in range(arms):
                playable = active[k] and (remaining == 1 or counts[r, k] < h)
                if playable and counts[r, k] < best_count:
                    best_count = counts[r, k]
                    choice = k
            if choice >= 0:
                break
            best = -np.inf
            for k in range(arms):
                if active[k] and averages[r, k, j] > best:
                    best = averages[r, k, j]
            for k in range(arms):
                if active[k] and not (averages[r, k, j] >= best - widths[j]):
                    active[k] = False
        if choice < 0:  # past the largest window every active arm is short: least pulled
            best_count = np.iinfo(np.int64).max
            for k in range(arms):
                if active[k] and counts[r, k] < best_count:
                    best_count = counts[r, k]
                    choice = k
        out[r] = choice
    return out
