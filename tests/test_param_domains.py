"""Every numeric parameter of every registered component has a domain, and a spec giving a value
outside it is refused with a one-line :class:`SpecError` that names the parameter.

:data:`DOMAINS` is written by hand from the papers (their texts),
the components' docstrings or the plain meaning of the number — not from the signatures — so
these tests fail when a constraint is missing or wrong;
:func:`test_every_numeric_parameter_has_a_domain` fails on a new numeric parameter without one.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest
from annotated_types import Ge, Gt, Le, Lt

from impactbandits import registry
from impactbandits.errors import SpecError
from impactbandits.experiments.spec import component_spec

NAN, INF = float("nan"), float("inf")
#: In a domain's context: leave this parameter out (one of :data:`REQUIRED`'s that the
#: context's family does not use, which would be refused).
OMIT: Any = object()
#: What finite-real ("unbounded") parameters refuse: NaN and infinity (TOML can write both).
NOT_FINITE = (NAN, INF, -INF)

FIELD = {"environment": "environments[0]", "policy": "policies[0]"}


@dataclass(frozen=True)
class Domain:
    """``text``: the domain and where it comes from; ``valid``: a value inside it; ``bad``:
    values outside it; ``context``: other parameters the check needs (e.g. the family that uses
    the parameter); ``unbounded``: any finite real is allowed (the reason is in ``text``)."""

    text: str
    valid: Any
    bad: tuple[Any, ...]
    context: dict[str, Any] = field(default_factory=dict)
    unbounded: bool = False


def D(text: str, valid: Any, *bad: Any, **context: Any) -> Domain:
    return Domain(text, valid, bad, context)


def U(text: str, valid: Any, *bad: Any, **context: Any) -> Domain:
    """An unbounded real (any finite value): ``bad`` are the non-finite values."""
    return Domain(text, valid, bad, context, unbounded=True)


# Shared domains (by meaning or by the paper named).
SIGMA = "noise σ >= 0 (meaning: a standard deviation / noise scale)"
LENGTH = "int >= 1 (meaning: number of tabulated pulls)"
SEED = "int >= 0 (meaning: seed of numpy.random.default_rng, non-negative)"
RESOLUTION = "int >= 1 (Tang et al. §4: 1/ε of the ε-grid, a positive integer)"
XI = "ξ > 0 (Garivier & Moulines 2011 §3: exploration constant; theory wants ξ > 1/2)"
B = "B > 0 (Garivier & Moulines 2011 §3: rewards in [0, B])"
WIDTH_SCALE = "> 0 (docstring: multiplies the confidence width; 1 = the paper's constants)"
DELTA = "δ in (0, 1) (Cella & Cesa-Bianchi 2020, Algorithms 1 and 2: confidence δ ∈ (0, 1))"
CREDIT = (
    "any finite real: the authors' f_i(0), their unclipped formula at t = 0 (lindner.py); "
    "rewards of registered environments are not confined to [0, 1] (rotting, gaussian)"
)
METELLI = {
    "epsilon": D(
        "ε in (0, 1/2] (Metelli et al. 2022, docstring: two windows of εN samples)",
        0.25,
        0.0,
        -0.1,
        0.6,
    ),
    "alpha": D("α > 0 (Metelli et al. 2022: δ_t = t^-α must fall below 1)", 4.0, 0.0, -1.0),
    "sigma": D("σ > 0 (Metelli et al. 2022: sub-Gaussian proxy of the width)", 0.1, 0.0, -0.1),
}
RECOVERING_POLICY = {
    "lookahead": D("int >= 1 (Pike-Burke & Grünewälder 2019: the d of dRGP-UCB/TS)", 2, 0, -1),
    "lengthscale": D("ℓ > 0 (SE kernel; None: the environment's)", 2.0, 0.0, -1.0),
    "kernel_variance": D("v > 0 (SE kernel; None: the environment's)", 2.0, 0.0, -1.0),
    "noise": D("σ > 0 (GP noise; None: the environment's σ)", 0.1, 0.0, -0.1),
}
ROTTING_POLICY = {
    "alpha": D("α > 0 (Seznec et al. 2019/2020: δ_t = t^-α)", 0.06, 0.0, -1.0),
    "sigma": D("σ > 0 (Seznec et al.: sub-Gaussian noise level of the widths)", 1.0, 0.0, -1.0),
    "grid": D("m >= 1 (docstring: windows ⌈m^j⌉; 1 = every window)", 1.0, 0.5, 0.0, -1.0),
}


def _common(*names: str) -> dict[str, Domain]:
    table = {
        "sigma": D(SIGMA, 0.05, -0.1, -1.0),
        "length": D(LENGTH, 50, 0, -1),
        "xi": D(XI, 0.6, 0.0, -0.6),
        "b": D(B, 2.0, 0.0, -1.0),
        "resolution": D(RESOLUTION, 10, 0, -2),
        "width_scale": D(WIDTH_SCALE, 0.5, 0.0, -1.0),
    }
    return {name: table[name] for name in names}


def _entries(role: str, name: str, table: dict[str, Domain]) -> dict[tuple[str, str, str], Domain]:
    return {(role, name, param): domain for param, domain in table.items()}


DOMAINS: dict[tuple[str, str, str], Domain] = {
    **_entries(
        "environment",
        "rebounding",
        {
            "base": U(
                "finite reals, one per arm (Leqi et al. 2021: base reward b_k)",
                [1.0, 0.8],
                [float("inf"), 0.8],
            ),
            "retention": D(
                "each in [0, 1) (Leqi et al. 2021: satiation retention γ_k)",
                [0.5, 0.7],
                [1.0, 0.5],
                [-0.1, 0.5],
            ),
            "influence": D(
                "each >= 0 (Leqi et al. 2021: exposure influence λ_k)", [0.4, 0.2], [-0.1, 0.2]
            ),
            "sigma_z": D(SIGMA, 0.1, -0.1),
            "sigma": D(SIGMA, 0.1, -0.1),
            "lookahead": D("int >= 1 (w of the w-lookahead benchmark; 1 = greedy)", 2, 0, -1),
        },
    ),
    **_entries(
        "policy",
        "rebounding-lookahead",
        {"lookahead": D("int >= 1 (Leqi et al. 2021: w; 1 = greedy)", 2, 0, -1)},
    ),
    **_entries(
        "policy",
        "eep",
        {
            "explore": D(
                "int >= 3 (consecutive pulls per arm for the least squares; our choice)", 4, 2, 0
            ),
            "lookahead": D("int >= 1 (Leqi et al. 2021: w)", 2, 0, -1),
        },
    ),
    **_entries(
        "environment",
        "recovering",
        {
            "values": U(
                "finite reals, one row of z_max + 1 >= 2 per arm (Pike-Burke & Grünewälder "
                "2019: f_i(z), z = 0..z_max)",
                [[0.1, 0.5], [0.2, 0.3]],
                [[float("inf"), 0.5]],
                [[0.1, 0.2], [0.3]],
                [[0.1]],
                [],
                n_arms=None,
                z_max=None,
            ),
            "n_arms": D("int >= 1 (meaning: number of arms)", 3, 0, -1),
            "z_max": D("int >= 1 (authors' code: maxwait = 30, z in 0..z_max)", 5, 0, -1),
            "sigma": D(SIGMA, 0.1, -0.1),
            "initial_z": D("int in 0..z_max (authors' code: zinit = 0)", 2, -1, 5),
            "lengthscale": D("ℓ > 0 (SE kernel lengthscale; authors: 0.5, 2, 5)", 2.0, 0.0, -1.0),
            "kernel_variance": D("v > 0 (SE kernel variance; authors: 1)", 2.0, 0.0, -1.0),
            "instance_seed": D(
                "int in [0, 2^32) (NumPy's legacy RandomState; authors: 5389)", 3, -1, 2**32
            ),
            "lookahead": D(
                "int >= 1, K^d <= 10^6 (d of the d-step lookahead benchmark)", 2, 0, -1, 30
            ),
        },
    ),
    **_entries("policy", "rgp-ucb", RECOVERING_POLICY),
    **_entries("policy", "rgp-ts", RECOVERING_POLICY),
    **_entries(
        "environment",
        "blocking",
        {
            "means": D(
                "each in [0, 1] (Basu et al. 2019: Bernoulli rewards in the replication)",
                [0.9, 0.5],
                [1.5, 0.5],
                [-0.5, 0.5],
                [],
            ),
            "delays": D(
                "ints >= 1, one per arm (Basu et al. 2019: D_i = 1 is no blocking)",
                [1, 3],
                [0, 2],
                [1.5, 2],
                [1, 2, 3],
            ),
            "n_arms": D("int >= 1 (meaning: number of arms)", 2, 0, -1, means=None),
            "gap_range": D(
                "[low, high], 0 <= low <= high, (n_arms - 1)·high <= 1 (replication: "
                "U[K/2000, K/400])",
                [0.01, 0.05],
                [0.05, 0.01],
                [-0.01, 0.05],
                [0.01],
                [0.5, 1.5],
                means=None,
                n_arms=2,
            ),
            "delay_range": D(
                "[low, high] ints with 1 <= low <= high (replication: [1, 10], [11, 20])",
                [1, 10],
                [0, 3],
                [4, 2],
                [1],
                delays=None,
            ),
            "instance_seed": D(SEED, 3, -1),
            "sigma": D(SIGMA, 0.05, -0.1, -1.0, distribution="gaussian"),
        },
    ),
    **_entries(
        "policy",
        "ucb-greedy",
        {
            "c": D("c > 0 (Basu et al. 2019 UCB Greedy; replication: 8)", 2.0, 0.0, -1.0),
        },
    ),
    # ---------------------------------------------------------------- environments
    **_entries(
        "environment",
        "bernoulli",
        {
            "means": D(
                "each in [0, 1], at least one arm (meaning: Bernoulli means are probabilities)",
                [0.0, 0.5, 1.0],
                [1.5, 0.5],
                [-0.1, 0.5],
                [],
            ),
        },
    ),
    **_entries(
        "environment",
        "gaussian",
        {
            "means": U(
                "any finite reals, at least one arm (meaning: Gaussian locations are unbounded)",
                [-1.0, 2.5],
                [NAN, 0.5],
                [0.5, INF],
                [],
            ),
            "n_arms": D("int >= 1 (meaning: number of arms)", 5, 0, -1, 2.5, means=None),
            **_common("sigma"),
        },
    ),
    **_entries(
        "environment",
        "rested",
        {
            "curves": D(
                "values in [0, 1], same length per arm (Lindner et al. §2; REPRODUCTION §1: "
                "reward functions map t >= 1 to [0, 1])",
                [[0.1, 0.5, 0.9], [0.3, 0.3, 0.3]],
                [[0.1, 1.5, 0.9], [0.3, 0.3, 0.3]],
                [[-0.2, 0.5, 0.9], [0.3, 0.3, 0.3]],
                [[0.1, 0.5, 0.9], [0.3]],
                [],
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "single-peaked",
        {
            "instance": D("1, 2 or 3 (Lindner et al. Figs 1, 8-10; REPRODUCTION §1)", 1, 0, 4),
            "params": D(
                "rows (k1 > 0, k2 >= 0, c1 in [0, 1], c2 in [0, 1], l, a) of "
                "f(t) = a·exp(−k1(t−l)) + (c2−c1)/(exp(−(k1+k2)(t−l)) + 1) + c1 "
                "(REPRODUCTION §1; meaning: decay rates positive, reward levels in [0, 1])",
                [[0.01, 0.001, 1.0, 0.5, 600.0, -0.0015], [0.009, 0.0009, 0.8, 0.6, -5.0, 0.2]],
                [[0.0, 0.001, 1.0, 0.5, 600.0, -0.0015]],
                [[-0.01, 0.001, 1.0, 0.5, 600.0, -0.0015]],
                [[0.01, -0.001, 1.0, 0.5, 600.0, -0.0015]],
                [[0.01, 0.001, 1.5, 0.5, 600.0, -0.0015]],
                [[0.01, 0.001, 1.0, -0.5, 600.0, -0.0015]],
                [[0.01, 0.001, 1.0, 0.5, 600.0]],
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "increasing",
        {
            "alpha": D(
                "α > 0 (Lindner et al. Figs 4-7: f2 = 0.5 − 0.5 t^-α increasing needs α > 0)",
                5.0,
                0.0,
                -0.5,
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "constant",
        {
            "means": D(
                "each in [0, 1] (meaning: rested rewards in [0, 1], REPRODUCTION §1)",
                [0.2, 1.0],
                [1.2, 0.3],
                [-0.1, 0.3],
                [],
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "decreasing",
        {
            "start": D(
                "each in [0, 1] (meaning: rewards in [0, 1])", [1.0, 0.6], [1.2, 0.6], [-0.1, 0.6]
            ),
            "end": D(
                "each in [0, 1] and end <= start (docstring: decreasing arms)",
                [0.0, 0.1],
                [-0.1, 0.1],
                [0.95, 0.1],
                [0.2],
            ),
            "rate": D(
                "each > 0 (docstring: exp(−rate (m − 1)) decays only for rate > 0)",
                [0.5, 0.001],
                [0.0, 0.02],
                [-0.01, 0.02],
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "fico",
        {
            "seed": D(SEED, 7, -1),
            "n_applicants": D(
                "int >= 1 (Lindner et al. App. D.4: applicants sampled per group)", 500, 0, -5
            ),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "recommender",
        {
            "seed": D(
                "int in [0, 2**32) (the authors' np.random.RandomState seeds)", 12, -1, 2**32
            ),
            "n_arms": D("int >= 1 (meaning: number of items)", 3, 0, -1),
            **_common("sigma", "length"),
        },
    ),
    **_entries(
        "environment",
        "imab",
        {
            "k": D("int >= 1 (Patil et al. §2: number of arms k)", 3, 0, -1),
            "length": D(LENGTH, 50, 0, -1),
            "seed": D(SEED, 3, -1),
            "m": D(
                "int in [0, k) (Patil et al. §3: instance I_m, m ∈ [k], 0-based here)",
                2,
                -1,
                3,
                family="lower-bound",
                k=3,
            ),
            "horizon": D(
                "int >= 1 (Patil et al. §3: the horizon T of I_m)", 50, 0, -1, family="lower-bound"
            ),
            "ramp": D(
                "int >= 1 (Theorem 3's proof: pulls to reach 1)",
                20,
                0,
                -1,
                family="linear-vs-flat",
            ),
            "asymptotes": D(
                "each in [0, 1] (Patil et al. §2: bounded rewards, a_i = lim f_i)",
                [0.5, 0.9],
                [1.5, 0.9],
                [-0.1, 0.9],
                family="saturating",
                saturation=[10, 20],
            ),
            "saturation": D(
                "each an int >= 1 (docstring: the pull L_i at which a_i is reached)",
                [10, 20],
                [0, 20],
                [-5, 20],
                [2.5, 20],
                family="saturating",
                asymptotes=[0.5, 0.9],
            ),
            "curves": D(
                "values in [0, 1], nondecreasing, diminishing returns (Patil et al. §2)",
                [[0.1, 0.2, 0.25], [0.0, 0.5, 1.0]],
                [[0.1, 1.2, 1.2]],
                [[-0.1, 0.2, 0.25]],
                [[0.5, 0.2, 0.1]],
                [[0.1, 0.2, 0.4]],
                family="curves",
                length=OMIT,  # the curves family has no length: theirs
            ),
            "sigma": D(SIGMA, 0.05, -0.1, -1.0),
        },
    ),
    **_entries(
        "environment",
        "opportunity",
        {
            "means": D(
                "each in [0, 1] (Ron et al. §2: K Bernoulli arms, μ ∈ [0, 1]^K)",
                [0.2, 0.5, 0.8],
                [1.2, 0.5, 0.8],
                [-0.2, 0.5, 0.8],
                [],
            ),
            "transfer_cost": D(
                "λ >= 0, one value or one per arm (Ron et al. §2: the cost paid per withheld "
                "opportunity)",
                [0.0, 0.4, 0.8],
                -0.4,
                [0.1, -0.1, 0.0],
                [0.1, 0.2],
            ),
            "softmax_c": U(
                "any finite real (Ron et al. §2.2 f^sft(μ; c) = softmax(cμ): a distribution for "
                "every real c; c < 0 favours low means, c = 0 is uniform)",
                -2.0,
                *NOT_FINITE,
                fairness="softmax",
            ),
            "concentration": D(
                "κ > 0 (docstring: Beta(μκ, (1 − μ)κ) needs positive shapes)", 4.0, 0.0, -1.0
            ),
        },
    ),
    **_entries(
        "environment",
        "delayed",
        {
            "means": D(
                "each in [0, 1] (Cella & Cesa-Bianchi §3: Bernoulli payoffs, baseline μ_i)",
                [0.9, 0.5],
                [1.5, 0.5],
                [-0.5, 0.5],
                [],
            ),
            "delays": D(
                "ints >= 0, one per arm (Cella & Cesa-Bianchi §3: d_i; 0 = no recovery period)",
                [1, 3],
                [-1, 2],
                [1.5, 2],
                [1, 2, 3],
            ),
            "delay_range": D(
                "[low, high] ints with 0 <= low <= high (REPRODUCTION §5: d_i ~ U{1..6})",
                [2, 4],
                [-1, 3],
                [4, 2],
                [1],
            ),
            "decay": D(
                "γ in [0, 1] (Cella & Cesa-Bianchi §3: f(τ) = γ^τ must map into [0, 1])",
                0.9,
                1.1,
                -0.1,
            ),
            "f": D(
                "values in [0, 1], nonincreasing (Cella & Cesa-Bianchi §3: f: N → [0, 1])",
                [0.5, 0.25, 0.1, 0.05, 0.0, 0.0],
                [1.5, 0.25, 0.1, 0.05, 0.0, 0.0],
                [0.5, 0.25, 0.1, 0.05, 0.0, -0.1],
                [0.1, 0.25, 0.3, 0.35, 0.4, 0.5],
            ),
            "switching_cost": D(
                ">= 0 (Cella & Cesa-Bianchi §8: a unit cost per switch)", 1.0, -1.0
            ),
            "arm_switching_cost": D(">= 0 (meaning: a cost per change of arm)", 0.5, -0.5),
        },
    ),
    **_entries(
        "environment",
        "impact",
        {
            "high": D(
                "each in [0, 1] (Tang et al. Eq. 4: r̄_k is a Bernoulli mean)",
                [0.9, 0.7],
                [1.2, 0.8],
                [-0.1, 0.8],
            ),
            "low": D(
                "each in [0, 1] and <= high (Tang et al. Eq. 4: crime rate falls with patrol)",
                [0.3, 0.4],
                [-0.3, 0.4],
                [0.95, 0.4],
            ),
            "intercept": D(
                "each in [0, 1] (docstring: r(0) = intercept must be a Bernoulli mean)",
                [0.5, 0.6],
                [1.2, 0.6],
                [-0.1, 0.6],
                family="linear",
                high=None,
                low=None,
                slope=[0.2, -0.3],
            ),
            "slope": D(
                "each in [−1, 1] and intercept + slope in [0, 1] (docstring: r(f) in [0, 1] on "
                "f ∈ [0, 1])",
                [0.2, -0.3],
                [1.5, 0.0],
                [-1.2, 0.0],
                [0.8, 0.0],
                family="linear",
                high=None,
                low=None,
                intercept=[0.5, 0.6],
            ),
            "gamma": D("γ in [0, 1) (Tang et al. Eq. 2: time-discounting factor)", 0.6, 1.0, 2.0),
            "resolution": D(RESOLUTION, 10, 0, -2),
            "groups": D(
                "int in [1, 4] (docstring: the FICO tables have 4 groups)",
                3,
                0,
                5,
                family="fico",
                high=None,
                low=None,
            ),
            "start": D(
                "each in [0, 1], one per group (docstring: share below which patrol deters "
                "nothing)",
                [0.1, 0.2],
                [-0.1, 0.2],
                [1.2, 0.2],
                [0.1],
            ),
            "stop": D(
                "each in [0, 1] and > start (docstring: share above which nothing more)",
                [0.8, 0.9],
                [1.5, 0.9],
                [0.0, 0.9],
            ),
            "impact_params.power": D(
                "power > 0 (Tang et al. §5.2: g(p) = p^power continuous and monotone)",
                2.0,
                0.0,
                -1.0,
                NAN,
                impact="smoothed",
                gamma=0.5,
            ),
        },
    ),
    **_entries(
        "environment",
        "restless",
        {
            "curves": D(
                "values in [0, 1], one per round (Metelli et al. 2022 §2: bounded rewards)",
                [[0.1, 0.5], [0.2, 0.3]],
                [[0.1, 1.5], [0.2, 0.3]],
                [[-0.1, 0.5], [0.2, 0.3]],
            ),
            **_common("sigma"),
        },
    ),
    **{
        ("environment", name, param): domain
        for name in ("rising", "rising-restless")
        for param, domain in {
            "length": D(LENGTH, 100, 0, -1),
            "seed": D(SEED, 5, -1, instance="random"),
            "scale": D(
                "int >= 2 (docstring: b ~ U{2..scale} in the authors' random generator)",
                2,
                1,
                0,
                instance="random",
            ),
            **_common("sigma"),
        }.items()
    },
    **_entries(
        "environment",
        "rotting",
        {
            "mu": D(
                "μ >= 0 (Seznec et al. 2019 Fig. 1: worth μ then −μ; μ < 0 would rise)",
                0.5,
                -0.1,
                instance="two-arms",
            ),
            "means": D(
                "each >= 0 (Seznec et al. 2019 Fig. 2: μ_i >= 0 decaying to −μ_i)",
                [0.5, 0.1],
                [-0.5, 0.1],
                [],
                instance="custom",
            ),
            "breakpoint": D("int >= 1 (docstring: pulls before the decay)", 100, 0, -1),
            "rho": D("ρ > 0 (docstring: (1 + (m−1)/b)^−ρ decays only for ρ > 0)", 0.5, 0.0, -1.0),
            "length": D(LENGTH, 1000, 0, -1),
            "sigma": D(
                "σ > 0 with Gaussian noise, >= 0 otherwise (Seznec et al.: σ = 1)", 0.5, -0.5, 0.0
            ),
            "scale": D("> 0 (docstring: multiplies the means)", 0.05, 0.0, -1.0),
            "offset": U(
                "any finite real (docstring: a shift added to every value; the policies are "
                "shift-invariant and the curves' bound follows it)",
                -3.5,
                *NOT_FINITE,
            ),
        },
    ),
    # ---------------------------------------------------------------- policies
    **_entries(
        "policy",
        "ucb1",
        {"c": D("c > 0 (Auer et al. 2002, Fig. 1: bonus √(c ln t / n), c = 2)", 0.5, 0.0, -1.0)},
    ),
    **_entries(
        "policy",
        "exp3",
        {
            "gamma": D(
                "γ in (0, 1] (Auer et al. 2002b, EXP3: γ ∈ (0, 1]; Lindner et al. use 0.01)",
                0.01,
                0.0,
                -0.1,
                1.5,
            ),
            "first_pull_credit": U(
                CREDIT, [0.39, -0.2], [NAN, 0.0], [0.0, INF], variant="authors-code"
            ),
        },
    ),
    **_entries(
        "policy",
        "epsilon-greedy",
        {
            "epsilon": D("ε in [0, 1] (meaning: an exploration probability)", 0.05, -0.1, 1.1),
            "c": D("c > 0 (Auer et al. 2002 §3: ε_t-greedy with c > 0)", 5.0, 0.0, -1.0),
            "d": D(
                "d in (0, 1] (Auer et al. 2002 §3: 0 < d, a lower bound on a gap of [0, 1] "
                "rewards)",
                0.2,
                0.0,
                -0.1,
                1.5,
            ),
        },
    ),
    **_entries(
        "policy",
        "thompson",
        {
            "prior_alpha": D(
                "α₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                0.5,
                0.0,
                -1.0,
            ),
            "prior_beta": D(
                "β₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                2.0,
                0.0,
                -1.0,
            ),
        },
    ),
    **_entries(
        "policy",
        "d-ts",
        {
            "prior_alpha": D(
                "α₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                0.5,
                0.0,
                -1.0,
            ),
            "prior_beta": D(
                "β₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                2.0,
                0.0,
                -1.0,
            ),
            "discount": D(
                "γ in (0, 1] (Raj & Kalyani 2017: discount of the Beta statistics; 1 is TS)",
                0.95,
                0.0,
                -0.5,
                1.01,
            ),
        },
    ),
    **_entries(
        "policy",
        "sw-ts",
        {
            "prior_alpha": D(
                "α₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                0.5,
                0.0,
                -1.0,
            ),
            "prior_beta": D(
                "β₀ > 0 (Agrawal & Goyal 2012: the Beta(α₀, β₀) prior; Beta(1, 1) is uniform)",
                2.0,
                0.0,
                -1.0,
            ),
            "window": D("τ int >= 1 (Garivier & Moulines §4: window of plays)", 100, 0, -5),
        },
    ),
    **_entries(
        "policy",
        "thompson-gaussian",
        {
            "sigma": D(
                "σ > 0 (Agrawal & Goyal 2013: the Gaussian posterior's scale)", 0.5, 0.0, -1.0
            )
        },
    ),
    **_entries(
        "policy",
        "kl-ucb",
        {
            "c": D(
                "c >= 0 (Garivier & Cappé 2011, Alg. 1: level ln t + c ln ln t)", 3.0, -0.1, -1.0
            ),
            "sigma": D("σ > 0 (meaning: the Gaussian divergence's scale)", 0.5, 0.0, -1.0),
        },
    ),
    **_entries(
        "policy",
        "sw-kl-ucb",
        {
            "c": D(
                "c >= 0 (Garivier & Cappé 2011, Alg. 1: level ln t + c ln ln t)", 3.0, -0.1, -1.0
            ),
            "window": D("τ int >= 1 (Garivier & Moulines §4: window of plays)", 100, 0, -5),
        },
    ),
    **_entries(
        "policy",
        "ucb-v",
        {
            "zeta": D(
                "ζ > 0 (Audibert et al. 2009: E_t = ζ ln t; Theorem 1: ζ > 1)", 1.2, 0.0, -1.0
            ),
            "c": D("c >= 0 (Audibert et al. 2009, Eq. (1): the range term's constant)", 1.0, -0.5),
            "b": D("b > 0 (Audibert et al. 2009: rewards in [0, b])", 1.0, 0.0, -1.0),
        },
    ),
    **_entries(
        "policy",
        "exp3s",
        {
            "gamma": D(
                "γ in (0, 1] (Auer et al. 2002, §8: Exp3.S's exploration rate)", 0.1, 0.0, -0.1, 1.5
            ),
            "alpha": D("α >= 0 (Auer et al. 2002, §8: the weight-sharing rate)", 0.001, -0.1, INF),
            "hardness": D(
                "int >= 1 (Auer et al. 2002, §8: the hardness S, 1 + switches)", 3, 0, -1, 2.5
            ),
        },
    ),
    **_entries(
        "policy",
        "ser4",
        {
            "delta": D(
                "δ in (0, 1) (Allesiardo et al. 2017: the confidence level)", 0.05, 0.0, 1.0, -0.1
            ),
            "epsilon": D("ε >= 0 (Allesiardo et al. 2017: the elimination slack)", 0.01, -0.1, INF),
            "phi": D(
                "φ in [0, 1] (Allesiardo et al. 2017: the reset probability)", 0.01, -0.1, 1.5
            ),
        },
    ),
    **_entries(
        "environment",
        "piecewise",
        {
            "means": D(
                "finite means, one non-empty list per segment (meaning; Bernoulli: in [0, 1])",
                [[0.2, 0.8]],
                [],
                [[]],
                [[NAN, 0.5]],
            ),
            "change_points": D("ints >= 0 (meaning: the rounds where segments start)", [0], [-1]),
            "length": D(LENGTH, 50, 0, -1),
            "sigma": D(SIGMA, 0.05, -0.1, -1.0),
        },
    ),
    **_entries(
        "policy",
        "cusum-ucb",
        {
            "breakpoints": D(
                "Υ int >= 1 (Liu et al. 2018; Cao et al. 2019: change points the tuning assumes)",
                4,
                0,
                -1,
                2.5,
            ),
            "alpha": D(
                "α in [0, 1] (Liu et al. 2018, Alg. 2: a uniform-exploration probability)",
                0.1,
                -0.1,
                1.5,
            ),
            "threshold": D(
                "h > 0 (Liu et al. 2018, Alg. 1: the CUSUM alarm threshold)", 5.0, 0.0, -1.0, INF
            ),
            "warmup": D(
                "M int >= 1 (Liu et al. 2018, Alg. 1: samples estimating the pre-change mean)",
                20,
                0,
                -1,
                2.5,
            ),
            "drift": D("ε >= 0 (Liu et al. 2018, Alg. 1: the CUSUM drift)", 0.1, -0.1, INF),
            "xi": D("ξ > 0 (meaning: the UCB term's constant, √(ξ ln n / N))", 2.0, 0.0, -1.0),
        },
    ),
    **_entries(
        "policy",
        "m-ucb",
        {
            "breakpoints": D(
                "Υ int >= 1 (Liu et al. 2018; Cao et al. 2019: change points the tuning assumes)",
                4,
                0,
                -1,
                2.5,
            ),
            "window": D(
                "w int >= 2 (Cao et al. 2019, Alg. 2: a window of two halves)", 20, 1, 0, -2, 2.5
            ),
            "threshold": D(
                "b > 0 (Cao et al. 2019, Alg. 2: the alarm threshold)", 3.0, 0.0, -1.0, INF
            ),
            "gamma": D(
                "γ in [0, 1] (Cao et al. 2019, Alg. 1: the forced-exploration rate)", 0.1, -0.1, 1.5
            ),
            "min_change": D(
                "δ in (0, 1] (Cao et al. 2019, Remark 1: the smallest change, of [0, 1] means)",
                0.1,
                0.0,
                -0.1,
                1.5,
            ),
        },
    ),
    **_entries(
        "policy",
        "glr-klucb",
        {
            "delta": D(
                "δ in (0, 1) (Besson et al. 2022: the GLR test's confidence)", 0.05, 0.0, 1.0, -0.1
            ),
            "alpha": D(
                "α in (0, 1] (Besson et al. 2022, Alg. 1: the forced-exploration rate)",
                0.1,
                0.0,
                -0.1,
                1.5,
            ),
            "c": D("c >= 0 (Garivier & Cappé 2011: level ln t + c ln ln t)", 3.0, -0.1),
            "test_every": D(
                "int >= 1 (Besson et al. 2022: test every Δn observations)", 2, 0, -1, 2.5
            ),
            "split_every": D(
                "int >= 1 (Besson et al. 2022: scan every Δs-th split)", 2, 0, -1, 2.5
            ),
        },
    ),
    **_entries(
        "policy",
        "moss",
        {
            "alpha": D(
                "α >= 0 (Degenne & Perchet 2016: the exploration scale (1 + α)/2 of MOSS-anytime)",
                0.0,
                -0.1,
                -1.0,
            )
        },
    ),
    **_entries(
        "policy",
        "etc",
        {"m": D("int >= 1 (Lattimore & Szepesvári Alg. 1: pulls per arm)", 10, 0, -1, 2.5)},
    ),
    **_entries("policy", "ucb", _common("xi", "b")),
    **_entries(
        "policy",
        "d-ucb",
        {
            "discount": D(
                "γ in (0, 1] (Garivier & Moulines §3: discount γ ∈ (0, 1); 1 is Lindner's UCB)",
                0.99,
                0.0,
                -0.5,
                1.01,
            ),
            **_common("xi", "b"),
        },
    ),
    **_entries(
        "policy",
        "sw-ucb",
        {
            "window": D("τ int >= 1 (Garivier & Moulines §4: window of plays)", 100, 0, -5),
            **_common("xi", "b"),
        },
    ),
    **_entries(
        "policy",
        "r-exp3",
        {
            "variation_budget": D(
                "V > 0 (Besbes et al. 2014 §4: Δ = ⌈(K ln K)^1/3 (T/V)^2/3⌉)", 2.0, 0.0, -1.0
            ),
            "first_pull_credit": U(CREDIT, [0.0, 0.0], [NAN, 0.0], variant="authors-code"),
        },
    ),
    **_entries("policy", "r-ed-ucb", METELLI),
    **_entries("policy", "r-less-ucb", METELLI),
    **_entries("policy", "fewa", ROTTING_POLICY),
    **_entries("policy", "raw-ucb", ROTTING_POLICY),
    **_entries(
        "policy",
        "swa",
        {
            "window": D("h int >= 1 (Levine et al. 2017 Alg. 1: window)", 50, 0, -1),
            "alpha": D("α > 0 (Levine et al. Thm 3.1: tuning factor of h)", 0.2, 0.0, -1.0),
            "sigma": D("σ > 0 (Levine et al.: sub-Gaussian noise level)", 1.0, 0.0, -1.0),
        },
    ),
    **{
        ("policy", name, "noise_bound"): D(
            "ε̄ >= 0 (Lindner et al. §4: noise bounded by |ε| <= ε̄)", 0.1, -0.1, -1.0
        )
        for name in ("spo", "one-step-optimistic")
    },
    **_entries(
        "policy",
        "spo-delta",
        {
            "sigma": D("σ > 0 (Lindner et al. Cor. 1: Gaussian noise N(0, σ²))", 0.05, 0.0, -0.1),
            "failure_probability": D(
                "ε in (0, 1) (Lindner et al. Cor. 1: all intervals hold w.p. >= 1 − ε)",
                0.05,
                0.0,
                1.0,
                1.5,
                -0.1,
            ),
        },
    ),
    **_entries(
        "policy",
        "fa-etc",
        {"exploration": D("N int >= 1 (Ron et al. Alg. 1: pulls per arm)", 20, 0, -1)},
    ),
    **_entries(
        "policy",
        "srum",
        {
            "alpha": D(
                "α >= 0 (Ron et al. Alg. 2: allowed approximation error of f; Thm 2's α is 0 "
                "for L = 0)",
                0.1,
                -0.1,
                -1.0,
            ),
            "beta": D("β >= 0 (Ron et al. Alg. 2: allowed approximation error of Δ)", 0.2, -0.2),
            "black_box_params.c": D(
                "the black box's own domains (ucb1: c > 0)", 1.0, 0.0, -1.0, black_box="ucb1"
            ),
        },
    ),
    **_entries(
        "policy",
        "pi-low",
        {
            "delta": D(DELTA, 0.1, 0.0, 1.0, -0.1, 1.5),
            **_common("width_scale"),
        },
    ),
    **_entries("policy", "pi-ucb", _common("width_scale")),
    **_entries(
        "policy",
        "ranker-low",
        {
            "d0": D("int >= 1 (Cella & Cesa-Bianchi §7: d_0 > max_i d_i)", 7, 0, -1),
            "ranker_delta": D(DELTA, 0.1, 0.0, 1.0, -0.1),
            "delta": D(DELTA, 0.1, 0.0, 1.0, 1.5),
            **_common("width_scale"),
        },
    ),
    **_entries("policy", "ad-ucb", _common("resolution")),
    **_entries(
        "policy",
        "hd-ucb",
        {
            "eta": D(
                "η in (0, 1) (Tang et al. Thm 5.1: constant ratio η ∈ (0, 1))",
                0.5,
                0.0,
                1.0,
                -0.5,
                1.5,
            ),
            "gamma": D("γ in [0, 1) (Tang et al. Eq. 2: γ ∈ [0, 1))", 0.4, 1.0, 2.0, -0.1),
            **_common("resolution"),
        },
    ),
    **_entries("policy", "cucb", _common("resolution")),
    **_entries("policy", "exp3-meta", _common("resolution")),
    **_entries(
        "policy",
        "one-hot",
        {
            "base_params.epsilon": D(
                "the base policy's own domains (epsilon-greedy: ε in [0, 1])",
                0.2,
                1.5,
                -0.1,
                base="epsilon-greedy",
            ),
        },
    ),
}


@dataclass(frozen=True)
class Bound:
    """The upper bound of a size-like parameter, derived from memory and time (``text``: the
    bound and its reason), and values above it (``too_large``) that must be refused naming the
    parameter — never an internal error, a ``MemoryError`` or a run that does not finish."""

    text: str
    too_large: tuple[Any, ...]

    def of_list(self, *around: Any) -> Bound:
        """The same bound for a list parameter: each too-large value in a list, in place of
        the first of ``around`` (the other values of a valid list)."""
        return Bound(self.text, tuple([v, *around[1:]] for v in self.too_large))


NOISE_BOUND = Bound(
    "at most 10⁶ (time and numbers: squared and summed over up to 10⁹ rounds, larger noise "
    "scales overflow float64; 10⁶ times the rewards' unit range)",
    (1e7, 1e300),
)
ARMS_BOUND = Bound(
    "at most 10⁴ arms (memory: every result keeps each arm's pulls at every checkpoint, and "
    "the tidy table has a column per arm)",
    (10_001, 10**18, 1e300),
)
LENGTH_BOUND = Bound(
    "at most 10⁸ values per arm (memory: a curve is tabulated for every pull, 8 bytes a value: "
    "800 MB per arm)",
    (10**8 + 1, 10**18, 1e300),
)
WINDOW_BOUND = Bound(
    "at most 10⁶ plays (memory: the plays are kept per replication, 16 bytes each)",
    (10**6 + 1, 10**18, 1e300),
)
ROUNDS_BOUND = Bound(
    "at most 10⁹ rounds (time: the longest run a spec may ask for; more means the same)",
    (10**9 + 1, 10**18, 1e300),
)
LOOKAHEAD_BOUND = Bound(
    "at most 20 (time: K^d plans of d rounds are scored, at most 10⁶ = 2²⁰ of them)",
    (21, 10**18, 1e300),
)
RESOLUTION_BOUND = Bound(
    "1/ε at most 10⁴ (memory and time: K·(1/ε) statistics per replication, the ε-grid searched "
    "every round; the theory's 1/ε stays below 400 for T <= 10⁹)",
    (10_001, 10**18, 1e300),
)
DELAY_BOUND = Bound(
    "at most 10¹⁸ (the availability clock t + D is a 64-bit integer; a delay >= T blocks the "
    "arm for the rest of the run, so larger ones act the same)",
    (10**18 + 1, 1e300),
)
RECOVERY_BOUND = Bound(
    "at most 10⁵ (time: f(1 … max d_i) is tabulated and the ghost oracle evaluates it value by "
    "value)",
    (100_001, 10**18, 1e300),
)
LEVELS_BOUND = Bound(
    "z_max at most 1,000 (time: a GP draw factorises a (z_max + 1)² covariance matrix, O(z_max³))",
    (1001, 10**18, 1e300),
)
SWA_ALPHA_BOUND = Bound(
    "at most 100 (memory: SWA's window h grows linearly in α and is kept per arm and replication)",
    (101.0, 1e18, 1e300),
)

#: Every size-like parameter of a registered component and its :class:`Bound` (written from
#: the meaning of the number, not read from the signatures: see
#: :func:`test_every_size_parameter_has_a_bound`).
SIZE_BOUNDS: dict[tuple[str, str, str], Bound] = {
    **{
        (role, name, param): bound
        for role, name, param, bound in [
            ("environment", "gaussian", "n_arms", ARMS_BOUND),
            ("environment", "recommender", "n_arms", ARMS_BOUND),
            ("environment", "imab", "k", ARMS_BOUND),
            ("environment", "blocking", "n_arms", ARMS_BOUND),
            ("environment", "recovering", "n_arms", ARMS_BOUND),
            ("policy", "ranker-low", "d0", ARMS_BOUND),
            ("environment", "fico", "n_applicants", LENGTH_BOUND),
            ("environment", "imab", "horizon", ROUNDS_BOUND),
            ("environment", "imab", "ramp", ROUNDS_BOUND),
            ("environment", "imab", "saturation", ROUNDS_BOUND.of_list(20)),
            ("environment", "rotting", "breakpoint", ROUNDS_BOUND),
            ("environment", "piecewise", "change_points", ROUNDS_BOUND.of_list()),
            ("environment", "rising", "scale", ROUNDS_BOUND),
            ("environment", "rising-restless", "scale", ROUNDS_BOUND),
            ("environment", "blocking", "delays", DELAY_BOUND.of_list(1, 3)),
            (
                "environment",
                "blocking",
                "delay_range",
                Bound(DELAY_BOUND.text, tuple([1, v] for v in DELAY_BOUND.too_large)),
            ),
            ("environment", "delayed", "delays", RECOVERY_BOUND.of_list(1, 3)),
            (
                "environment",
                "delayed",
                "delay_range",
                Bound(RECOVERY_BOUND.text, tuple([2, v] for v in RECOVERY_BOUND.too_large)),
            ),
            ("environment", "impact", "resolution", RESOLUTION_BOUND),
            ("environment", "rebounding", "lookahead", LOOKAHEAD_BOUND),
            ("environment", "recovering", "lookahead", LOOKAHEAD_BOUND),
            ("environment", "recovering", "z_max", LEVELS_BOUND),
            ("policy", "rebounding-lookahead", "lookahead", LOOKAHEAD_BOUND),
            ("policy", "eep", "lookahead", LOOKAHEAD_BOUND),
            ("policy", "eep", "explore", WINDOW_BOUND),
            ("policy", "rgp-ucb", "lookahead", LOOKAHEAD_BOUND),
            ("policy", "rgp-ts", "lookahead", LOOKAHEAD_BOUND),
            ("policy", "rgp-ucb", "noise", NOISE_BOUND),
            ("policy", "rgp-ts", "noise", NOISE_BOUND),
            ("policy", "sw-ts", "window", WINDOW_BOUND),
            ("policy", "sw-kl-ucb", "window", WINDOW_BOUND),
            ("policy", "sw-ucb", "window", WINDOW_BOUND),
            ("policy", "m-ucb", "window", WINDOW_BOUND),
            ("policy", "swa", "window", WINDOW_BOUND),
            ("policy", "swa", "alpha", SWA_ALPHA_BOUND),
            ("policy", "etc", "m", ROUNDS_BOUND),
            ("policy", "fa-etc", "exploration", ROUNDS_BOUND),
            ("policy", "exp3s", "hardness", ROUNDS_BOUND),
            ("policy", "cusum-ucb", "breakpoints", ROUNDS_BOUND),
            ("policy", "cusum-ucb", "warmup", ROUNDS_BOUND),
            ("policy", "m-ucb", "breakpoints", ROUNDS_BOUND),
            ("policy", "glr-klucb", "test_every", ROUNDS_BOUND),
            ("policy", "glr-klucb", "split_every", ROUNDS_BOUND),
            *[
                ("policy", name, "resolution", RESOLUTION_BOUND)
                for name in ("ad-ucb", "hd-ucb", "cucb", "exp3-meta")
            ],
            *[
                ("environment", name, "length", LENGTH_BOUND)
                for name in (
                    "rested",
                    "single-peaked",
                    "increasing",
                    "constant",
                    "decreasing",
                    "fico",
                    "recommender",
                    "imab",
                    "rising",
                    "rising-restless",
                    "rotting",
                    "piecewise",
                )
            ],
        ]
    },
    # noise scales: σ of the rewards' noise, and the σ a policy assumes
    **{
        (role, name, param): NOISE_BOUND
        for role, name, param in [
            *[
                ("environment", name, "sigma")
                for name in (
                    "gaussian",
                    "rested",
                    "single-peaked",
                    "increasing",
                    "constant",
                    "decreasing",
                    "fico",
                    "recommender",
                    "imab",
                    "restless",
                    "rising",
                    "rising-restless",
                    "rotting",
                    "piecewise",
                    "blocking",
                    "rebounding",
                    "recovering",
                )
            ],
            ("environment", "rebounding", "sigma_z"),
            *[
                ("policy", name, "sigma")
                for name in (
                    "kl-ucb",
                    "thompson-gaussian",
                    "r-ed-ucb",
                    "r-less-ucb",
                    "fewa",
                    "raw-ucb",
                    "swa",
                    "spo-delta",
                )
            ],
            ("policy", "spo", "noise_bound"),
            ("policy", "one-step-optimistic", "noise_bound"),
        ]
    },
}


def _bounded(key: tuple[str, str, str], domain: Domain) -> Domain:
    """``domain`` with its size bound (if any): the bound and its reason in the text, the
    too-large values among the bad ones."""
    bound = SIZE_BOUNDS.get(key)
    if bound is None:
        return domain
    return Domain(
        f"{domain.text}; {bound.text}",
        domain.valid,
        domain.bad + bound.too_large,
        domain.context,
        domain.unbounded,
    )


DOMAINS = {key: _bounded(key, domain) for key, domain in DOMAINS.items()}

#: Valid values of the parameters some components cannot do without.
REQUIRED: dict[tuple[str, str], dict[str, Any]] = {
    ("environment", "rebounding"): {
        "base": [1.0, 0.8],
        "retention": [0.5, 0.7],
        "influence": [0.4, 0.2],
    },
    ("environment", "blocking"): {"means": [0.9, 0.5], "delays": [2, 3]},
    ("environment", "recovering"): {"n_arms": 2, "z_max": 4},
    ("environment", "bernoulli"): {"means": [0.2, 0.8]},
    ("environment", "gaussian"): {"means": [0.2, 0.8]},
    ("environment", "rested"): {"curves": [[0.1, 0.5, 0.9], [0.3, 0.3, 0.3]]},
    ("environment", "constant"): {"means": [0.2, 0.8]},
    ("environment", "decreasing"): {"start": [0.9, 0.6], "end": [0.2, 0.1], "rate": [0.01, 0.02]},
    ("environment", "imab"): {"length": 100},
    ("environment", "opportunity"): {"means": [0.2, 0.5, 0.8]},
    ("environment", "delayed"): {"means": [0.9, 0.5]},
    ("environment", "impact"): {"high": [0.9, 0.8], "low": [0.3, 0.4]},
    ("environment", "restless"): {"curves": [[0.1, 0.5, 0.9], [0.3, 0.3, 0.3]]},
    ("policy", "spo-delta"): {"sigma": 0.1},
    ("environment", "piecewise"): {"means": [[0.2, 0.8]], "change_points": [0], "length": 10},
}


def _spec(role: str, name: str, param: str, value: Any, context: dict[str, Any]) -> dict:
    """The spec entry, its parameters in the ``params`` table (single-peaked has a parameter
    named ``params``, which only fits there)."""
    params: dict[str, Any] = {**REQUIRED.get((role, name), {}), **context}
    params = {key: value for key, value in params.items() if value is not OMIT}
    head, _, sub = param.partition(".")
    params[head] = {**(params.get(head) or {}), sub: value} if sub else value
    return {"kind": name, "params": params}


def _names_parameter(error: SpecError, role: str, param: str) -> bool:
    text = str(error)
    head = param.partition(".")[0]
    return f"{FIELD[role]}.{head}" in text or ("." in param and param in text)


BAD_CASES = [
    pytest.param(key, bad, id=f"{key[1]}.{key[2]}={bad!r}")
    for key, domain in DOMAINS.items()
    for bad in domain.bad
]


@pytest.mark.parametrize(("key", "bad"), BAD_CASES)
def test_out_of_domain_value_is_refused(key, bad):
    role, name, param = key
    spec = _spec(role, name, param, bad, DOMAINS[key].context)
    with pytest.raises(SpecError) as caught:
        component_spec(role, spec, FIELD[role])
    for error in caught.value.errors:  # one line per problem (two values out of range: two)
        assert _names_parameter(error, role, param), str(caught.value)
        assert "\n" not in str(error)


@pytest.mark.parametrize("key", list(DOMAINS), ids=lambda k: f"{k[1]}.{k[2]}")
def test_in_domain_value_is_accepted(key):
    role, name, param = key
    domain = DOMAINS[key]
    assert domain.bad, "every domain lists values outside it"
    component_spec(role, _spec(role, name, param, domain.valid, domain.context), FIELD[role])


def _admits_number(annotation: Any) -> bool:
    """Whether ``annotation`` (possibly inside Optional, list, tuple, Annotated, Union or a
    Literal of numbers) lets a number through; ``bool`` and ``Any`` do not count."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) is typing.Literal:
        return any(
            isinstance(a, int | float) and not isinstance(a, bool)
            for a in typing.get_args(annotation)
        )
    return any(_admits_number(a) for a in typing.get_args(annotation) if not _is_metadata(a))


