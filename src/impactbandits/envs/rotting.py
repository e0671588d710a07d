"""Rotting bandits: rested arms whose reward never increases with their own pulls (Levine,
Crammer & Mannor 2017; Seznec et al. 2019, 2020).

Instances of Seznec et al. (2019, "Rotting bandits are no harder than stochastic ones",
AISTATS), as their experiment scripts build them (SMPyBandits ``Experiment/Seznec19a_Fig1`` and
``Fig2``; σ = 1 Gaussian noise):

* ``"ten-arms"`` (their Figure 2): 10 arms with μ_i ∈ {0} ∪ {0.001·√10^j, j = 0..8}; arm i is
  worth μ_i for its first ``breakpoint`` pulls (1,000) and −μ_i afterwards (abrupt decay);
* ``"two-arms"`` (their Figure 1): an arm worth ``mu`` for its first T/4 + 1 pulls (``breakpoint``,
  default 2,501 for T = 10⁴) and −``mu`` afterwards, against an arm worth 0;
* ``"custom"``: ``means`` μ_i with either decay.

``decay = "abrupt"`` is the papers' step; ``decay = "smooth"`` (ours, the same arms without the
step) decays as μ_i (2 (1 + (m − 1)/b)^{−ρ} − 1) with b = ``breakpoint``, ρ = ``rho``: from μ_i
at the first pull, through 0 at pull b + 1 (ρ = 1), towards −μ_i.

Rewards are the papers' own, in [−μ_max, μ_max] (up to ±10 on ten arms, with σ = 1 noise):
these curves are not confined to [0, 1] like the library's other rested instances, so policies
that assume rewards in [0, 1] (EXP3, the UCB bonuses' scale) meet them as the papers' baselines
did. The default oracle, the exact optimal allocation, is the papers' greedy oracle here (for
non-increasing rewards, pulling the best current arm is optimal; tested against brute force).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from impactbandits.envs.rested import NoiseKind, RestedBandit
from impactbandits.errors import SpecError
from impactbandits.params import NonNegativeFloat, PositiveFloat, PositiveInt

__all__ = ["TEN_ARMS", "RottingBandit", "rotting_curves"]

#: μ_i of Seznec et al.'s Figure 2.
TEN_ARMS = (0.0, *(0.001 * 10 ** (j / 2) for j in range(9)))
Decay = Literal["abrupt", "smooth"]


def rotting_curves(
    means: list[float] | tuple[float, ...],
    length: int,
    breakpoint: int,
    decay: Decay = "abrupt",
    rho: float = 1.0,
    offset: float = 0.0,
) -> np.ndarray:
    """``(K, length)``: arm i at pull m = 1 … length (module docstring), plus ``offset``."""
    mu = np.asarray(means, dtype=float)[:, None]
    before = np.arange(length, dtype=float)[None, :]  # m − 1, pulls before this one
    if decay == "abrupt":
        shape = np.where(before < breakpoint, 1.0, -1.0)
    else:
        shape = 2.0 * (1.0 + before / breakpoint) ** (-rho) - 1.0
    return offset + mu * shape


class RottingBandit(RestedBandit):
    """Rotting rested bandit (module docstring): ``instance`` ``"ten-arms"``, ``"two-arms"``
    (with ``mu``) or ``"custom"`` (with ``means``); ``decay`` abrupt or smooth after
    ``breakpoint`` pulls (default: 1,000, or T/4 + 1 for two arms); Gaussian noise σ = 1 by
    default (the papers'). ``scale`` multiplies the means and ``offset`` is added to every
    value: with ``scale = 1/20``, ``offset = ½`` and σ/20 the ten arms fit in [0, 1] and every
    shift- and scale-invariant policy sees the papers' problem, its regret divided by 20."""

    def __init__(
        self,
        instance: Literal["ten-arms", "two-arms", "custom"] = "ten-arms",
        mu: NonNegativeFloat = 0.1,
        means: list[NonNegativeFloat] | None = None,
        decay: Decay = "abrupt",
        breakpoint: PositiveInt | None = None,
        rho: PositiveFloat = 1.0,
        length: PositiveInt = 25_000,
        noise: NoiseKind = "gaussian",
        sigma: NonNegativeFloat = 1.0,
        scale: PositiveFloat = 1.0,
        offset: float = 0.0,
    ) -> None:
        if instance == "ten-arms":
            arms = list(TEN_ARMS)
            breakpoint = breakpoint or 1000
        elif instance == "two-arms":
            arms = [mu, 0.0]
            breakpoint = breakpoint or length // 4 + 1
        else:
            if not means:
                raise SpecError("means", "instance 'custom' needs the arms' means")
            arms = list(means)
            breakpoint = breakpoint or 1000
        curves = rotting_curves([scale * a for a in arms], length, breakpoint, decay, rho, offset)
        self.instance, self.decay, self.breakpoint = instance, decay, breakpoint
        bound = max(1.0, float(np.abs(curves).max()))
        self._setup(curves, noise, sigma, upper=bound, lower=-bound)
