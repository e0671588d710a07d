"""Oracle for reward-opportunity bandits: the expected utility of the Lemma-1 optimum."""

from __future__ import annotations

import numpy as np

from impactbandits.core.environment import Environment
from impactbandits.opportunity.objective import optimal_utility

__all__ = ["opportunity_optimum"]


def opportunity_optimum(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))`` optimal expected utility at every horizon in ``times`` (Lemma 1)."""
    mu = env.expected_rewards()
    lam = env.transfer_cost  # type: ignore[attr-defined]
    out = np.empty((mu.shape[0], len(times)))
    for r in range(mu.shape[0]):
        f_mu = env.fairness(mu[r])  # type: ignore[attr-defined]
        out[r] = [optimal_utility(mu[r], f_mu, lam, int(t)) for t in times]
    return out
