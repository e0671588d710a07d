"""Piecewise-stationary bandits: the arms' means jump at known rounds, whatever the learner does.

The standard setting of the change-point literature (Garivier & Moulines 2011; Liu, Lee &
Shroff 2018; Cao et al. 2019; Besson et al. 2022): segment s (rounds ``change_points[s] + 1 …
change_points[s + 1]``) has means ``means[s]``; rounds are numbered from 1 and the first change
point is 0, as SMPyBandits' ``PieceWiseStationaryMAB`` writes them (its ``changePoints`` are the
0-based rounds where a segment starts). Rewards are Bernoulli (default) or Gaussian with scale
σ; their noise is common random numbers of (replication, arm, pull), as for the stationary
bandits, so two policies that pull an arm for the m-th time see the same uniform.

The optimal policy plays the best arm of the current segment in every round (the restless
oracle ``best_arm_per_round``: rewards do not depend on past actions).
"""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.core.spaces import Discrete
from impactbandits.envs.validation import check_table
from impactbandits.errors import SpecError
from impactbandits.params import ROUNDS, Length, NoiseScale

#: A finite real number.
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]

__all__ = ["PiecewiseStationaryBandit"]


class PiecewiseStationaryBandit(Environment):
    """Piecewise-stationary bandit (module docstring): ``means[s][i]`` is arm i's mean in
    segment s, which starts after round ``change_points[s]`` (the first is 0); ``length`` rounds
    in all. ``noise``: ``"bernoulli"`` (means in [0, 1]) or ``"gaussian"`` (scale ``sigma``)."""

    default_oracle = "best_arm_per_round"

    def __init__(
        self,
        means: Annotated[
            list[Annotated[list[FiniteFloat], Field(min_length=1)]], Field(min_length=1)
        ],
        change_points: Annotated[list[Annotated[int, Field(ge=0), ROUNDS]], Field(min_length=1)],
        length: Length,
        noise: Literal["bernoulli", "gaussian"] = "bernoulli",
        sigma: NoiseScale = 1.0,
    ) -> None:
        table = np.asarray(means, dtype=float)
        if table.ndim != 2 or table.shape[1] == 0:
            raise SpecError("means", "one list of arm means per segment, all of the same length")
        check_table(table.shape[1], length, "means")
        if not np.all(np.isfinite(table)):
            raise SpecError("means", "must be finite numbers")
        if noise == "bernoulli" and (table.min() < 0 or table.max() > 1):
            raise SpecError("means", "Bernoulli means must lie in [0, 1]")
        points = [int(c) for c in change_points]
        if len(points) != table.shape[0]:
            raise SpecError("change_points", "one change point per segment (the first is 0)")
        if points[0] != 0 or any(b <= a for a, b in itertools.pairwise(points)):
            raise SpecError("change_points", "must start at 0 and increase strictly")
        if points[-1] >= length:
            raise SpecError("change_points", f"the last segment must start before round {length}")
        self.means, self.change_points = table, points
        self.length, self.noise, self.sigma = int(length), noise, float(sigma)
        segment = np.searchsorted(points, np.arange(self.length), side="right") - 1
        self._curves = table[segment].T.copy()  # (K, length): μ_i(t) at column t − 1
        self._space = Discrete(table.shape[1])

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        """Gaussian rewards with σ = 0: every reward is the arm's mean."""
        return self.noise == "gaussian" and self.sigma == 0

    @property
    def curves(self) -> np.ndarray:
        """``(K, length)``: ``curves[i, t − 1]`` = μ_i(t) (the restless oracle reads it)."""
        return self._curves

    def check_horizon(self, rounds: int) -> None:
        if self.length < rounds:
            raise SpecError("length", f"the bandit has {self.length} rounds; {rounds} are run")

    def reset(self, random: EnvironmentRandom) -> None:
        n = self._space.n
        self._noise = random.noise(n, "uniform" if self.noise == "bernoulli" else "normal")
        self._pulls = np.zeros((random.size, n), dtype=np.int64)
        self._flat_pulls = self._pulls.reshape(-1)
        self._offsets = np.arange(random.size) * n
        self._size = random.size
        self._round = 0

    def step(self, actions: np.ndarray) -> Outcome:
        if self._round >= self.length:
            raise SpecError("horizon", f"the bandit ends after round {self.length}")
        flat = self._offsets + actions
        index = self._flat_pulls.take(flat)
        draw = self._noise.at(actions, index)
        self._flat_pulls[flat] = index + 1
        mu = self._curves[:, self._round].take(actions)
        self._round += 1
        if self.noise == "bernoulli":
            return Outcome(Feedback((draw < mu).astype(float)), mu)
        return Outcome(Feedback(mu + self.sigma * draw), mu)

    def expected_rewards(self) -> np.ndarray:
        """``(R, K)``: the means of the coming round."""
        column = self._curves[:, min(self._round, self.length - 1)]
        return np.broadcast_to(column, (self._size, self._space.n)).copy()

    def pull_model(self, pulls: int) -> PullModel | None:
        """The compiled loops' view of :meth:`step`: means by round, noise by pull."""
        values = self._curves[None, :, :]
        if self.noise == "bernoulli":
            return PullModel(values, "bernoulli", 0.0, self._noise, by_round=True)
        return PullModel(values, "normal", self.sigma, self._noise, by_round=True)