def _is_metadata(arg: Any) -> bool:
    return not (isinstance(arg, type) or typing.get_origin(arg) is not None or arg is None)


def _registered() -> list[tuple[str, str, type]]:
    return [
        (role, name, registry.resolve(role, name, "kind"))
        for role, table in (("environment", registry.ENVIRONMENTS), ("policy", registry.POLICIES))
        for name in table
    ]


def _numeric_fields() -> set[tuple[str, str, str]]:
    return {
        (role, name, param)
        for role, name, cls in _registered()
        for param, info in registry.params_model(cls).model_fields.items()
        if _admits_number(info.annotation)
    }


def test_every_numeric_parameter_has_a_domain():
    numeric = _numeric_fields()
    assert len({(r, n) for r, n, _ in _registered()}) >= 49  # 17 environments, 32 policies
    missing = sorted(numeric - set(DOMAINS))
    assert not missing, f"numeric parameters without a domain in DOMAINS: {missing}"
    assert ("policy", "hd-ucb", "gamma") in numeric  # the introspection sees Optional[float]
    assert ("environment", "single-peaked", "params") in numeric  # and lists of tuples


def _declares_size(annotation: Any, metadata: list[Any]) -> bool:
    """Whether a field carries an upper bound of a size (``impactbandits.params.Size``), on
    itself or inside its type (``list[Annotated[int, ..., DELAY]]``)."""
    from impactbandits.params import Size

    if any(isinstance(m, Size) for m in metadata):
        return True
    return any(isinstance(a, Size) or _declares_size(a, []) for a in typing.get_args(annotation))


