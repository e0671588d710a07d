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

:class:`RottingBandit` (registered as ``rotting``) keeps the papers' own rewards, in
[−μ_max, μ_max] (up to ±10 on ten arms, with σ = 1 noise): these curves are not confined to
[0, 1] like the library's other rested instances, so policies that assume rewards in [0, 1]
(EXP3, the UCB bonuses' scale) meet them as the papers' baselines did. Two families in [0, 1]
(import paths ``impactbandits.envs.rotting:AbruptRottingBandit`` and ``…:SmoothRottingBandit``):

* :class:`AbruptRottingBandit` — the same instances mapped affinely into [0, 1],
  v ↦ ½ + v / (2 μ_max), σ ↦ σ / (2 μ_max): FEWA and RAW-UCB told the mapped σ, and SWA with
  the same window, make the same choices as on the papers' problem, and every regret is the
  papers' divided by ``span`` = 2 μ_max (tested);
* :class:`SmoothRottingBandit` — smooth decay from ``start_i`` towards ``floor_i``, polynomial
  (m^{−θ_i}, the form of Levine et al.'s parametric rotting models) or exponential, drawn from a
  seeded generator unless given explicitly.

The default oracle, the exact optimal allocation, is the papers' greedy oracle here (for
non-increasing rewards, pulling the best current arm is optimal; tested against brute force).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.envs.rested import NoiseKind, RestedBandit
from impactbandits.envs.validation import check_table
from impactbandits.errors import SpecError
from impactbandits.params import (
    ARMS,
    ROUNDS,
    Length,
    NoiseScale,
    NonNegativeFloat,
    OnlyWhen,
    PositiveFloat,
    Probability,
    RequiredWhen,
)

__all__ = [
    "TEN_ARMS",
    "AbruptRottingBandit",
    "RottingBandit",
    "SmoothRottingBandit",
    "rotting_curves",
    "smooth_rotting_arms",
]

#: μ_i of Seznec et al.'s Figure 2.
TEN_ARMS = (0.0, *(0.001 * 10 ** (j / 2) for j in range(9)))
Decay = Literal["abrupt", "smooth"]
Instance = Literal["ten-arms", "two-arms", "custom"]
Shape = Literal["polynomial", "exponential"]
#: Ranges of :func:`smooth_rotting_arms`' draws (ours): starting value, floor as a fraction of
#: the start, and rate θ per shape (polynomial m^{−θ}; exponential e^{−θ (m − 1)}, log-uniform).
SMOOTH_START = (0.5, 1.0)
SMOOTH_FLOOR_FRACTION = (0.0, 0.8)
SMOOTH_RATE = {"polynomial": (0.1, 0.5), "exponential": (1e-4, 1e-2)}


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


def _paper_arms(
    instance: str, mu: float, means: list[float] | None, breakpoint: int | None, length: int
) -> tuple[list[float], int]:
    """The instance's means μ_i and breakpoint (module docstring)."""
    if instance == "ten-arms":
        return list(TEN_ARMS), breakpoint or 1000
    if instance == "two-arms":
        return [mu, 0.0], breakpoint or length // 4 + 1
    if not means:
        raise SpecError("means", "instance 'custom' needs the arms' means")
    return list(means), breakpoint or 1000


class RottingBandit(RestedBandit):
    """Rotting rested bandit (module docstring): ``instance`` ``"ten-arms"``, ``"two-arms"``
    (with ``mu``) or ``"custom"`` (with ``means``); ``decay`` abrupt or smooth after
    ``breakpoint`` pulls (default: 1,000, or T/4 + 1 for two arms); Gaussian noise σ = 1 by
    default (the papers'). ``scale`` multiplies the means and ``offset`` is added to every
    value: with ``scale = 1/20``, ``offset = ½`` and σ/20 the ten arms fit in [0, 1] and every
    shift- and scale-invariant policy sees the papers' problem, its regret divided by 20
    (:class:`AbruptRottingBandit` does this for any instance)."""

    def __init__(
        self,
        instance: Instance = "ten-arms",
        mu: Annotated[NonNegativeFloat, OnlyWhen("instance", "two-arms")] = 0.1,
        means: Annotated[
            list[NonNegativeFloat] | None,
            RequiredWhen("instance", "custom"),
            OnlyWhen("instance", "custom"),
        ] = None,
        decay: Decay = "abrupt",
        breakpoint: Annotated[int | None, Field(gt=0), ROUNDS] = None,
        rho: PositiveFloat = 1.0,
        length: Length = 25_000,
        noise: NoiseKind = "gaussian",
        sigma: NoiseScale = 1.0,
        scale: PositiveFloat = 1.0,
        offset: float = 0.0,
    ) -> None:
        arms, breakpoint = _paper_arms(instance, mu, means, breakpoint, length)
        check_table(len(arms), length, "means" if instance == "custom" else "instance")
        curves = rotting_curves([scale * a for a in arms], length, breakpoint, decay, rho, offset)
        self.instance, self.decay, self.breakpoint = instance, decay, breakpoint
        bound = max(1.0, float(np.abs(curves).max()))
        self._setup(curves, noise, sigma, upper=bound, lower=-bound)


class AbruptRottingBandit(RestedBandit):
    """Seznec et al.'s (2019) abrupt instances (``instance``, ``mu``, ``means``,
    ``breakpoint`` as in :class:`RottingBandit`) mapped into [0, 1]: the papers' value v of a
    pull becomes ½ + v / (2 μ_max), μ_max the largest μ_i, and ``sigma`` — given in the
    papers' units, σ = 1 by default — becomes σ / (2 μ_max) (the environment's ``sigma``).
    Regret is the papers' divided by :attr:`span` = 2 μ_max (20 on ten arms): told the mapped
    σ, FEWA and RAW-UCB play as on the papers' problem; SWA does with the same window (its σ
    only sets the window h, so keep the papers' σ = 1 there)."""

    def __init__(
        self,
        instance: Instance = "ten-arms",
        mu: Annotated[NonNegativeFloat, OnlyWhen("instance", "two-arms")] = 0.1,
        means: Annotated[
            list[NonNegativeFloat] | None,
            RequiredWhen("instance", "custom"),
            OnlyWhen("instance", "custom"),
        ] = None,
        breakpoint: Annotated[int | None, Field(gt=0), ROUNDS] = None,
        length: Length = 25_000,
        noise: NoiseKind = "gaussian",
        sigma: NoiseScale = 1.0,
    ) -> None:
        arms, breakpoint = _paper_arms(instance, mu, means, breakpoint, length)
        check_table(len(arms), length, "means" if instance == "custom" else "instance")
        top = max(arms)
        if top <= 0:
            raise SpecError("means" if instance == "custom" else "mu", "needs a mean above 0")
        #: 2 μ_max: the papers' rewards (and regrets) are this times ours.
        self.span = 2.0 * top
        self.instance, self.breakpoint = instance, breakpoint
        #: σ in the papers' units (``sigma`` is the mapped σ / span).
        self.paper_sigma = float(sigma)
        curves = rotting_curves([a / self.span for a in arms], length, breakpoint, offset=0.5)
        self._setup(np.clip(curves, 0.0, 1.0), noise, sigma / self.span)


def smooth_rotting_arms(
    shape: str, n_arms: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, floor, rate)`` of ``n_arms`` arms drawn with ``numpy.random.default_rng(seed)``
    in this order: start_i ~ U :data:`SMOOTH_START`, floor_i = start_i·U
    :data:`SMOOTH_FLOOR_FRACTION`, rate θ_i ~ U :data:`SMOOTH_RATE` (polynomial) or
    log-uniform on it (exponential)."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(*SMOOTH_START, n_arms)
    floor = start * rng.uniform(*SMOOTH_FLOOR_FRACTION, n_arms)
    low, high = SMOOTH_RATE[shape]
    if shape == "polynomial":
        rate = rng.uniform(low, high, n_arms)
    else:
        rate = np.exp(rng.uniform(np.log(low), np.log(high), n_arms))
    return start, floor, rate


class SmoothRottingBandit(RestedBandit):
    """Smoothly rotting arms in [0, 1]: the m-th pull of arm i is worth
    ``floor_i + (start_i − floor_i)·g_i(m)`` with g_i(m) = m^{−θ_i} (``shape =
    "polynomial"``, the form of Levine et al.'s (2017) parametric rotting models, a constant
    plus n^{−θ}) or e^{−θ_i (m − 1)} (``"exponential"``), θ_i = ``rate[i]``; non-increasing,
    from start_i at the first pull towards floor_i. ``start``, ``floor`` and ``rate`` given
    together, or all drawn for ``n_arms`` arms from ``seed``
    (:func:`smooth_rotting_arms`; the ranges are ours). Gaussian noise, σ = 0.1 by default."""

    def __init__(
        self,
        shape: Shape = "polynomial",
        n_arms: Annotated[int, Field(ge=2), ARMS] = 10,
        seed: Annotated[int, Field(ge=0)] = 0,
        start: list[Probability] | None = None,
        floor: list[Probability] | None = None,
        rate: list[PositiveFloat] | None = None,
        length: Length = 25_000,
        noise: NoiseKind = "gaussian",
        sigma: NoiseScale = 0.1,
    ) -> None:
        check_table(n_arms if start is None else len(start), length, "n_arms")
        given = [x is not None for x in (start, floor, rate)]
        if any(given) and not all(given):
            raise SpecError("start", "give start, floor and rate together (or none: drawn)")
        if start is None or floor is None or rate is None:
            first, last, theta = smooth_rotting_arms(shape, n_arms, seed)
        else:
            if not len(start) == len(floor) == len(rate):
                raise SpecError("start", "start, floor and rate need one value per arm")
            if any(f > s for s, f in zip(start, floor, strict=True)):
                raise SpecError("floor", "each arm needs floor <= start (rotting)")
            first, last, theta = (np.asarray(x, dtype=float) for x in (start, floor, rate))
        self.shape = shape
        self.start, self.floor, self.rate = first, last, theta
        pulls = np.arange(1, length + 1, dtype=float)[None, :]
        if shape == "polynomial":
            decay = pulls ** (-theta[:, None])
        else:
            decay = np.exp(-theta[:, None] * (pulls - 1.0))
        curves = last[:, None] + (first - last)[:, None] * decay
        self._setup(np.clip(curves, 0.0, 1.0), noise, sigma)
