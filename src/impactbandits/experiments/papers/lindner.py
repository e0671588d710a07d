"""Lindner, Heidari & Krause (2021), "Addressing the Long-term Impact of ML Decisions via
Policy Regret" (IJCAI): the registered figures.

Every figure follows the paper's setup (the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/): horizons ``linspace(2N+1, Tmax,
100)`` rounded down, 30 seeds, each horizon a separate run for horizon-aware algorithms,
per-step policy regret against the exact optimum
(:func:`~impactbandits.oracles.allocation.optimal_allocation`). ``--quick`` keeps every
environment and algorithm but uses 12 horizons, 5 seeds and a shorter Tmax (documented per figure).

Algorithm defaults (the fidelity ledger): SPO is Algorithm 1 when noise-free and, under
Gaussian noise, SPO with Corollary 1's δ-intervals
(:func:`~impactbandits.experiments.papers.lindner_algorithms.spo_entry` says why: the authors'
ε̄ = 2σ is not a bound on Gaussian noise and produces a heavy tail of failing seeds);
one-step-optimistic uses the authors' noise bound ε̄ = 2σ (FICO: max(0.1, 2σ)); EXP3 γ = 0.01;
R-EXP3 V = 2; D-UCB discount 1 − 1/(4√T); SW-UCB window ⌊4√(T ln T)⌋; UCB is D-UCB with
discount 1. Every figure also has an authors'-code variant (``impactbandits reproduce NAME
--variant authors-code``): SPO with ε̄ = 2σ and stale indices, D-UCB/UCB with padding B,
stale D-UCB/SW-UCB indices, EXP3/R-EXP3 crediting each pull with the previous pull's value,
HKR with its unrecorded first pull — each reproduces the authors' pulls exactly on noise-free
instances (tested; differences and effects in the fidelity ledger).
Their noisy arms draw fresh noise at every evaluation, re-evaluations of past pulls included
(greedy and one-step-optimistic re-evaluate every round); ours draw once per pull, and the
authors'-code variant switches the rested environments to ``noise_draws = "per-evaluation"``.

Choice of ours: the paper does not state Figure 1's noise level; ``lindner-fig1`` uses σ = 0.05
(:data:`FIG1_SIGMA`), and ``lindner-single-peaked`` covers σ ∈ {0, 0.01, 0.05, 0.1}.

Data figures (``lindner-fico``, ``lindner-recommender``): the panels are the paper's, σ ∈
:data:`DATA_SIGMAS` = {0 (noise-free), 0.01, 0.05} — Figs 12–16 each show (a) noise-free,
(b) σ = 0.01, (c) σ = 0.05. Fig. 3 repeats one panel of each; the paper states neither its noise
level nor (3b) its instance — Fig. 12's caption ("the same results … for different simulated
noise levels") suggests 3a is the noise-free 12a.
The authors' README also runs σ = 0.1 (``fico_all_gaussian_noise``,
``recommender_4_gaussian_noise``), which the paper does not show; those panels are not
registered (add ``{"noise": "gaussian", "sigma": 0.1}`` environments to a spec to run them).
The recommender instances A, B, C are the paper's (the authors' seeds 1, 2, 3 drawn with
``np.random.RandomState``, reproduced exactly, see :mod:`impactbandits.envs.recommender`); our
earlier instances are the environment option ``"instance_set": "selected"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from impactbandits.experiments.claims import Claim
from impactbandits.experiments.figures import Figure, quick_name
from impactbandits.experiments.papers.lindner_algorithms import (
    per_environment_policies,
    spo_entry,
)
from impactbandits.experiments.papers.lindner_appendix_claims import (
    FICO_CLAIMS,
    INCREASING_CLAIMS,
    RECOMMENDER_CLAIMS,
    SINGLE_PEAKED_CLAIMS,
)
from impactbandits.experiments.papers.lindner_claims import (
    FIG1_CLAIMS,
    GAUSSIAN_CLAIMS,
    GAUSSIAN_NOTES,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

FIG1_SIGMA = 0.05
FULL_SEEDS, QUICK_SEEDS = 30, 5
FULL_HORIZONS, QUICK_HORIZONS = 100, 12
SINGLE_PEAKED_SIGMAS = (0.0, 0.01, 0.05, 0.1)
INCREASING_ALPHAS = {
    "inc_1": (0.1, 0.5, 1.0, 5.0),
    "inc_2": (0.03, 0.1, 0.4, 1.0),
    "inc_3": (0.1, 0.5, 1.0, 5.0),
}
NOISE_SIGMAS = (0.01, 0.05, 0.1)
#: Noise levels of the paper's FICO and recommender panels (Figs 12–16: (a)–(c)).
DATA_SIGMAS = (0.0, 0.01, 0.05)
#: SPO's / one-step-optimistic's noise bound on FICO is max(0.1, 2σ), also when noise-free: the
#: authors' noise-free FICO bandits (``fico_all``) carry a noise model with bound 0.1 that is not
#: injected, so their SPO runs the LP branch with ε̄ = 0.1 (the paper states no bound).
FICO_MIN_NOISE_BOUND = 0.1
FICO_CURVES = {"score_change": "FICO score change", "bank_utility": "FICO bank utility"}
RECOMMENDER_NAMES = ("A", "B", "C")
#: Rested environments whose noisy arms the authors' code re-evaluates with fresh noise.
REDRAWN_KINDS = ("single-peaked", "increasing", "fico", "recommender")


def horizon_grid(n_arms: int, t_max: int, count: int) -> list[int]:
    """``linspace(2N+1, Tmax, count)`` rounded down (the paper's grid; the fidelity ledger)."""
    return sorted({int(x) for x in np.floor(np.linspace(2 * n_arms + 1, t_max, count))})


def noise(sigma: float) -> dict[str, Any]:
    return {"noise": "gaussian", "sigma": sigma} if sigma > 0 else {"noise": "none"}


def _spec(
    name: str,
    description: str,
    environments: list[dict[str, Any]],
    policies: list[dict[str, Any]],
    n_arms: int,
    t_max: int,
    quick: bool,
    variant: str = "paper",
) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    if variant == "authors-code":
        description += (
            " Authors'-code variant: every algorithm as in single-peaked-bandits@8e1dd52,"
            " noise drawn afresh at every evaluation of a noisy arm (the fidelity ledger: https://impactbandits.readthedocs.io/en/latest/fidelity/)."
        )
        environments = [
            {**env, "noise_draws": "per-evaluation"}
            if env["kind"] in REDRAWN_KINDS and env.get("noise", "none") != "none"
            else env
            for env in environments
        ]
    return ExperimentSpec.create(
        name=quick_name(name, quick, variant),
        description=description,
        environments=environments,
        policies=policies,
        horizons=horizon_grid(n_arms, t_max, QUICK_HORIZONS if quick else FULL_HORIZONS),
        seeds=QUICK_SEEDS if quick else FULL_SEEDS,
    )


def _sigma_label(sigma: float) -> str:
    return "noise-free" if sigma == 0 else f"σ={sigma:g}"


def fig1(quick: bool, variant: str = "paper") -> ExperimentSpec:
    t_max = 5_000 if quick else 20_000
    env = {
        "kind": "single-peaked",
        "label": f"instance 3, {_sigma_label(FIG1_SIGMA)}",
        "instance": 3,
        "length": t_max,
        **noise(FIG1_SIGMA),
    }
    return _spec(
        "lindner-fig1",
        "Lindner et al. Figure 1: single-peaked instance 3.",
        [env],
        per_environment_policies([env], [FIG1_SIGMA], [2 * FIG1_SIGMA], variant),
        2,
        t_max,
        quick,
        variant,
    )


def single_peaked(quick: bool, variant: str = "paper") -> ExperimentSpec:
    t_max = 5_000 if quick else 20_000
    envs = []
    for instance in (1, 2, 3):
        for sigma in SINGLE_PEAKED_SIGMAS:
            envs.append(
                {
                    "kind": "single-peaked",
                    "label": f"instance {instance}, {_sigma_label(sigma)}",
                    "instance": instance,
                    "length": t_max,
                    **noise(sigma),
                }
            )
    sigmas = [s for _ in (1, 2, 3) for s in SINGLE_PEAKED_SIGMAS]
    policies = per_environment_policies(envs, sigmas, [2 * s for s in sigmas], variant)
    return _spec(
        "lindner-single-peaked",
        "Lindner et al. Figures 8–10.",
        envs,
        policies,
        2,
        t_max,
        quick,
        variant,
    )


def increasing(quick: bool, variant: str = "paper") -> ExperimentSpec:
    t_max = 3_000 if quick else 10_000
    envs = []
    for family, alphas in INCREASING_ALPHAS.items():
        for alpha in alphas:
            envs.append(
                {
                    "kind": "increasing",
                    "label": f"{family} α={alpha:g}",
                    "family": family,
                    "alpha": alpha,
                    "length": t_max,
                }
            )
    for sigma in NOISE_SIGMAS:  # Figure 7: inc_1, α = 0.1 with noise
        envs.append(
            {
                "kind": "increasing",
                "label": f"inc_1 α=0.1 {_sigma_label(sigma)}",
                "family": "inc_1",
                "alpha": 0.1,
                "length": t_max,
                **noise(sigma),
            }
        )
    sigmas = [0.0] * (len(envs) - len(NOISE_SIGMAS)) + list(NOISE_SIGMAS)
    policies = per_environment_policies(envs, sigmas, [2 * s for s in sigmas], variant, hkr=True)
    return _spec(
        "lindner-increasing",
        "Lindner et al. Figures 4–7 (Heidari et al.'s families).",
        envs,
        policies,
        2,
        t_max,
        quick,
        variant,
    )


def gaussian(quick: bool, variant: str = "paper") -> ExperimentSpec:
    """Fig. 11: SPO against "UCB", which the paper does not define. Ours is D-UCB with
    discount 1 and Garivier & Moulines' padding 2B√(ξ ln n / N) (ξ = 0.6); the authors' code
    pads with B√(ξ ln n / N), half as wide, which is why their UCB finds the best arm faster
    than SPO (the paper's claim) while ours is slower than SPO at σ ≥ 0.05 (the ledger has the
    numbers). ``variant = "authors-code"`` runs their UCB and their SPO (ε̄ = 2σ)."""
    t_max = 1_500 if quick else 5_000
    envs = [
        {"kind": "gaussian", "label": f"10 arms, {_sigma_label(s)}", "n_arms": 10, "sigma": s}
        for s in NOISE_SIGMAS
    ]
    policies: list[dict[str, Any]] = [
        {**spo_entry(s, 2 * s, variant), "label": "SPO", "environments": [env["label"]]}
        for s, env in zip(NOISE_SIGMAS, envs, strict=True)
    ]
    ucb: dict[str, Any] = {"kind": "ucb", "label": "UCB"}
    if variant == "authors-code":
        ucb["variant"] = variant
    policies.append(ucb)
    return _spec(
        "lindner-gaussian",
        "Lindner et al. Figure 11: stationary Gaussian bandits with "
        "random means U(0, 1), one instance per seed.",
        envs,
        policies,
        10,
        t_max,
        quick,
        variant,
    )


def fico(quick: bool, variant: str = "paper") -> ExperimentSpec:
    """Figs 3a, 12 and 13: score change (Fig. 12) and bank utility (Fig. 13), each noise-free,
    σ = 0.01 and σ = 0.05; Fig. 3a repeats a score-change panel (noise-free, we read). Bound
    max(0.1, 2σ) (:data:`FICO_MIN_NOISE_BOUND`). Applicants: instance seed 0 (the authors'
    preprocessing draws them unseeded, so their instance cannot be rebuilt)."""
    t_max = 1_000 if quick else 2_000
    envs = [
        {
            "kind": "fico",
            "label": f"{title}, {_sigma_label(s)}",
            "curve": curve,
            "length": t_max,
            **noise(s),
        }
        for curve, title in FICO_CURVES.items()
        for s in DATA_SIGMAS
    ]
    sigmas = [s for _ in FICO_CURVES for s in DATA_SIGMAS]
    bounds = [max(FICO_MIN_NOISE_BOUND, 2 * s) for s in sigmas]
    return _spec(
        "lindner-fico",
        "Lindner et al. Figures 3a, 12 and 13 (FICO credit lending).",
        envs,
        per_environment_policies(envs, sigmas, bounds, variant),
        4,
        t_max,
        quick,
        variant,
    )


def recommender(quick: bool, variant: str = "paper") -> ExperimentSpec:
    """Figs 3b and 14–16: the paper's instances A, B, C (the authors' seeds 1, 2, 3), each
    noise-free, σ = 0.01 and σ = 0.05; noise bound 2σ (noise-free SPO at σ = 0, as the
    authors' ``recommender_4`` bandits have no noise model). Fig. 3b repeats one of these
    panels; the paper does not say which."""
    t_max = 1_000 if quick else 3_000
    envs = [
        {
            "kind": "recommender",
            "label": f"instance {name}, {_sigma_label(s)}",
            "instance": name,
            "length": t_max,
            **noise(s),
        }
        for name in RECOMMENDER_NAMES
        for s in DATA_SIGMAS
    ]
    sigmas = [s for _ in RECOMMENDER_NAMES for s in DATA_SIGMAS]
    return _spec(
        "lindner-recommender",
        "Lindner et al. Figures 3b and 14–16 (recommender, the paper's instances A–C).",
        envs,
        per_environment_policies(envs, sigmas, [2 * s for s in sigmas], variant),
        4,
        t_max,
        quick,
        variant,
    )


def render(run_dir: Path, note: str = "", output: FigureOutput | None = None) -> list[Path]:
    """The paper's panels per environment: reward curves; per-step regret vs T; for two arms,
    pulls of arm 1 (index 0) vs T beside the optimal count; ``note`` on each PNG's face."""
    from impactbandits.experiments.rested_figures import render_rested

    return render_rested(run_dir, note=note, output=output)


def _figure(
    name: str,
    title: str,
    source: str,
    build: Any,
    claims: tuple[Claim, ...] = (),
    notes: dict[str, str] | None = None,
) -> Figure:
    return Figure(
        name=name,
        title=title,
        source=source,
        build=build,
        render=render,
        variants=("paper", "authors-code"),
        claims=claims,
        notes=notes or {},
    )


FIG1 = _figure(
    "lindner-fig1",
    "Single-peaked bandit where external-regret algorithms fail",
    "Lindner et al. 2021, Figure 1",
    fig1,
    FIG1_CLAIMS,
)
SINGLE_PEAKED = _figure(
    "lindner-single-peaked",
    "Synthetic single-peaked bandits, 4 noise levels",
    "Lindner et al. 2021, Appendix D.2, Figures 8–10",
    single_peaked,
    SINGLE_PEAKED_CLAIMS,
)
INCREASING = _figure(
    "lindner-increasing",
    "Increasing bandits (Heidari et al.) with HKR",
    "Lindner et al. 2021, Appendix D.1, Figures 4–7",
    increasing,
    INCREASING_CLAIMS,
)
GAUSSIAN = _figure(
    "lindner-gaussian",
    "Stationary Gaussian bandits: SPO vs UCB",
    "Lindner et al. 2021, Appendix D.3, Figure 11",
    gaussian,
    GAUSSIAN_CLAIMS,
    GAUSSIAN_NOTES,
)
FICO = _figure(
    "lindner-fico",
    "FICO credit lending (score change and bank utility), noise-free, σ = 0.01, 0.05",
    "Lindner et al. 2021, Figure 3a and Appendix D.4, Figures 12–13",
    fico,
    FICO_CLAIMS,
)
RECOMMENDER = _figure(
    "lindner-recommender",
    "Synthetic recommender system, the paper's instances A–C, noise-free, σ = 0.01, 0.05",
    "Lindner et al. 2021, Figure 3b and Appendix D.5, Figures 14–16",
    recommender,
    RECOMMENDER_CLAIMS,
)
