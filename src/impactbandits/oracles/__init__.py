"""Exact benchmarks ("oracles").

Regret oracles have the signature ``oracle(fresh_env, times) -> (R, len(times))``
(:func:`best_fixed_arm`, :func:`optimal_allocation_oracle`). Algorithmic oracles used by
policies and figures: :func:`optimal_allocation` (rested bandits, every horizon at once) and
:class:`ConcaveBound` / :func:`lp_bound` (SPO's LP (⋆) bound, exact).

Ron et al.'s reward-opportunity objective and its Lemma-1 optimum
(:mod:`impactbandits.oracles.opportunity`) and fairness functions
(:mod:`impactbandits.oracles.opportunity_fairness`) live here too: the environment, SRUM and its
compiled loop share them with the oracle, which may not import environments or policies.

Names are imported on first use, so a worker that needs one oracle loads only that module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Allocation": "impactbandits.oracles.allocation",
    "optimal_allocation": "impactbandits.oracles.allocation",
    "ConcaveBound": "impactbandits.oracles.concave_bound",
    "lp_bound": "impactbandits.oracles.concave_bound",
    "optimal_allocation_oracle": "impactbandits.oracles.rested",
    "best_fixed_arm": "impactbandits.oracles.stationary",
}

__all__ = [
    "Allocation",
    "ConcaveBound",
    "best_fixed_arm",
    "lp_bound",
    "optimal_allocation",
    "optimal_allocation_oracle",
]

if TYPE_CHECKING:  # pragma: no cover
    from impactbandits.oracles.allocation import Allocation, optimal_allocation
    from impactbandits.oracles.concave_bound import ConcaveBound, lp_bound
    from impactbandits.oracles.rested import optimal_allocation_oracle
    from impactbandits.oracles.stationary import best_fixed_arm


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'impactbandits.oracles' has no attribute {name!r}")
