"""Plots from the tidy table. Every function draws on a given ``ax`` and never calls ``show()``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import EngFormatter, MaxNLocator

from impactbandits.metrics import summarise

__all__ = [
    "is_count",
    "outside_legend",
    "plot_metric_vs_horizon",
    "plot_metric_vs_time",
    "plot_pulls_vs_horizon",
    "readable_ticks",
]

_LABELS = {
    "regret": "regret",
    "per_step_regret": "regret / T",
    "reward": "cumulative reward",
    "expected_reward": "cumulative expected reward",
    "switches": "switches",
    "competitive_ratio": "OPT(T) / ALG(T)",
    "phase_switches": "switches between policies",
}


def readable_ticks(ax: Any, axis: str = "x") -> Any:
    """Short tick labels on a linear ``axis`` ("x" or "y"): engineering notation (200000 →
    "200k") and as many ticks as the axis length leaves room for, so that large rounds and
    horizons do not overlap. Log axes keep matplotlib's 10^k labels."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    scale = ax.get_xscale() if axis == "x" else ax.get_yscale()
    if scale == "linear":
        target.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10]))
        target.set_major_formatter(EngFormatter(sep=""))
    return ax


def is_count(metric: str) -> bool:
    """Metrics that cannot be negative (pulls, switches): their bands are clipped at 0."""
    return metric.startswith("pulls_") or metric.endswith("switches")


def outside_legend(ax: Any) -> Any:
    """The legend right of the axes, where it hides no curve (constrained layout makes
    room)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(
            fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
            frameon=False,
        )  # fmt: skip
    return ax


def _band(ax: Any, summary: pd.DataFrame, x: str, label: str, floor: float | None) -> None:
    xs = summary[x].to_numpy(dtype=float)
    mean = summary["mean"].to_numpy(dtype=float)
    ci = summary["ci"].to_numpy(dtype=float)
    low = mean - ci if floor is None else np.maximum(mean - ci, floor)
    (line,) = ax.plot(xs, mean, label=label, lw=1.5)
    ax.fill_between(xs, low, mean + ci, color=line.get_color(), alpha=0.2, lw=0)


def _bands_by_policy(ax: Any, data: pd.DataFrame, x: str, metric: str, level: float) -> None:
    """One mean line with a confidence band per policy, ``metric`` against ``x``; the band of
    a count (:func:`is_count`) is clipped at 0."""
    floor = 0.0 if is_count(metric) else None
    for policy, group in data.groupby("policy", sort=False, observed=True):
        summary = summarise(group, metric, by=(x,), level=level).sort_values(x)
        _band(ax, summary, x, str(policy), floor)


def _select(table: pd.DataFrame, environment: str | None) -> pd.DataFrame:
    if environment is None:
        return table
    return table[table["environment"] == environment]


def plot_metric_vs_horizon(
    table: pd.DataFrame,
    ax: Any,
    metric: str = "per_step_regret",
    environment: str | None = None,
    level: float = 0.95,
    log_x: bool = False,
) -> Any:
    """Mean of ``metric`` against the horizon T, one line per policy, with a CI band."""
    data = _select(table, environment)
    _bands_by_policy(ax, data[data["time"] == data["horizon"]], "horizon", metric, level)
    ax.set_xlabel("horizon T")
    ax.set_ylabel(_LABELS.get(metric, metric))
    if log_x:
        ax.set_xscale("log")
    readable_ticks(ax, "x")
    ax.grid(alpha=0.3)
    outside_legend(ax)
    return ax


def plot_metric_vs_time(
    trajectories: pd.DataFrame,
    ax: Any,
    metric: str = "regret",
    environment: str | None = None,
    level: float = 0.95,
    log_x: bool = False,
) -> Any:
    """``metric`` against the round t within the longest run of every policy, with a CI band;
    ``log_x`` puts the rounds on a log axis.

    Needs the table with ``trajectories=True``.
    """
    data = _select(trajectories, environment)
    longest = data[
        data["run_horizon"] == data.groupby("policy", observed=True)["run_horizon"].transform("max")
    ]
    _bands_by_policy(ax, longest, "time", metric, level)
    ax.set_xlabel("round t")
    ax.set_ylabel(_LABELS.get(metric, metric))
    if log_x:
        ax.set_xscale("log")
    readable_ticks(ax, "x")
    ax.grid(alpha=0.3)
    outside_legend(ax)
    return ax


def plot_pulls_vs_horizon(
    table: pd.DataFrame,
    ax: Any,
    arm: int = 0,
    environment: str | None = None,
    optimal: pd.DataFrame | None = None,
) -> Any:
    """Mean pulls of ``arm`` against T per policy; ``optimal`` (columns horizon, pulls) is drawn
    dashed for comparison (e.g. the optimal allocation of a rested bandit)."""
    data = _select(table, environment)
    _bands_by_policy(ax, data[data["time"] == data["horizon"]], "horizon", f"pulls_{arm}", 0.95)
    if optimal is not None:
        ax.plot(optimal["horizon"], optimal["pulls"], "k--", lw=1, label="optimal")
    ax.set_xlabel("horizon T")
    ax.set_ylabel(f"pulls of arm {arm}")
    readable_ticks(ax, "x")
    ax.grid(alpha=0.3)
    outside_legend(ax)
    return ax
