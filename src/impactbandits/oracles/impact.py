"""Regret oracle for Tang et al. (2021): the best fixed policy p* on the continuous simplex.

A fixed p keeps the impact f(t) = p exactly (Eq. 2 is an average of identical shares), so its
expected cumulative reward after t rounds is t·U(p) with U(p) = Σ_k p_k r_k(p_k); regret
(Eq. 3) is measured against t·U(p*). p* comes from
:func:`~impactbandits.oracles.simplex.best_continuous_policy`: the exact optimum of a fine grid
(a certified lower bound) refined numerically, within the documented Lipschitz gap of the true
optimum. Lipschitz constants are measured on that grid.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from impactbandits.core.environment import Environment

__all__ = ["best_fixed_policy_oracle", "optimal_fixed_policy"]

#: Grid resolution for p* (matches the simplex oracle's default).
GRID = 400


def optimal_fixed_policy(env: Environment) -> tuple[np.ndarray, float]:
    """(p*, U(p*)) of an :class:`~impactbandits.envs.impact.ImpactBandit`."""
    from impactbandits.oracles.simplex import best_continuous_policy

    k = env.action_space.n

    def single(group: int) -> Callable[[np.ndarray], np.ndarray]:
        def r(x: np.ndarray) -> np.ndarray:
            shares = np.zeros((np.size(x), k))
            shares[:, group] = np.ravel(x)
            return env.stationary_reward(shares)[:, group].reshape(np.shape(x))  # type: ignore[attr-defined]

        return r

    functions = [single(g) for g in range(k)]
    grid = np.linspace(0.0, 1.0, GRID + 1)
    lipschitz = [float(np.abs(np.diff(f(grid))).max() * GRID) + 1e-12 for f in functions]
    p, value = best_continuous_policy(functions, lipschitz, GRID)
    return np.asarray(p), float(value)


def best_fixed_policy_oracle(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))``: t·U(p*) (the same instance for every replication)."""
    _, value = optimal_fixed_policy(env)
    replications = env._replications  # type: ignore[attr-defined]
    return np.tile(value * np.asarray(times, dtype=float), (replications, 1))
