"""Stochastic rising bandits (Metelli, Trovò, Pirola & Restelli 2022, "Stochastic Rising
Bandits", ICML): non-decreasing, concave expected rewards, rested or restless.

Instances, as in the authors' code (``albertometelli/stochastic-rising-bandits``,
``src/model.py`` and ``src/generate_random_bandits.py``; reproduced, not copied):

* ``"15-arms"`` — their bandit 0, the 15-arm instance of the paper's synthetic experiments
  (Section 7): exponential arms ``c (1 − e^{−a x / b})`` and polynomial arms
  ``c (1 − b / (x + b'^{1/ρ})^ρ)`` (b' = b except arm 5, whose published formula has b = 195,
  b' = 199). Arm 12 (c = 1.08) exceeds 1 after about 6,455 pulls, as in their instance: curves
  are allowed up to :data:`UPPER`;
* ``"2-arms"`` — their bandit 1, the 2-arm rested instance: ``0.4 (1 − 50000 / (100 x + 50000))``
  against the linear ramp ``min(x / 25000, 1)``;
* ``"random"`` — their random generator, seeded: 2–15 arms, each exponential (a ∈ {2..5},
  b ∈ {2..``scale``}, c ~ U(0, 1) clipped to [0.01, 0.99]) or polynomial (ρ ~ U(0, 1) clipped
  to [0.4, 1], b ∈ {2..``scale``}, c likewise) with probability ½, clamped to [0, 1]; drawn with
  ``numpy.random.default_rng(seed)`` in the authors' order (their script used Python's unseeded
  ``random``, so the draws, not the family, differ).

Their functions are evaluated at x = 0, 1, …: the m-th pull (rested) or round t (restless)
yields the value at x = m − 1 or t − 1. Their observation model is ``noise = "beta-mean"``
(Beta observations with mean μ and β = 2, see :mod:`impactbandits.envs.rested`), the default
here.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.feedback import Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.core.variants import Variant
from impactbandits.envs.rested import NoiseKind, RestedBandit
from impactbandits.envs.restless import RestlessBandit
from impactbandits.envs.validation import check_table
from impactbandits.errors import SpecError
from impactbandits.params import ROUNDS, Length, NoiseScale, OnlyWhen

__all__ = [
    "FIFTEEN_ARMS",
    "UPPER",
    "RestlessRisingBandit",
    "RisingBandit",
    "random_rising_arms",
    "rising_curves",
]

Instance = Literal["15-arms", "2-arms", "random"]
#: Largest curve value allowed (arm 12 of the 15-arm instance rises to 1.08).
UPPER = 1.08
#: Default scale of b in the random generator (the authors' T_HORIZON[0]).
RANDOM_SCALE = 50_000

#: The 15-arm instance (authors' bandit 0): ("exp", c, a, b) or ("poly", c, b, ρ, b').
FIFTEEN_ARMS: tuple[tuple[float | str, ...], ...] = (
    ("poly", 1.0, 177, 0.8, 177),
    ("poly", 0.91, 571, 0.9, 571),
    ("exp", 0.73, 3, 162),
    ("exp", 0.16, 3, 949),
    ("poly", 0.48, 144, 1.0, 144),
    ("poly", 0.43, 195, 0.9, 199),
    ("poly", 0.79, 695, 0.9, 695),
    ("exp", 0.62, 1, 271),
    ("exp", 0.23, 1, 849),
    ("exp", 0.39, 5, 457),
    ("poly", 0.37, 290, 1.0, 290),
    ("poly", 0.17, 223, 1.0, 223),
    ("poly", 1.08, 85, 0.8, 85),
    ("poly", 0.84, 219, 1.0, 219),
    ("poly", 0.26, 124, 0.9, 124),
)


def _arm_values(arm: tuple[float | str, ...], x: np.ndarray, clamp: bool) -> np.ndarray:
    if arm[0] == "exp":
        _, c, a, b = arm
        values = float(c) * (1.0 - np.exp(-float(a) * x / float(b)))
    else:
        _, c, b, rho, root = arm
        rho = float(rho)
        values = float(c) * (1.0 - float(b) / (x + float(root) ** (1.0 / rho)) ** rho)
    return np.clip(values, 0.0, 1.0) if clamp else values


def random_rising_arms(seed: int, scale: int = RANDOM_SCALE) -> list[tuple[float | str, ...]]:
    """The authors' random rising bandit (``generate_random_bandits.py``), drawn with
    ``default_rng(seed)``: arms as ``("exp", c, a, b)`` or ``("poly", c, b, ρ, b)``."""
    rng = np.random.default_rng(seed)
    arms: list[tuple[float | str, ...]] = []
    for _ in range(int(rng.integers(2, 16))):
        if rng.integers(0, 2):
            a = int(rng.integers(2, 6))
            b = int(rng.integers(2, scale + 1))
            c = min(max(float(rng.random()), 1e-2), 1 - 1e-2)
            arms.append(("exp", c, a, b))
        else:
            rho = min(max(float(rng.random()), 0.4), 1.0)
            b = int(rng.integers(2, scale + 1))
            c = min(max(float(rng.random()), 1e-2), 1 - 1e-2)
            arms.append(("poly", c, b, rho, b))
    return arms


#: The most arms of each instance (the random instance draws 2 to 15).
_ARMS = {"15-arms": 15, "2-arms": 2, "random": 15}


def rising_curves(
    instance: Instance, length: int, seed: int = 0, scale: int = RANDOM_SCALE
) -> np.ndarray:
    """``(K, length)``: the instance's functions at x = 0 … length − 1."""
    x = np.arange(length, dtype=float)
    if instance == "15-arms":
        return np.stack([_arm_values(arm, x, clamp=False) for arm in FIFTEEN_ARMS])
    if instance == "2-arms":
        slow = 0.4 * (1.0 - 50_000.0 / (100.0 * x + 50_000.0))
        ramp = np.where(x < 25_000, x / 25_000.0, 1.0)
        return np.stack([slow, ramp])
    if instance == "random":
        arms = random_rising_arms(seed, scale)
        return np.stack([_arm_values(arm, x, clamp=True) for arm in arms])
    raise SpecError("instance", f"must be 15-arms, 2-arms or random; got {instance!r}")


