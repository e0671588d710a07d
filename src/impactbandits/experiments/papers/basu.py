"""Blocking bandits: the registered figure ``basu-blocking`` (Basu, Sen, Sanghavi & Shakkottai
2019, "Blocking Bandits", NeurIPS, the synthetic experiments). The fidelity
ledger: https://impactbandits.readthedocs.io/en/latest/fidelity/

Three instances of twenty Bernoulli arms (:class:`~impactbandits.envs.blocking.BlockingBandit`)
as the public replication of the paper's Section V builds them (tombijaoui/Sequential-Decision-
Making-Project; the paper's own text of the experiments could not be read, see the ledger):
means 0 = μ_20 < … < μ_1 with consecutive gaps drawn from U[0.01, 0.05], and delays drawn
uniformly from {1, …, 10} ("small"), from {11, …, 20} ("large"), or 10 for every arm
("fixed"); T = 10⁴, 250 runs. Our instances are drawn from ``instance_seed`` 0 (the
replication's seed 42 drives NumPy's legacy global generator, which we do not reproduce).
Regret against Oracle Greedy, the paper's benchmark (``oracle_greedy``).

A fourth instance is small enough for the exact optimum: three arms, μ = (0.6, 0.5, 0.4),
D = (4, 3, 2), where greedy earns 0.375 per round in the long run against the optimum's 0.475
(ours: the smallest greedy/optimum ratio over means in {0.2, …, 1} and delays in {1, …, 5}, with
0.771 for μ = (1, 0.9, 0.8)). It is run twice, with regret against Oracle Greedy and against
the exact optimum (``blocking_optimum``), so both regrets are drawn and the (1 − 1/e) guarantee
of greedy is checked on the stored optimum columns.

Policies: UCB Greedy (c = 8, the replication's constant) and, for contrast, two learners that
do not see availability (UCB1 and Thompson sampling): a pick of a blocked arm idles. ``--quick``:
T = 2,000, 5 runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.basu_claims import (
    CLAIMS,
    REGIMES,
    SMALL_GREEDY,
    SMALL_OPTIMUM,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

FULL_T, QUICK_T = 10_000, 2_000
K = 20
#: The replication's gap range U[K/2000, K/400] at K = 20.
GAPS = [0.01, 0.05]
SCALE: dict[str, Any] = {
    "horizons": ([FULL_T // 10, FULL_T], [QUICK_T // 10, QUICK_T]),
    "seeds": (250, 5),
    "checkpoints": 100,
}
#: The small instance with an exact optimum (module docstring).
SMALL = {"means": [0.6, 0.5, 0.4], "delays": [4, 3, 2]}
POLICIES: list[dict[str, Any]] = [
    {"kind": "ucb-greedy", "label": "UCB Greedy"},
    {"kind": "ucb1", "label": "UCB1 (blind to blocking)"},
    {"kind": "thompson", "label": "Thompson (blind to blocking)"},
]


def environments() -> list[dict[str, Any]]:
    random = {"kind": "blocking", "n_arms": K, "gap_range": GAPS, "instance_seed": 0}
    return [
        {**random, "label": REGIMES["small"], "delay_range": [1, 10]},
        {**random, "label": REGIMES["large"], "delay_range": [11, 20]},
        {**random, "label": REGIMES["fixed"], "delays": [10] * K},
        {"kind": "blocking", "label": SMALL_GREEDY, **SMALL},
        {"kind": "blocking", "label": SMALL_OPTIMUM, **SMALL, "oracle": "blocking_optimum"},
    ]


def build(quick: bool) -> ExperimentSpec:
    return scaled_spec(
        "basu-blocking",
        quick,
        description="Blocking bandits: UCB Greedy against Oracle Greedy and the optimum "
        "(Basu et al. 2019, synthetic experiments).",
        environments=environments(),
        policies=POLICIES,
        **SCALE,
    )


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """Regret against round t per instance: linear rounds, and rounds on a log axis (the
    paper's c log T growth is a straight line there)."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    paths = []
    for number, env in enumerate(spec.environments):
        fig = MplFigure(figsize=(12, 4.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        plot_metric_vs_time(table, left, metric="regret", environment=env.label)
        left.set_title("(a) regret")
        plot_metric_vs_time(table, right, metric="regret", environment=env.label, log_x=True)
        right.set_title("(b) regret, rounds on a log axis")
        fig.suptitle(f"{spec.name}: {env.label}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


BLOCKING = Figure(
    "basu-blocking",
    "UCB Greedy against Oracle Greedy and the exact optimum on blocking arms",
    "Basu, Sen, Sanghavi & Shakkottai 2019, synthetic experiments (Section V, set up as a public "
    "replication runs them)",
    build,
    render,
    claims=CLAIMS,
)
