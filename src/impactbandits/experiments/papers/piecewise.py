"""``piecewise-stationary``: the change-point detectors against passively adaptive and
stationary policies, on Besson, Kaufmann, Maillard & Seznec (2022)'s Problems 1 and 2.

The experiment of Besson et al. 2022 ("Efficient change-point detection for tackling
piecewise-stationary bandits", JMLR 23(77), §6) as the code of its experiments runs it
(EmilieKaufmann/PiecewiseStationaryBandits@9047ec7, ``main_NonStat.jl`` and ``Benchmarks.jl``):
K = 3 Bernoulli arms, T = 20,000 rounds, N = 100 repetitions, Υ = 4 change points evenly spaced
(rounds 4,000, 8,000, 12,000, 16,000; ``--quick``: T = 2,000, 3 repetitions, the same
proportions). Problem 1 changes one arm at a time; Problem 2 every arm at every change point
(the same means as SMPyBandits' ``configuration_nonstationary.py`` Problems 1 and 2).

Policies, tuned as that code tunes them (it knows Υ and T): GLR-klUCB (local restarts,
δ = 1/√T, forced exploration α₀√k with α₀ = √(K ln T / T), tests every 10 observations and
every 10th split), CUSUM-UCB (Liu, Lee & Shroff 2018; M = 200, ε = 0.1, h = ln(T/Υ)) and M-UCB
(Cao et al. 2019; w = 200, b = √((w/2) ln(2KT²))), both with forced exploration α = α₀√Υ; D-UCB
and SW-UCB (Garivier & Moulines 2011; γ = 1 − √(Υ/T)/4, τ = 2√(T ln T / Υ)); Exp3S (Auer et
al. 2002, §8, hardness Υ + 1); and, stationary, Thompson sampling and UCB1. The code of the
experiments runs the klUCB versions of CUSUM, M-UCB, D-UCB and SW-UCB; the figure runs the UCB
versions the baselines are known by (their papers'). Regret against the best arm of every
round.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import (
    Figure,
    built_in_environment,
    load_run,
    quick_name,
    save_png,
)
from impactbandits.experiments.papers.piecewise_claims import CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

__all__ = ["FIGURE", "PROBLEMS", "build"]

FULL_T, QUICK_T = 20_000, 2_000
FULL_SEEDS, QUICK_SEEDS = 100, 3
CHECKPOINTS = 100
#: Change points as fractions of T (evenly spaced: ``ProblemUnif`` of the experiments' code).
FRACTIONS = (0.0, 0.2, 0.4, 0.6, 0.8)
#: Besson et al. 2022's Problems 1 and 2: the arms' means in each of the five segments.
PROBLEMS: dict[str, list[list[float]]] = {
    "Problem 1": [
        [0.3, 0.5, 0.9],
        [0.3, 0.2, 0.9],
        [0.3, 0.2, 0.1],
        [0.7, 0.2, 0.1],
        [0.7, 0.5, 0.1],
    ],
    "Problem 2": [
        [0.4, 0.5, 0.9],
        [0.5, 0.4, 0.7],
        [0.6, 0.3, 0.5],
        [0.7, 0.2, 0.3],
        [0.8, 0.1, 0.1],
    ],
}
#: Υ: the change points the tuned policies are told of.
BREAKPOINTS = len(FRACTIONS) - 1
#: CUSUM-UCB's M and ε, and M-UCB's window w, in the experiments' code.
CUSUM_WARMUP, CUSUM_DRIFT, MUCB_WINDOW = 200, 0.1, 200
#: GLR-klUCB's subsampling of the test (Δn = Δs = 10 in the experiments' code).
GLR_SUBSAMPLE = 10


def policies(horizon: int) -> list[dict[str, Any]]:
    """The line-up, tuned for ``horizon`` and :data:`BREAKPOINTS` change points."""
    k = len(next(iter(PROBLEMS.values()))[0])
    alpha0 = math.sqrt(k * math.log(horizon) / horizon)
    explore = min(1.0, alpha0 * math.sqrt(BREAKPOINTS))
    discount = 1.0 - math.sqrt(BREAKPOINTS / horizon) / 4.0
    window = math.floor(2.0 * math.sqrt(horizon * math.log(horizon) / BREAKPOINTS))
    return [
        {
            "kind": "glr-klucb",
            "label": "GLR-klUCB",
            "test_every": GLR_SUBSAMPLE,
            "split_every": GLR_SUBSAMPLE,
        },
        {
            "kind": "cusum-ucb",
            "label": "CUSUM-UCB",
            "breakpoints": BREAKPOINTS,
            "alpha": explore,
            "warmup": CUSUM_WARMUP,
            "drift": CUSUM_DRIFT,
        },
        {
            "kind": "m-ucb",
            "label": "M-UCB",
            "breakpoints": BREAKPOINTS,
            "window": MUCB_WINDOW,
            "gamma": explore,
        },
        {"kind": "d-ucb", "label": "D-UCB", "discount": discount},
        {"kind": "sw-ucb", "label": "SW-UCB", "window": window},
        {"kind": "exp3s", "label": "Exp3S", "hardness": BREAKPOINTS + 1},
        {"kind": "thompson", "label": "TS"},
        {"kind": "ucb1", "label": "UCB1"},
    ]


def build(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    horizon = QUICK_T if quick else FULL_T
    envs = [
        {
            "kind": "piecewise",
            "label": name,
            "means": means,
            "change_points": [int(f * horizon) for f in FRACTIONS],
            "length": horizon,
        }
        for name, means in PROBLEMS.items()
    ]
    return ExperimentSpec.create(
        name=quick_name("piecewise-stationary", quick),
        description="Besson et al. 2022, Problems 1 and 2: piecewise-stationary Bernoulli arms.",
        environments=envs,
        policies=policies(horizon),
        horizons=[horizon],
        seeds=QUICK_SEEDS if quick else FULL_SEEDS,
        checkpoints=CHECKPOINTS,
    )


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """Per problem: (a) the arms' means over the rounds, (b) cumulative regret against the
    round t with 95 % bands."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    paths = []
    for number, env_spec in enumerate(spec.environments):
        env = built_in_environment(env_spec)
        fig = MplFigure(figsize=(11, 4.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        curves = env.curves  # type: ignore[attr-defined]
        for arm, curve in enumerate(curves):
            left.plot(range(1, curve.size + 1), curve, label=f"arm {arm + 1}")
        left.set_xlabel("round t")
        left.set_ylabel("mean μ_i(t)")
        left.set_title("(a) the arms' means")
        left.legend(fontsize="small")
        plot_metric_vs_time(table, right, metric="regret", environment=env_spec.label)
        right.set_title("(b) cumulative regret")
        fig.suptitle(f"{spec.name}: {env_spec.label}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


FIGURE = Figure(
    "piecewise-stationary",
    "Change-point detectors vs passively adaptive and stationary policies",
    "Besson et al. 2022, §6 (Problems 1 and 2)",
    build,
    render,
    claims=CLAIMS,
)
