"""UCB Greedy for blocking bandits (Basu, Sen, Sanghavi & Shakkottai, NeurIPS 2019).

In every round, among the arms available, play the one with the highest upper confidence bound
``μ̂_i + sqrt(c · ln t / N_i)`` (``t`` the round, ``N_i`` the real pulls of arm ``i``, ``μ̂_i``
their mean reward; arms never pulled first, ties to the lowest index). ``c = 8``: the constant
of the public replication (tombijaoui/Sequential-Decision-Making-Project, ``simulations.py``,
which uses ``log10 t``; the paper's algorithm box could not be read here: its abstract says only
"a UCB based algorithm ... leveraging the free exploration of arms due to the unavailability").
Anytime, deterministic (no random draws).

Availability comes from the delays the environment tells the learner
(``action_space.known["delays"]``, :class:`~impactbandits.envs.blocking.BlockingBandit`) and
the policy's own past actions (:class:`~impactbandits.oracles.blocking.BlockingClock`). When no
arm is available the policy plays arm 0, a blocked pick: an idle round, whose 0 is not counted
as a sample of that arm.

Oracle Greedy (play the available arm with the highest *true* mean) is not a policy here —
the library's learners are never told the means — but the oracle
:func:`~impactbandits.oracles.blocking.oracle_greedy`, the benchmark of UCB Greedy's regret.
"""

from __future__ import annotations

import math

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.oracles.blocking import BlockingClock
from impactbandits.params import PositiveFloat

__all__ = ["UCB_GREEDY_C", "UCBGreedy"]

#: UCB Greedy's exploration constant: index μ̂_i + sqrt(UCB_GREEDY_C · ln t / N_i).
UCB_GREEDY_C = 8.0


class UCBGreedy(Policy):
    """UCB Greedy (Basu et al. 2019): the available arm with the highest
    ``μ̂_i + sqrt(c · ln t / N_i)``; ``c`` defaults to 8. Needs the delays (a blocking bandit's
    ``known["delays"]``)."""

    deterministic = True

    def __init__(self, c: PositiveFloat = UCB_GREEDY_C) -> None:
        self.c = float(c)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        delays = getattr(space, "known", {}).get("delays")
        if delays is None:
            raise SpecError(
                "kind", "ucb-greedy needs the arms' delays: run it on a blocking bandit"
            )
        self.clock = BlockingClock(delays, rng.size)
        if self.clock.delays.size != space.n:
            raise SpecError("delays", f"need one delay per arm ({space.n})")
        self.counts = np.zeros((rng.size, space.n))
        self.sums = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)
        self.t = 0

    def index(self) -> np.ndarray:
        """``(R, K)`` upper confidence bounds of round ``t`` (``+inf``: never pulled)."""
        counts = np.maximum(self.counts, 1.0)
        bonus = np.sqrt(self.c * math.log(self.t) / counts)
        return np.where(self.counts > 0, self.sums / counts + bonus, np.inf)

    def select(self) -> np.ndarray:
        self.t += 1
        index = np.where(self.clock.available(), self.index(), -np.inf)
        return np.argmax(index, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        pulled = self.clock.record(actions)
        rows, arms = self.rows[pulled], actions[pulled]
        self.counts[rows, arms] += 1.0
        self.sums[rows, arms] += feedback.reward[pulled]
