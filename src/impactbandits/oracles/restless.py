"""Oracle for restless bandits: the best arm in every round.

When μ_i(t) depends on the round alone (not on what the learner played), no policy can beat
playing ``argmax_i μ_i(t)`` in every round t, and that policy is feasible: its value at horizon
T is ``Σ_{t ≤ T} max_i μ_i(t)`` (Metelli et al. 2022, §2; the benchmark of their restless
regret). Exact, O(K·T).
"""

from __future__ import annotations

import numpy as np

from impactbandits.core.environment import Environment

__all__ = ["best_arm_per_round"]


def best_arm_per_round(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))`` Σ_{t ≤ T} max_i μ_i(t) at every checkpoint T of a freshly reset
    restless environment (exposes ``curves``: ``curves[i, t − 1] = μ_i(t)``)."""
    times = np.asarray(times, dtype=np.int64)
    best = np.asarray(env.curves).max(axis=0)  # type: ignore[attr-defined]
    cumulative = np.concatenate([[0.0], np.cumsum(best)])
    replications = env.expected_rewards().shape[0]
    return np.tile(cumulative[times], (replications, 1))
