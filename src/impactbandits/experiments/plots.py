"""Plots from the tidy table. Every function draws on a given ``ax`` and never calls ``show()``."""

from __future__ import annotations

from typing import Any

import pandas as pd

from impactbandits.metrics import summarise

__all__ = ["plot_metric_vs_horizon", "plot_metric_vs_time", "plot_pulls_vs_horizon"]

_LABELS = {
    "regret": "regret",
    "per_step_regret": "regret / T",
    "reward": "cumulative reward",
    "expected_reward": "cumulative expected reward",
    "switches": "switches",
}


def _band(ax: Any, summary: pd.DataFrame, x: str, label: str) -> None:
    xs = summary[x].to_numpy(dtype=float)
    mean = summary["mean"].to_numpy(dtype=float)
    ci = summary["ci"].to_numpy(dtype=float)
    (line,) = ax.plot(xs, mean, label=label, lw=1.5)
    ax.fill_between(xs, mean - ci, mean + ci, color=line.get_color(), alpha=0.2, lw=0)


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
    data = data[data["time"] == data["horizon"]]
    for policy, group in data.groupby("policy", sort=False):
        summary = summarise(group, metric, by=("horizon",), level=level).sort_values("horizon")
        _band(ax, summary, "horizon", str(policy))
    ax.set_xlabel("horizon T")
    ax.set_ylabel(_LABELS.get(metric, metric))
    if log_x:
        ax.set_xscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_metric_vs_time(
    trajectories: pd.DataFrame,
    ax: Any,
    metric: str = "regret",
    environment: str | None = None,
    level: float = 0.95,
) -> Any:
    """``metric`` against the round t within the longest run of every policy, with a CI band.

    Needs the table with ``trajectories=True``.
    """
    data = _select(trajectories, environment)
    for policy, group in data.groupby("policy", sort=False):
        longest = group[group["run_horizon"] == group["run_horizon"].max()]
        summary = summarise(longest, metric, by=("time",), level=level).sort_values("time")
        _band(ax, summary, "time", str(policy))
    ax.set_xlabel("round t")
    ax.set_ylabel(_LABELS.get(metric, metric))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
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
    data = data[data["time"] == data["horizon"]]
    column = f"pulls_{arm}"
    for policy, group in data.groupby("policy", sort=False):
        summary = summarise(group, column, by=("horizon",)).sort_values("horizon")
        _band(ax, summary, "horizon", str(policy))
    if optimal is not None:
        ax.plot(optimal["horizon"], optimal["pulls"], "k--", lw=1, label="optimal")
    ax.set_xlabel("horizon T")
    ax.set_ylabel(f"pulls of arm {arm}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return ax
