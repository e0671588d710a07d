"""Rotting bandits: the registered figures ``rotting-abrupt`` (Seznec, Locatelli, Carpentier,
Lazaric & Valko 2019, "Rotting bandits are no harder than stochastic ones", AISTATS, Figure 2)
and ``rotting-smooth`` (the same arms decaying smoothly; ours). The fidelity
ledger: https://impactbandits.readthedocs.io/en/latest/fidelity/

Ten arms (:class:`~impactbandits.envs.rotting.RottingBandit`, ``"ten-arms"``): μ_i ∈ {0} ∪
{0.001·√10^j, j = 0..8}, worth μ_i for 1,000 pulls and −μ_i afterwards (abrupt) or decaying as
μ_i(2(1 + (m − 1)/1000)^{−1} − 1) (smooth); Gaussian noise σ = 1. Policies at the settings of
the authors' script (SMPyBandits ``Experiment/Seznec19a_Fig2``): FEWA (α = 0.06), RAW-UCB
(α = 1.4; Seznec et al. 2020), wSWA (α = 0.2; Levine et al. 2017), SW-UCB (τ = 200), D-UCB
(γ = 0.997) and UCB1. Our FEWA and RAW-UCB use the window grid 1.1 (their EFF versions'
windows; :mod:`impactbandits.policies.rotting`). Regret against the exact optimal allocation
(their greedy oracle). T = 25,000, 30 replications; ``--quick``: T = 3,000, 3 replications.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.rotting_claims import ABRUPT_CLAIMS, SMOOTH_CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

FULL_T, QUICK_T = 25_000, 3_000
SCALE: dict[str, Any] = {
    "horizons": ([FULL_T], [QUICK_T]),
    "seeds": (30, 3),
    "checkpoints": 100,
}
POLICIES: list[dict[str, Any]] = [
    {"kind": "fewa", "label": "FEWA"},
    {"kind": "raw-ucb", "label": "RAW-UCB"},
    {"kind": "swa", "label": "wSWA", "doubling": True},
    {"kind": "sw-ucb", "label": "SW-UCB", "window": 200},
    {"kind": "d-ucb", "label": "D-UCB", "discount": 0.997},
    {"kind": "ucb1", "label": "UCB1"},
]


def _build(name: str, decay: str, quick: bool) -> ExperimentSpec:
    env = {
        "kind": "rotting",
        "label": f"10 arms, {decay} decay after 1,000 pulls",
        "instance": "ten-arms",
        "decay": decay,
        "length": QUICK_T if quick else FULL_T,
    }
    return scaled_spec(
        name,
        quick,
        description=f"Rotting bandits: ten arms, {decay} decay (Seznec et al. 2019, Figure 2).",
        environments=[env],
        policies=POLICIES,
        **SCALE,
    )


def abrupt(quick: bool) -> ExperimentSpec:
    return _build("rotting-abrupt", "abrupt", quick)


def smooth(quick: bool) -> ExperimentSpec:
    return _build("rotting-smooth", "smooth", quick)


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """Regret against the round t (as their Figure 2), linear and with log-scaled regret."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    paths = []
    for number, env in enumerate(spec.environments):
        fig = MplFigure(figsize=(12, 4.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        plot_metric_vs_time(table, left, metric="regret", environment=env.label)
        left.set_title("(a) regret")
        plot_metric_vs_time(table, right, metric="regret", environment=env.label)
        right.set_yscale("symlog", linthresh=100.0)
        right.set_title("(b) regret, log scale")
        fig.suptitle(f"{spec.name}: {env.label}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


ABRUPT = Figure(
    "rotting-abrupt",
    "FEWA and RAW-UCB vs wSWA, SW-UCB, D-UCB and UCB1 on abruptly rotting arms",
    "Seznec et al. 2019, Figure 2 (RAW-UCB: Seznec et al. 2020)",
    abrupt,
    render,
    claims=ABRUPT_CLAIMS,
)
SMOOTH = Figure(
    "rotting-smooth",
    "The same policies on smoothly rotting arms",
    "impactbandits: Seznec et al. 2019's Figure 2 arms with a smooth decay",
    smooth,
    render,
    claims=SMOOTH_CLAIMS,
)