class RisingBandit(RestedBandit):
    """Rested rising bandit of Metelli et al. (2022): the m-th pull of arm i yields the
    instance's μ_i(m − 1) (see the module docstring for the instances), observed through
    ``noise`` (default their Beta observations, ``"beta-mean"``). Default oracle: the exact
    optimal allocation, which for non-decreasing rewards is the best single arm (Heidari et al.
    2016), their rested benchmark."""

    def __init__(
        self,
        instance: Instance = "15-arms",
        length: Length = 50_000,
        seed: Annotated[int, Field(ge=0), OnlyWhen("instance", "random")] = 0,
        scale: Annotated[int, Field(ge=2), ROUNDS, OnlyWhen("instance", "random")] = RANDOM_SCALE,
        noise: NoiseKind = "beta-mean",
        sigma: NoiseScale = 0.0,
    ) -> None:
        self.instance = instance
        check_table(_ARMS.get(instance, 15), length, "instance")
        self._setup(rising_curves(instance, length, seed, scale), noise, sigma, upper=UPPER)


class RestlessRisingBandit(RestlessBandit):
    """Restless rising bandit of Metelli et al. (2022): in round t every arm i is worth the
    instance's μ_i(t − 1), played or not (module docstring); default oracle the best arm per
    round, their restless benchmark.

    ``variant = "authors-code"``: what the authors' restless experiments simulate
    (``run_restless.sh`` on their ``model.py`` bandits): ``Bandit.load_lambdas`` builds every
    arm with ``restless=False``, so an arm advances with its own pulls (μ_i(m − 1) at its m-th
    pull, as in the rested bandit) while the regret is still measured against the restless
    benchmark Σ_t max_i μ_i(t − 1) (the fidelity ledger,
    https://impactbandits.readthedocs.io/en/latest/fidelity/)."""

    def __init__(
        self,
        instance: Instance = "15-arms",
        length: Length = 50_000,
        seed: Annotated[int, Field(ge=0), OnlyWhen("instance", "random")] = 0,
        scale: Annotated[int, Field(ge=2), ROUNDS, OnlyWhen("instance", "random")] = RANDOM_SCALE,
        noise: NoiseKind = "beta-mean",
        sigma: NoiseScale = 0.0,
        variant: Variant = "paper",
    ) -> None:
        self.instance, self.variant = instance, variant
        check_table(_ARMS.get(instance, 15), length, "instance")
        self._setup(rising_curves(instance, length, seed, scale), noise, sigma, upper=UPPER)

    def step(self, actions: np.ndarray) -> Outcome:
        if self.variant == "authors-code":
            return RestedBandit.step(self, actions)
        return super().step(actions)

    def expected_rewards(self) -> np.ndarray:
        if self.variant == "authors-code":
            return RestedBandit.expected_rewards(self)
        return super().expected_rewards()

    def pull_model(self, pulls: int) -> PullModel | None:
        if self.variant == "authors-code":
            return RestedBandit.pull_model(self, pulls)
        return super().pull_model(pulls)
