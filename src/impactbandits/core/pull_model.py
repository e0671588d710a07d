"""An environment's outcomes as a function of (replication, arm, pull): for compiled loops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from impactbandits.core.random import CommonNoise

__all__ = ["PullModel"]


@dataclass(frozen=True)
class PullModel:
    """The m-th pull of arm i in replication r has expected reward
    ``values[r or 0, i, m or 0]`` (shape ``(R or 1, K, M or 1)``; by round: :attr:`by_round`)
    and reward

    * ``"none"``: the expected reward;
    * ``"normal"``: expected + ``sigma`` · z, z the standard normal of ``noise`` at (r, i, m);
    * ``"beta"``: expected + ``sigma`` · (2·B⁻¹(u) − 1), B the Beta(2, 2) CDF, u the uniform
      of ``noise`` at (r, i, m) (bounded noise of the rested bandits);
    * ``"bernoulli"``: 1 if u < expected else 0;
    * ``"beta-mean"``: B⁻¹(u), B the CDF of Beta(β μ / (1 − μ), β), μ = expected clipped (the
      observation model of :func:`impactbandits.envs.rested.beta_mean_observation`);
    * ``"beta-concentration"``: B⁻¹(u), B the CDF of Beta(μκ, (1 − μ)κ), κ = ``sigma`` (the
      reward-opportunity bandit's Beta rewards).
    """

    values: np.ndarray
    noise: Literal["none", "normal", "beta", "bernoulli", "beta-mean", "beta-concentration"]
    sigma: float = 0.0
    table: CommonNoise | None = None
    by_round: bool = False
    """Whether the expected reward depends on the round instead of the pull: the m-th pull of
    arm i in round t then has expected reward ``values[r or 0, i, t − 1]`` (a restless arm:
    piecewise-stationary means), its noise still that of pull m."""
    reevaluation: CommonNoise | None = None
    """The table of fresh re-evaluations (a rested bandit with ``noise_draws =
    "per-evaluation"``; ``"normal"`` or ``"beta"`` noise, rewards as above): after the pull of
    round t, value j of arm i in ``Feedback.reevaluated`` is ``values[r or 0, i, n − 1]``, n =
    n_i (j < 3) or n_i − 1 (j = 3, 4) and n_i the arm's pulls so far, plus noise as ``noise``
    says from this table at (r, 5i + j, t); NaN if n = 0. ``None``: no re-evaluations."""
