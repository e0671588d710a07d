"""Oracle for rested bandits: the value of the optimal policy at every checkpoint.

Rewards depend only on how often each arm is pulled, so the optimal policy's value at horizon h
is the optimal allocation OPT(h) (Lindner et al. 2021, §2), computed exactly by
:func:`~impactbandits.oracles.allocation.optimal_allocation` for every horizon at once.

A sweep asks for the same curves' optimum in every cell (one per horizon for horizon-aware
policies), and a figure's environments often share their curves (one instance under several
noise levels), so :func:`allocation` memoises the optimal allocation (OPT(0..length) and its
counts) per process, keyed by a hash of the curve values: the oracle of every task a worker
runs and the figures drawn after a run take it from there. The memo only avoids recomputing a
deterministic function: results do not depend on it.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

from impactbandits.core.environment import Environment
from impactbandits.oracles.allocation import Allocation, optimal_allocation

__all__ = ["allocation", "allocation_values", "optimal_allocation_oracle"]

#: Distinct curve sets whose OPT is memoised per process.
MEMO_SIZE = 16


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memo(digest: str, shape: tuple[int, int], data: bytes) -> Allocation:
    curves = np.frombuffer(data, dtype=np.float64).reshape(shape)
    return optimal_allocation(curves)  # read-only arrays


def allocation(curves: np.ndarray) -> Allocation:
    """:func:`~impactbandits.oracles.allocation.optimal_allocation` of ``curves`` (method
    ``"auto"``), memoised per process by the curves' values."""
    curves = np.ascontiguousarray(curves, dtype=np.float64)
    data = curves.tobytes()
    return _memo(hashlib.sha256(data).hexdigest(), curves.shape, data)


def allocation_values(curves: np.ndarray) -> np.ndarray:
    """OPT(h) for h = 0..length of ``curves`` (memoised per process)."""
    return allocation(curves).values


def optimal_allocation_oracle(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))`` OPT(t) of a freshly reset rested environment (exposes ``curves``)."""
    times = np.asarray(times, dtype=np.int64)
    values = allocation_values(np.asarray(env.curves))  # type: ignore[attr-defined]
    replications = env.expected_rewards().shape[0]
    return np.tile(values[times], (replications, 1))
