"""Cella & Cesa-Bianchi (2020), "Stochastic bandits with delay-dependent payoffs" (AISTATS):
the registered figures (the fidelity ledger: https://impactbandits.readthedocs.io/en/latest/fidelity/).

* ``cella-fig2`` (Figure 2): 7 Bernoulli arms with baseline means {0, 1/3, 2/3, 4/5, 13/15,
  14/15, 1}, f(τ) = 0.999^τ, delays drawn uniformly from {1, …, 6} per repetition, unit cost per
  switch between ranking policies, 5 repetitions, T = 5·10⁵. π_low (δ = 0.1) and π_ucb against
  π_ghost, plus UCB1 over the arms as a delay-unaware baseline (not in the paper's figure).
  The arm ranking is revealed, as in the paper ("we implicitly assume that BanditRanker
  successfully ranked the arms").

  Switching cost of UCB1 over the arms: the paper charges a unit cost per switch between
  ranking policies (§8), i.e. per change of the playlist the learner streams. UCB1 does not
  play ranking policies; its "playlist" is the one arm it picks, so it is charged the same unit
  cost per change of arm (``arm_switching_cost`` of the environment, defaulting to
  ``switching_cost``). Before, it was charged nothing although it changes arm on most rounds.
* ``cella-fig3`` (Figure 3): two arms, μ_1 = 1, μ_2 = 13/15, f(1) = 0.3, f(2) = 0.25,
  d_1 = d_2 = 2 (so g(1) = g(2) = 0.70), with a unit switching cost (upper part) and without
  (lower part), T = 5·10⁵ — the paper does not state its horizon; this is ours.

Regret is in expected rewards net of switching costs (the paper plots expectations of the
sampled arms); the tidy table also has ``realised_regret``. ``--quick``: T = 2·10⁴, 3 repetitions.
Plots put the rounds on a log axis, as the authors' ``run.py`` does (``ax.set_xscale('log')``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.cella_claims import FIG2_CLAIMS, FIG3_CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
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


#: π_ucb with half of Auer et al.'s confidence width, beside the paper's constant in Figure 2.
HALF_WIDTH_LABEL = "π_ucb (width 0.5)"


def fig2(quick: bool) -> ExperimentSpec:
    env = {
        "kind": "delayed",
        "label": "7 arms, unit switching cost",
        "means": FIG2_MEANS,
        "decay": 0.999,
        "delay_range": [1, 6],
        "switching_cost": 1.0,
    }
    policies = [
        *LEARNERS,
        # drawn beside: the width at which π_ucb ties π_low (the paper's 'competitive')
        {"kind": "pi-ucb", "label": HALF_WIDTH_LABEL, "width_scale": 0.5},
        {"kind": "ucb1", "label": "UCB1 (arms)"},
    ]

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


def charged_switches(table: Any) -> Any:
    """The switches the environment charges: between ranking policies for the learners over
    them (``phase_switches``), changes of arm for arm-level learners (``switches``; see
    :class:`~impactbandits.envs.delay.DelayedPayoffBandit`, ``arm_switching_cost``)."""
    return table["phase_switches"].fillna(table["switches"])


def render(run_dir: Path, note: str = "", output: FigureOutput | None = None) -> list[Path]:
    """Per environment, rounds on a log axis as in the authors' plots: (a) regret of π_low and
    π_ucb against π_ghost; (b) if the figure has arm-level learners (UCB1 over the arms, whose
    regret is linear: ≈ 80× π_low's at T = 5·10⁵ on Figure 2) their regret beside the ranking
    learners' on a log y-axis, so that (a) stays readable; (c) charged switches (log y)."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    table = table.assign(charged_switches=charged_switches(table))
    ranking = table[table["phase_switches"].notna()]
    arm_level = table["phase_switches"].isna().any()
    paths = []
    for number, env in enumerate(spec.environments):
        fig = MplFigure(figsize=(16 if arm_level else 11, 4.2), layout="constrained")
        axes = list(fig.subplots(1, 3 if arm_level else 2))
        left = axes[0]
        plot_metric_vs_time(ranking, left, metric="regret", environment=env.label, log_x=True)
        left.set_title("(a) regret against π_ghost, ranking learners")
        left.axhline(0.0, color="k", lw=0.6)
        if arm_level:
            middle = axes[1]
            plot_metric_vs_time(table, middle, metric="regret", environment=env.label, log_x=True)
            middle.set_yscale("symlog", linthresh=100.0)
            middle.set_ylim(bottom=-100.0)
            middle.set_title("(b) all learners (log y)")
        right = axes[-1]
        plot_metric_vs_time(
            table, right, metric="charged_switches", environment=env.label, log_x=True
        )
        right.set_yscale("symlog", linthresh=10.0)
        right.set_ylim(bottom=0.0)
        right.set_ylabel("charged switches")
        right.set_title(
            "(c) charged switches (arm changes for UCB1)" if arm_level else "(b) policy switches"
        )
        title = f"{spec.name}: {env.label} — regret in expected reward net of switching costs"
        fig.suptitle(title + (f"\n{note}" if note else ""))
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


FIG2 = Figure(
    "cella-fig2",
    "π_low vs π_ucb (and UCB1) on 7 arms with switching costs",
    "Cella & Cesa-Bianchi 2020, Figure 2",
    fig2,
    render,
    claims=FIG2_CLAIMS,
    notes={
        "paper": "π_ucb at the paper's constant is not competitive with π_low here (the "
        "fidelity ledger); π_ucb with half the width, drawn beside, is"
    },
)
FIG3 = Figure(
    "cella-fig3",
    "Two optimal ranking policies: with and without switching cost",
    "Cella & Cesa-Bianchi 2020, Figure 3 and Fact 1",
    fig3,
    render,
    claims=FIG3_CLAIMS,
)
