"""Exact benchmarks ("oracles").

Regret oracles have the signature ``oracle(fresh_env, times) -> (R, len(times))``
(:func:`best_fixed_arm`, :func:`optimal_allocation_oracle`). Algorithmic oracles used by
policies and figures: :func:`optimal_allocation` (rested bandits, every horizon at once) and
:class:`ConcaveBound` / :func:`lp_bound` (SPO's LP (⋆) bound, exact).
"""

from impactbandits.oracles.allocation import Allocation, optimal_allocation
from impactbandits.oracles.concave_bound import ConcaveBound, lp_bound
from impactbandits.oracles.rested import optimal_allocation_oracle
from impactbandits.oracles.stationary import best_fixed_arm

__all__ = [
    "Allocation",
    "ConcaveBound",
    "best_fixed_arm",
    "lp_bound",
    "optimal_allocation",
    "optimal_allocation_oracle",
]
