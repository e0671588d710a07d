"""Recovering bandits: the registered figure ``pikeburke-recovering`` (Pike-Burke &
Grünewälder 2019, "Recovering Bandits", NeurIPS; arXiv 1910.14354), the GP-sampled experiments
of the authors' code.

Only the abstract and introduction of the paper could be read here; the experiments are those
of the authors' code (github.com/ciarapb/recovering_bandits): ``setups/rgp_gp_l5_setup.py``,
``rgp_gp_l2_setup.py`` and ``rgp_gp_l05_setup.py`` draw K = 10 recovery functions from the GP
prior (squared-exponential kernel, v = 1, ℓ = 5, 2 and 0.5: "smooth", "medium", "spiky") with
``np.random.seed(5389)``, z_max = 30, noise σ = 0.1, T = 1000, and their notebooks run the
d-step lookahead learners dRGP-UCB and dRGP-TS for d = 1, 2, 3 (arms may repeat in a plan).
The environment draws the functions the authors' way (``sampler = "authors"``,
:mod:`impactbandits.envs.recovering`). Their repository has no script that runs these over many
replications (their parametric experiments use 500): we run 100. Regret is the paper's d-step
lookahead regret (metric ``lookahead_regret``); each (ℓ, d) pair is one environment with
``lookahead = d``, on which the two d-step learners run. UCB1, which ignores recovery, runs on
the d = 1 instances (the authors' baselines RogueUCB-Tuned and UCB-Z are not implemented).
``--quick``: T = 200, 3 replications. The side-by-side run of the authors' code is in the
fidelity ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.pikeburke_claims import (
    CLAIMS,
    LENGTHSCALES,
    LOOKAHEADS,
    METRIC,
    env_label,
    learner,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

__all__ = ["RECOVERING", "build", "environments", "policies"]

SCALE: dict[str, Any] = {
    "horizons": ([250, 500, 1000], [100, 200]),
    "seeds": (100, 3),
    "checkpoints": 50,
}
#: The authors' GP setups (module docstring).
GP_SETUP: dict[str, Any] = {"n_arms": 10, "z_max": 30, "sigma": 0.1, "instance_seed": 5389}


def environments() -> list[dict[str, Any]]:
    return [
        {
            "kind": "recovering",
            "label": env_label(scale, d),
            **GP_SETUP,
            "lengthscale": scale,
            "lookahead": d,
        }
        for d in LOOKAHEADS
        for scale in LENGTHSCALES
    ]


def policies() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in LOOKAHEADS:
        only = [env_label(scale, d) for scale in LENGTHSCALES]
        for kind in ("rgp-ucb", "rgp-ts"):
            out.append(
                {"kind": kind, "label": learner(kind, d), "lookahead": d, "environments": only}
            )
    out.append(
        {"kind": "ucb1", "label": "UCB1", "environments": [env_label(s, 1) for s in LENGTHSCALES]}
    )
    return out


def build(quick: bool) -> ExperimentSpec:
    return scaled_spec(
        "pikeburke-recovering",
        quick,
        description="Recovering bandits: dRGP-UCB and dRGP-TS on GP-sampled recovery functions "
        "(Pike-Burke & Grünewälder 2019, the authors' GP setups).",
        environments=environments(),
        policies=policies(),
        **SCALE,
    )


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """Per lengthscale, the d-step lookahead regret against the round for d = 1, 2, 3."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    labels = {e.label for e in spec.environments}
    paths = []
    for number, scale in enumerate(LENGTHSCALES):
        fig = MplFigure(figsize=(15, 4.2), layout="constrained")
        for ax, d in zip(fig.subplots(1, len(LOOKAHEADS)), LOOKAHEADS, strict=True):
            label = env_label(scale, d)
            if label in labels:
                plot_metric_vs_time(table, ax, metric=METRIC, environment=label)
            ax.set_title(f"d = {d}: {d}-step lookahead regret")
        fig.suptitle(f"{spec.name}: GP-sampled recovery functions, ℓ = {scale:g}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


RECOVERING = Figure(
    "pikeburke-recovering",
    "dRGP-UCB and dRGP-TS on GP-sampled recovery functions (d = 1, 2, 3)",
    "Pike-Burke & Grünewälder 2019, the GP-sampled experiments as the authors' code runs them",
    build,
    render,
    claims=CLAIMS,
)
