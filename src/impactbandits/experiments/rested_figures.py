"""Paper-style panels for rested-bandit experiments (Lindner et al. 2021; Patil et al. 2023).

Per environment: (a) the reward curves f_i(m); (b) per-step policy regret against the horizon T
with 95% bands; (c) for two arms, the pulls of the first arm against T beside the optimal count
(the counts of the exact optimal allocation for that T).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from impactbandits.experiments.figures import built_in_environment, save_png
from impactbandits.experiments.filenames import figure_stems
from impactbandits.experiments.plots import (
    draw_metric_vs_horizon,
    draw_pulls_vs_horizon,
    outside_legend,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput

__all__ = ["plot_curves", "render_rested"]


def plot_curves(curves: np.ndarray, ax: object, names: list[str] | None = None) -> object:
    """Reward curves f_i(m) against the pull m."""
    pulls = np.arange(1, curves.shape[1] + 1)
    for i, row in enumerate(curves):
        ax.plot(pulls, row, lw=1.2, label=names[i] if names else f"arm {i}")  # type: ignore[attr-defined]
    ax.set_xlabel("pull m")  # type: ignore[attr-defined]
    ax.set_ylabel("reward f(m)")  # type: ignore[attr-defined]
    ax.grid(alpha=0.3)  # type: ignore[attr-defined]
    outside_legend(ax)
    return ax


_TITLES = {"per_step_regret": "per-step policy regret", "competitive_ratio": "competitive ratio"}


def render_rested(
    run_dir: Path,
    metrics: tuple[str, ...] = ("per_step_regret",),
    pulls_panel: bool = True,
    note: str = "",
    output: FigureOutput | None = None,
) -> list[Path]:
    """One PNG per environment in ``RUN_DIR/figures/`` with the panels described above; one
    panel per entry of ``metrics`` (against T); ``note``: a second title line on each."""
    from impactbandits.experiments.aggregates import run_aggregates
    from impactbandits.oracles.rested import allocation

    # the statistics the report reads next (shared with it), not the tidy table
    spec, aggregates = run_aggregates(run_dir)
    t_max = max(spec.horizons)
    paths = []
    stems = figure_stems(e.label for e in spec.environments)
    for env_spec in spec.environments:
        env = built_in_environment(env_spec)
        curves = getattr(env, "curves", None)
        rows = aggregates.horizons.where(environment=env_spec.label)
        two_arms = pulls_panel and env.action_space.n == 2 and curves is not None
        panels = 1 + len(metrics) + int(two_arms)
        fig = Figure(figsize=(5 * panels, 3.8), layout="constrained")
        axes = fig.subplots(1, panels)
        if curves is not None:
            plot_curves(curves[:, :t_max], axes[0], getattr(env, "groups", None))
            axes[0].set_title("reward curves")
        else:
            axes[0].text(
                0.5,
                0.5,
                "stationary arms\n(random means per seed)",
                ha="center",
                va="center",
                transform=axes[0].transAxes,
            )
            axes[0].set_axis_off()
        for position, metric in enumerate(metrics, start=1):
            draw_metric_vs_horizon(rows, axes[position], metric=metric)
            axes[position].set_title(_TITLES.get(metric, metric))
        if two_arms:
            # memoised by the curves: the oracle's (serial runs) or computed once per instance
            counts = allocation(np.asarray(curves)[:, :t_max]).counts
            horizons = np.asarray(spec.horizons)
            optimal = pd.DataFrame({"horizon": horizons, "pulls": counts[horizons, 0]})
            draw_pulls_vs_horizon(rows, axes[-1], arm=0, optimal=optimal)
            axes[-1].set_title("pulls of arm 0 (the paper's arm 1)")
        fig.suptitle(f"{spec.name}: {env_spec.label}" + (f"\n{note}" if note else ""))
        paths.append(save_png(fig, run_dir, f"{spec.name}-{stems[env_spec.label]}", output))
    return paths
