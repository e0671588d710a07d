"""The checkpoint summaries every compiled loop writes (:class:`~impactbandits.core.simulate.
Trajectory`'s reward, expected reward, pulls per arm and switches), in one place."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def record(
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    c: int,
    reward: float,
    value: float,
    pulls: np.ndarray,
    switches: int,
) -> None:
    """Write checkpoint ``c`` of one replication (the ``out_*`` arrays are its rows)."""
    out_reward[c] = reward
    out_expected[c] = value
    for i in range(pulls.size):
        out_pulls[c, i] = pulls[i]
    out_switches[c] = switches
