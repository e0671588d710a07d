"""Regret oracle for B2DEP: the expected cumulative reward of the ghost policy π_ghost = π_{r*}
(Cella & Cesa-Bianchi 2020, Eq. 3), exactly, at every checkpoint of a run.

π_m cycles over the m best arms. Its first cycle meets fresh arms (τ = 0: payoff μ_j); every
later pull of arm j comes m rounds after the previous one (payoff μ_j(m)). So G_t(π_m) is a
prefix sum over the first cycle plus whole and partial later cycles — O(len(times)) per
replication. r* maximises g(m) = (1/m) Σ_{j≤m} μ_j(m) (ties: the smallest m), computed by
:func:`impactbandits.oracles.delay.ghost`.
"""

from __future__ import annotations

import numpy as np

from impactbandits.core.environment import Environment

__all__ = ["ghost_oracle", "ranking_cumulative"]


def ranking_cumulative(
    mu_sorted: np.ndarray, delays_sorted: np.ndarray, f: object, m: int, times: np.ndarray
) -> np.ndarray:
    """G_t(π_m) for t in ``times``: expected reward of cycling over the m best arms."""
    first = np.cumsum(mu_sorted[:m])  # round t ≤ m pulls arm t − 1, fresh
    steady = mu_sorted[:m] * (1.0 - np.where(m <= delays_sorted[:m], f(np.array([m]))[0], 0.0))  # type: ignore[operator]
    steady_prefix = np.concatenate([[0.0], np.cumsum(steady)])
    times = np.asarray(times, dtype=np.int64)
    out = np.empty(times.size)
    early = times <= m
    out[early] = first[times[early] - 1]
    later = times[~early] - m
    cycles, rest = later // m, later % m
    out[~early] = first[-1] + cycles * steady_prefix[-1] + steady_prefix[rest]
    return out


def ghost_oracle(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))`` G_t(π_ghost) for a freshly reset B2DEP environment."""
    from impactbandits.oracles.delay import ghost

    mu = np.asarray(env.means)  # type: ignore[attr-defined]
    order = np.argsort(-mu, kind="stable")
    delays = np.asarray(env.instance_delays)  # type: ignore[attr-defined]
    out = np.empty((delays.shape[0], len(times)))
    for r, d in enumerate(delays):
        best, _ = ghost(mu, d, env.f)  # type: ignore[attr-defined]
        out[r] = ranking_cumulative(mu[order], d[order], env.f, best, times)  # type: ignore[attr-defined]
    return out
