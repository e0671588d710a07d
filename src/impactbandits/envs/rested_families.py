"""The named families of rested bandits: curves from papers and data sets on
:class:`~impactbandits.envs.rested.RestedBandit`.

* :class:`SinglePeakedBandit` — Lindner et al.'s single-peaked instances;
* :class:`IncreasingBandit` — Heidari et al.'s (2016) increasing families;
* :class:`ConstantBandit` and :class:`DecreasingBandit` — constant and rotting curves;
* :class:`FicoBandit` and :class:`RecommenderBandit` — Lindner et al.'s data bandits (FICO credit
  lending, a synthetic recommender system);
* :class:`ImprovingBandit` — IMAB instances (Patil et al. 2023).

Each only builds its reward curves; :class:`~impactbandits.envs.rested.RestedBandit` validates
them and supplies the noise models (``noise``, ``sigma``, ``noise_draws``), the pull counts and
the compiled loops' pull model.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.envs import improving
from impactbandits.envs.curves import (
    constant_curves,
    decreasing_curves,
    increasing_curves,
    increasing_limits,
    single_peaked_curves,
)
from impactbandits.envs.rested import NoiseDraws, NoiseKind, RestedBandit
from impactbandits.envs.validation import check_table
from impactbandits.errors import SpecError
from impactbandits.params import (
    ROUNDS,
    Arms,
    Length,
    NoiseScale,
    NonNegativeFloat,
    OnlyWhen,
    PositiveFloat,
    Probability,
    RequiredWhen,
    Rounds,
)

__all__ = [
    "ConstantBandit",
    "DecreasingBandit",
    "FicoBandit",
    "ImprovingBandit",
    "IncreasingBandit",
    "RecommenderBandit",
    "SinglePeakedBandit",
]

#: One row ``(k1, k2, c1, c2, l, a)`` of :class:`SinglePeakedBandit`'s ``params``: rates
#: k1 > 0 and k2 ≥ 0, reward levels c1, c2 in [0, 1], any shift l and amplitude a.
SinglePeakedRow = tuple[PositiveFloat, NonNegativeFloat, Probability, Probability, float, float]


class SinglePeakedBandit(RestedBandit):
    """Lindner et al.'s single-peaked instances (Figs 1, 8–10; the fidelity ledger,
    https://impactbandits.readthedocs.io/en/latest/fidelity/): ``instance`` 1, 2 or 3 (3 is
    Figure 1), or explicit ``params`` rows ``(k1, k2, c1, c2, l, a)`` of
    f(t) = a·exp(−k1(t−l)) + (c2−c1)/(exp(−(k1+k2)(t−l)) + 1) + c1: rates k1 > 0 and k2 ≥ 0,
    reward levels c1, c2 in [0, 1], any shift l and amplitude a (a < 0 in every instance)."""

    def __init__(
        self,
        instance: Literal[1, 2, 3] | None = 3,
        params: list[SinglePeakedRow] | None = None,
        length: Length = 20_000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        if params is not None:
            instance = None
            check_table(len(params), length, "params")
        self._setup(single_peaked_curves(instance, params, length), noise, sigma, noise_draws)


class IncreasingBandit(RestedBandit):
    """Heidari et al. (2016) increasing families inc_1–inc_3 with exponent ``alpha``
    (Lindner et al. Figs 4–7): see :func:`~impactbandits.envs.curves.increasing_curves`."""

    def __init__(
        self,
        family: Literal["inc_1", "inc_2", "inc_3"] = "inc_1",
        alpha: PositiveFloat = 0.1,
        length: Length = 10_000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        self._setup(increasing_curves(family, alpha, length), noise, sigma, noise_draws)
        #: true potentials a_i = lim f_i(t) (closed form; Patil et al. 2023 §2)
        self.asymptotes = increasing_limits(family, alpha)


class ConstantBandit(RestedBandit):
    """Constant rested curves f_i(m) = μ_i: a stationary bandit seen as a rested one."""

    def __init__(
        self,
        means: Annotated[list[Probability], Field(min_length=1)],
        length: Length = 100_000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        check_table(len(means), length, "means")
        self._setup(constant_curves(means, length), noise, sigma, noise_draws)


class DecreasingBandit(RestedBandit):
    """Rotting arms ``f_i(m) = end_i + (start_i − end_i)·exp(−rate_i (m − 1))``."""

    def __init__(
        self,
        start: Annotated[list[Probability], Field(min_length=1)],
        end: list[Probability],
        rate: list[PositiveFloat],
        length: Length = 100_000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        check_table(len(start), length, "start")
        for name, values in (("end", end), ("rate", rate)):
            if len(values) != len(start):
                raise SpecError(name, f"needs one value per arm, as start ({len(start)})")
        if any(e > s for s, e in zip(start, end, strict=True)):
            raise SpecError("end", "each arm needs end <= start (decreasing)")
        self._setup(decreasing_curves(start, end, rate, length), noise, sigma, noise_draws)


class FicoBandit(RestedBandit):
    """FICO credit lending (Lindner et al. 2021, §5 and Appendix D.4; Liu et al. 2018): four arms
    (Asian, Black, Hispanic, White); pull m lends to the group's m-th best of ``n_applicants``
    sampled applicants (instance seed ``seed``). ``curve`` is ``"score_change"`` (single-peaked,
    Figs 3a, 12) or ``"bank_utility"`` (nearly decreasing, Fig. 13). See
    :mod:`impactbandits.envs.fico` for the data pipeline."""

    def __init__(
        self,
        curve: Literal["score_change", "bank_utility"] = "score_change",
        seed: Annotated[int, Field(ge=0)] = 0,
        n_applicants: Length = 1000,
        length: Length = 2000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        from impactbandits.envs.fico import FICO_GROUPS, fico_curves

        check_table(len(FICO_GROUPS), n_applicants, "groups", "n_applicants")
        check_table(len(FICO_GROUPS), length, "groups")

        curves, self.groups = fico_curves(curve, length, seed=seed, n_applicants=n_applicants)
        self._setup(curves, noise, sigma, noise_draws)


class RecommenderBandit(RestedBandit):
    """Synthetic recommender system (Lindner et al. 2021, §5, Figs 3b, 14–16): novelty makes
    items engaging at first; engagement then decays towards the item's inherent value.

    ``instance`` A, B or C of ``instance_set`` ``"paper"`` (default: the paper's instances, the
    authors' seeds 1, 2, 3 drawn with ``np.random.RandomState`` as in their code) or
    ``"selected"`` (our earlier instances, seeds 2, 4, 5 of ``default_rng``, picked by criteria
    that encode the paper's story); or an explicit ``seed`` with ``sampler`` ``"legacy"``
    (default, the authors' recipe) or ``"generator"``. See :mod:`impactbandits.envs.recommender`.
    Curves are built for max(length, 3000) pulls and cut to ``length``, so shorter lengths are
    prefixes of the paper's T = 3000 curves."""

    def __init__(
        self,
        instance: Literal["A", "B", "C"] | None = "A",
        seed: Annotated[int, Field(ge=0, lt=2**32)] | None = None,
        n_arms: Arms = 4,
        length: Length = 3000,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
        instance_set: Literal["paper", "selected"] = "paper",
        sampler: Literal["legacy", "generator"] = "legacy",
    ) -> None:
        from impactbandits.envs.recommender import (
            RECOMMENDER_INSTANCE_SETS,
            RECOMMENDER_TMAX,
            recommender_curves,
        )

        if seed is None:
            if instance is None:
                raise SpecError("instance", "give an instance (A, B, C) or a seed")
            if instance_set not in RECOMMENDER_INSTANCE_SETS:
                raise SpecError("instance_set", f"must be paper or selected; got {instance_set!r}")
            sampler, seeds = RECOMMENDER_INSTANCE_SETS[instance_set]  # type: ignore[assignment]
            if instance not in seeds:
                raise SpecError("instance", f"must be A, B or C; got {instance!r}")
            seed = seeds[instance]
        elif instance_set != "paper":
            raise SpecError("instance_set", "applies to named instances; with a seed use sampler")
        check_table(n_arms, max(length, RECOMMENDER_TMAX), "n_arms")
        built = recommender_curves(n_arms, max(length, RECOMMENDER_TMAX), seed, sampler)
        self._setup(built[:, :length], noise, sigma, noise_draws)


class ImprovingBandit(RestedBandit):
    """An IMAB instance (Patil et al. 2023), validated: bounded, nondecreasing, diminishing
    returns (error names the arm and the first violating index).

    ``family``: ``"random"`` (k arms from :func:`~impactbandits.envs.improving.random_imab_curves`
    with ``seed``; ``random_family`` ``"uniform"`` or ``"late-bloomer"``), ``"lower-bound"``
    (I_m with ``k``, ``m`` (0-based) and ``horizon``), ``"linear-vs-flat"`` (``k``, ``ramp``),
    ``"saturating"`` (``asymptotes``, ``saturation``), or ``"curves"`` (explicit ``curves``).
    ``asymptotes`` after construction: the true potentials a_i = lim f_i(n)
    (:func:`~impactbandits.envs.improving.imab_potentials`).
    """

    def __init__(
        self,
        family: Literal[
            "random", "lower-bound", "linear-vs-flat", "saturating", "curves"
        ] = "random",
        k: Annotated[Arms, OnlyWhen("family", "random", "lower-bound", "linear-vs-flat")] = 5,
        length: Annotated[
            Length, OnlyWhen("family", "random", "lower-bound", "linear-vs-flat", "saturating")
        ] = 10_000,
        seed: Annotated[int, Field(ge=0), OnlyWhen("family", "random")] = 0,
        random_family: Annotated[
            Literal["uniform", "late-bloomer"], OnlyWhen("family", "random")
        ] = "uniform",
        m: Annotated[int, Field(ge=0), OnlyWhen("family", "lower-bound")] = 0,
        horizon: Annotated[
            int | None, Field(gt=0), ROUNDS, OnlyWhen("family", "lower-bound")
        ] = None,
        ramp: Annotated[
            int | None, Field(gt=0), ROUNDS, OnlyWhen("family", "linear-vs-flat")
        ] = None,
        asymptotes: Annotated[
            list[Probability] | None,
            RequiredWhen("family", "saturating"),
            OnlyWhen("family", "saturating"),
        ] = None,
        saturation: Annotated[
            list[Rounds] | None,
            RequiredWhen("family", "saturating"),
            OnlyWhen("family", "saturating"),
        ] = None,
        curves: Annotated[
            list[list[Probability]] | None,
            RequiredWhen("family", "curves"),
            OnlyWhen("family", "curves"),
        ] = None,
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
    ) -> None:
        if family in ("random", "lower-bound", "linear-vs-flat"):
            check_table(k, length, "k")
        elif family == "saturating":
            check_table(len(asymptotes or ()), length, "asymptotes")
        if family == "random":
            built = improving.random_imab_curves(k, length, seed, random_family)
        elif family == "lower-bound":
            if m >= k:
                raise SpecError("m", f"must be below k = {k} (arms are numbered from 0)")
            built = improving.lower_bound_instance(k, m, horizon or length, length)
        elif family == "linear-vs-flat":
            built = improving.linear_vs_flat(k, ramp or length, length)
        elif family == "saturating":
            if not asymptotes or not saturation or len(asymptotes) != len(saturation):
                raise SpecError("asymptotes", "give one asymptote and one saturation per arm")
            built = improving.saturating_curves(asymptotes, saturation, length)
        else:
            if not curves:
                raise SpecError("curves", "family 'curves' needs explicit curves")
            built = np.asarray(curves, dtype=float)
        self._setup(improving.validate_imab(built), noise, sigma, noise_draws)
        self.asymptotes = improving.imab_potentials(
            family, built, k=k, seed=seed, random_family=random_family, m=m, asymptotes=asymptotes
        )
