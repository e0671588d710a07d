"""What a round returns: feedback for the learner and the truth for the metrics.

:class:`Feedback` is all a policy may see. ``reward`` is the realised scalar reward of the round
for every replication of the batch. Semi-bandit settings (Tang et al.: each group activated
independently, only activated groups observed) additionally fill ``observed`` with one column per
group and ``NaN`` where nothing was observed.

:class:`Outcome` pairs the feedback with ``expected``, the expected reward of the chosen action in
the state before the round. The runner passes only ``feedback`` to the policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Feedback", "Outcome"]


@dataclass(frozen=True, slots=True)
class Feedback:
    """Learner-visible feedback for a batch of ``R`` replications."""

    reward: np.ndarray
    """``(R,)`` realised reward of the round."""
    observed: np.ndarray | None = None
    """``(R, n)`` per-group observations (``NaN``: not observed); ``None``: bandit feedback."""
    reevaluated: np.ndarray | None = None
    """``(R, n, E)`` fresh noisy re-evaluations of every arm's recent values, from rested
    environments with ``noise_draws = "per-evaluation"`` (the authors' code's noise model);
    ``None`` otherwise."""

    def replication(self, index: int) -> Feedback:
        """The feedback of one replication, as 0-d/1-d arrays (used by the scalar adapters)."""
        observed = None if self.observed is None else self.observed[index]
        again = None if self.reevaluated is None else self.reevaluated[index]
        return Feedback(reward=self.reward[index], observed=observed, reevaluated=again)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A round's result: learner feedback and the expected reward of the chosen action."""

    feedback: Feedback
    expected: np.ndarray
    """``(R,)`` expected reward of the chosen action given the state before the round."""
