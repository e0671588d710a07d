"""Restless bandits from explicit curves: the expected reward of arm i in round t is μ_i(t),
whatever the learner did before (Metelli et al. 2022, §2, "restless" setting; Besbes et al.
2014).

Rested vs restless, for the same table of values:

* **rested** (:class:`~impactbandits.envs.rested.RestedBandit`): the m-th *pull* of arm i yields
  f_i(m): an arm only changes when it is played, so the learner's own actions shape the rewards
  it can get, and the optimal policy is an allocation of pulls (exact oracle
  ``optimal_allocation``);
* **restless** (this module): round t yields μ_i(t) for whichever arm is played: the arms evolve
  with time alone, and the optimal policy plays ``argmax_i μ_i(t)`` in every round (exact oracle
  ``best_arm_per_round``, :func:`~impactbandits.oracles.restless.best_arm_per_round`).

Noise models and their common random numbers are those of the rested environment (the noise of
the m-th pull of arm i in replication r is a fixed function of (r, i, m)); ``noise_draws`` is
always per pull.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from impactbandits.core.environment import EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.envs.rested import NoiseKind, RestedBandit
from impactbandits.errors import SpecError
from impactbandits.params import NoiseScale

__all__ = ["RestlessBandit"]


class RestlessBandit(RestedBandit):
    """Restless bandit from explicit curves: ``curves[i][t − 1]`` is μ_i(t), the expected reward
    of arm i in round t (numbered from 1), whether or not the arm was played before.

    Default oracle: ``best_arm_per_round`` (Σ_t max_i μ_i(t), the value of the optimal policy:
    rewards do not depend on past actions). Shares the rested environment's validation and noise
    models (it reuses its pull counters, which index the noise draws)."""

    default_oracle = "best_arm_per_round"

    def __init__(
        self,
        curves: Annotated[list[list[float]], Field(min_length=1)],
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
    ) -> None:
        rows = [np.asarray(c, dtype=float) for c in curves]
        if len({r.size for r in rows}) != 1:
            raise SpecError("curves", "every arm needs the same number of values (one per round)")
        self._setup(np.stack(rows), noise, sigma)

    def check_horizon(self, rounds: int) -> None:
        if self.length < rounds:
            raise SpecError(
                "curves",
                f"each arm needs at least {rounds} values (one per round of the largest "
                f"horizon); arm 0 has {self.length}",
            )

    def reset(self, random: EnvironmentRandom) -> None:
        super().reset(random)
        self._rows = np.arange(self.action_space.n) * self._stride

    def step(self, actions: np.ndarray) -> Outcome:
        if self._round >= self.length:
            raise SpecError("horizon", f"the curves end after round {self.length}")
        flat = self._offsets + actions
        index = self._flat_counts.take(flat)  # pull number of each arm: indexes the noise
        value = self._padded.take(self._rows.take(actions) + self._round)
        self._flat_counts[flat] = index + 1
        self._round += 1
        return Outcome(Feedback(self._observe(value, actions, index)), value)

    def expected_rewards(self) -> np.ndarray:
        """``(R, N)``: μ_i(t) of the coming round t for every arm (the same in every
        replication)."""
        row = self._padded.take(self._rows + self._round)
        return np.broadcast_to(row, self._counts.shape)

    def pull_model(self, pulls: int) -> PullModel | None:
        """What :meth:`step` computes, for the compiled loops: the expected reward by round
        (:attr:`~impactbandits.core.pull_model.PullModel.by_round`), its noise by pull, as the
        rested model draws it. Call after :meth:`reset`."""
        rested = super().pull_model(pulls)
        if rested is None:
            return None
        return PullModel(rested.values, rested.noise, rested.sigma, rested.table, by_round=True)