def test_every_size_parameter_has_a_bound():
    """Every size-like parameter has its bound and reason here (and a domain to carry the
    too-large values); every bound written here is declared in the signature, so that
    validation and ``impactbandits describe`` have it."""
    declared = {
        (role, name, param)
        for role, name, cls in _registered()
        for param, info in registry.params_model(cls).model_fields.items()
        if _declares_size(info.annotation, info.metadata)
    }
    assert sorted(declared - set(SIZE_BOUNDS)) == [], "size parameters without a Bound"
    assert sorted(set(SIZE_BOUNDS) - declared) == [], "bounds not declared in the signature"
    assert sorted(set(SIZE_BOUNDS) - set(DOMAINS)) == [], "bounds without a domain"


def test_domains_name_real_parameters():
    """No stale entries: every key names a registered component's parameter."""
    fields = {
        (role, name): set(registry.params_model(cls).model_fields)
        for role, name, cls in _registered()
    }
    for role, name, param in DOMAINS:
        assert param.partition(".")[0] in fields[(role, name)], (role, name, param)


def test_scalar_bounds_are_in_the_signature():
    """Bounded scalar parameters carry their bounds in the signature's metadata, so that
    ``impactbandits describe KIND`` shows them (lists and relations may be checked by the
    constructor; Literals list their values)."""
    bounds = (Gt, Ge, Lt, Le)
    for role, name, cls in _registered():
        for param, info in registry.params_model(cls).model_fields.items():
            domain = DOMAINS.get((role, name, param))
            if domain is None or domain.unbounded or not _is_scalar(info.annotation):
                continue
            assert any(isinstance(m, bounds) for m in info.metadata), (role, name, param)


def _is_scalar(annotation: Any) -> bool:
    """``int``, ``float`` or either ``| None`` (what ``describe`` shows bounds for)."""
    if annotation in (int, float):
        return True
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    return origin in (typing.Union, types.UnionType) and all(a in (int, float) for a in args)
