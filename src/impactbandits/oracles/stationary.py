"""Oracles for stationary environments."""

from __future__ import annotations

import numpy as np

from impactbandits.core.environment import Environment

__all__ = ["best_fixed_arm"]


def best_fixed_arm(env: Environment, times: np.ndarray) -> np.ndarray:
    """Expected cumulative reward of always playing the best arm: ``t · max_i μ_i``.

    ``env`` must be freshly reset; returns ``(R, len(times))``. Exact for stationary arms, where
    no adaptive policy can do better in expectation.
    """
    best = env.expected_rewards().max(axis=1)
    return best[:, None] * np.asarray(times, dtype=float)[None, :]
