"""Cella & Cesa-Bianchi (2020), "Stochastic bandits with delay-dependent payoffs" (AISTATS):
the registered figures (REPRODUCTION.md §5).

* ``cella-fig2`` (Figure 2): 7 Bernoulli arms with baseline means {0, 1/3, 2/3, 4/5, 13/15,
  14/15, 1}, f(τ) = 0.999^τ, delays drawn uniformly from {1, …, 6} per repetition, unit cost per
  switch between ranking policies, 5 repetitions, T = 5·10⁵. π_low (δ = 0.1) and π_ucb against
  π_ghost, plus UCB1 over the arms as a delay-unaware baseline. The arm ranking is revealed, as
  in the paper ("we implicitly assume that BanditRanker successfully ranked the arms").
* ``cella-fig3`` (Figure 3): two arms, μ_1 = 1, μ_2 = 13/15, f(1) = 0.3, f(2) = 0.25,
  d_1 = d_2 = 2 (so g(1) = g(2) = 0.70), with a unit switching cost (upper part) and without
  (lower part), T = 5·10⁵ — the paper does not state its horizon; this is ours.

Regret is in expected rewards net of switching costs (the paper plots expectations of the
sampled arms); the tidy table also has ``realised_regret``. ``--quick``: T = 2·10⁴, 3 repetitions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure as MplFigure

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.spec import ExperimentSpec

FIG2_MEANS = [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0]
FULL_T, QUICK_T = 500_000, 20_000
FULL_SEEDS, QUICK_SEEDS = 5, 3
CHECKPOINTS = 100
#: horizons and seeds as (full, quick) pairs, for :func:`scaled_spec`
SCALE: dict[str, Any] = {
    "horizons": ([FULL_T], [QUICK_T]),
    "seeds": (FULL_SEEDS, QUICK_SEEDS),
    "checkpoints": CHECKPOINTS,
}
LEARNERS: list[dict[str, Any]] = [
    {"kind": "pi-low", "label": "π_low"},
    {"kind": "pi-ucb", "label": "π_ucb"},
]


def fig2(quick: bool) -> ExperimentSpec:
    env = {
        "kind": "delayed",
        "label": "7 arms, unit switching cost",
        "means": FIG2_MEANS,
        "decay": 0.999,
        "delay_range": [1, 6],
        "switching_cost": 1.0,
    }
    policies = [*LEARNERS, {"kind": "ucb1", "label": "UCB1 (arms)"}]

    return scaled_spec(
        "cella-fig2",
        quick,
        description="Cella & Cesa-Bianchi Figure 2.",
        environments=[env],
        policies=policies,
        **SCALE,
    )


def fig3(quick: bool) -> ExperimentSpec:
    base = {"kind": "delayed", "means": [1.0, 13 / 15], "delays": [2, 2], "f": [0.3, 0.25]}
    envs = [
        {**base, "label": "g(1) = g(2), unit switching cost", "switching_cost": 1.0},
        {**base, "label": "g(1) = g(2), no switching cost", "switching_cost": 0.0},
    ]
    return scaled_spec(
        "cella-fig3",
        quick,
        description="Cella & Cesa-Bianchi Figure 3.",
        environments=envs,
        policies=LEARNERS,
        **SCALE,
    )


def render(run_dir: Path) -> list[Path]:
    """Per environment: regret against π_ghost vs rounds, and policy switches vs rounds."""
    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    paths = []
    for number, env in enumerate(spec.environments):
        fig = MplFigure(figsize=(11, 4), layout="constrained")
        left, right = fig.subplots(1, 2)
        plot_metric_vs_time(table, left, metric="regret", environment=env.label)
        left.set_title("regret against π_ghost (expected, net of switching costs)")
        left.axhline(0.0, color="k", lw=0.6)
        learners = table[table["phase_switches"].notna()]
        plot_metric_vs_time(learners, right, metric="phase_switches", environment=env.label)
        right.set_title("switches between ranking policies")
        fig.suptitle(f"{spec.name}: {env.label}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}"))
    return paths


FIG2 = Figure(
    "cella-fig2",
    "π_low vs π_ucb (and UCB1) on 7 arms with switching costs",
    "Cella & Cesa-Bianchi 2020, Figure 2",
    fig2,
    render,
)
FIG3 = Figure(
    "cella-fig3",
    "Two optimal ranking policies: with and without switching cost",
    "Cella & Cesa-Bianchi 2020, Figure 3 and Fact 1",
    fig3,
    render,
)
