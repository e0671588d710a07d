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

Compiled step (:mod:`~impactbandits.core.compiled`): :func:`ucb_greedy_init`,
:func:`ucb_greedy_select` and :func:`ucb_greedy_update`, the same rounds for one replication
(``params``: c, then the delays, capped at the run's length + 1 in ``init``).

Oracle Greedy (play the available arm with the highest *true* mean) is not a policy here —
the library's learners are never told the means — but the oracle
:func:`~impactbandits.oracles.blocking.oracle_greedy`, the benchmark of UCB Greedy's regret.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.oracles.blocking import BlockingClock
from impactbandits.params import PositiveFloat

__all__ = [
    "UCB_GREEDY_C",
    "UCBGreedy",
    "ucb_greedy_init",
    "ucb_greedy_select",
    "ucb_greedy_update",
]

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

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (module docstring)."""
        params = np.concatenate(([self.c], self.clock.delays.astype(np.float64)))
        return CompiledStep(ucb_greedy_init, ucb_greedy_select, ucb_greedy_update, params)


@kernel
def ucb_greedy_init(params: np.ndarray, k: int, rounds: int) -> tuple[Any, ...]:
    """Real pulls and reward sums per arm, the first round each arm is available in, and the
    delays capped at ``rounds + 1`` (the same availability in every round of the run)."""
    delays = np.empty(k, dtype=np.int64)
    for i in range(k):
        delays[i] = int(min(params[1 + i], rounds + 1.0))
    return np.zeros(k), np.zeros(k), np.zeros(k, dtype=np.int64), delays


@kernel
def ucb_greedy_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`UCBGreedy.select`: the available arm with the highest index (unpulled: +inf),
    ties to the lowest arm; arm 0 when none is available."""
    counts, sums, free_at = state[0], state[1], state[2]
    log_t = params[0] * math.log(t)
    best, arm = -np.inf, 0
    for i in range(counts.size):
        if free_at[i] > t:
            continue
        value = sums[i] / counts[i] + math.sqrt(log_t / counts[i]) if counts[i] > 0.0 else np.inf
        if value > best:
            best, arm = value, i
    return arm


@kernel
def ucb_greedy_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`UCBGreedy.update`: a real pull (the arm was available) counts and blocks it."""
    counts, sums, free_at, delays = state
    if free_at[arm] <= t:
        free_at[arm] = t + delays[arm]
        counts[arm] += 1.0
        sums[arm] += reward
