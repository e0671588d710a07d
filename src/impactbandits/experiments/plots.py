"""Plots from the tidy table (``plot_*``) or from statistics over seeds (``draw_*``: the report
draws those it reads from the store, :mod:`~impactbandits.experiments.aggregates`); the
``plot_*`` functions take the statistics of the table's rows
(:func:`~impactbandits.experiments.stats.table_stats`) and draw them the same way. Every
function draws on a given ``ax`` and never calls ``show()``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import EngFormatter, MaxNLocator

from impactbandits.experiments.stats import Stats, table_stats

__all__ = [
    "axis_label",
    "contrast",
    "draw_metric_vs_horizon",
    "draw_metric_vs_time",
    "draw_pulls_vs_horizon",
    "is_count",
    "luminance",
    "outside_legend",
    "plot_metric_vs_horizon",
    "plot_metric_vs_time",
    "plot_pulls_vs_horizon",
    "readable_ticks",
    "text_colour",
]

_LABELS = {
    "regret": "regret",
    "per_step_regret": "regret / T",
    "reward": "cumulative reward",
    "expected_reward": "cumulative expected reward",
    "switches": "switches",
    "competitive_ratio": "OPT(T) / ALG(T)",
    "phase_switches": "switches between policies",
    "realised_regret": "realised regret",
    "lookahead_regret": "lookahead regret",
    "average_utility": "average utility",
}


def axis_label(metric: str) -> str:
    """A reader's label for a tidy-table column on an axis, never its identifier:
    ``"per_step_regret"`` → ``"regret / T"``, ``"pulls_2"`` → ``"pulls of arm 2"``,
    ``"phase_explore"`` → ``"share of rounds in phase explore"``, any other name with its
    underscores as spaces."""
    if metric in _LABELS:
        return _LABELS[metric]
    if metric.startswith("pulls_") and metric[6:].isdigit():
        return f"pulls of arm {metric[6:]}"
    if metric.startswith("phase_"):
        return f"share of rounds in phase {metric[6:].replace('_', ' ')}"
    return metric.replace("_", " ")


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


def luminance(colour: Any) -> float:
    """WCAG 2 relative luminance of a Matplotlib colour (0: black, 1: white)."""
    from matplotlib.colors import to_rgb

    channels = np.asarray(to_rgb(colour), dtype=float)
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast(a: Any, b: Any) -> float:
    """WCAG 2 contrast ratio of two colours, 1 (none) to 21 (black on white)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour(background: Any) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with ``background`` (text on a
    heat map's cell; either way at least 4.5:1, WCAG's level for small text)."""
    return "black" if contrast("black", background) >= contrast("white", background) else "white"


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


def _band(
    ax: Any, xs: np.ndarray, mean: np.ndarray, ci: np.ndarray, label: str, floor: float | None
) -> None:
    low = mean - ci if floor is None else np.maximum(mean - ci, floor)
    (line,) = ax.plot(xs, mean, label=label, lw=1.5)
    ax.fill_between(xs, low, mean + ci, color=line.get_color(), alpha=0.2, lw=0)


def _bands_by_policy(ax: Any, stats: Stats, x: str, metric: str) -> None:
    """One mean line with a confidence band per policy (in order of first appearance),
    ``metric`` against the key ``x`` of ``stats``; the band of a count (:func:`is_count`) is
    clipped at 0."""
    floor = 0.0 if is_count(metric) else None
    policies = stats.keys["policy"]
    xs = stats.keys[x].to_numpy(dtype=float)
    mean = stats.mean[metric].to_numpy(dtype=float)
    ci = stats.ci[metric].to_numpy(dtype=float)
    for policy in dict.fromkeys(policies.tolist()):
        rows = np.flatnonzero((policies == policy).to_numpy(dtype=bool))
        rows = rows[np.argsort(xs[rows], kind="stable")]
        _band(ax, xs[rows], mean[rows], ci[rows], str(policy), floor)


def _select(table: pd.DataFrame, environment: str | None) -> pd.DataFrame:
    if environment is None:
        return table
    return table[table["environment"] == environment]


def _finish(ax: Any, xlabel: str, ylabel: str, log_x: bool) -> Any:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if log_x:
        ax.set_xscale("log")
    readable_ticks(ax, "x")
    ax.grid(alpha=0.3)
    outside_legend(ax)
    return ax


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
    rows = data[data["time"] == data["horizon"]]
    stats = table_stats(rows, ("policy", "horizon"), [metric], level)
    return draw_metric_vs_horizon(stats, ax, metric, log_x=log_x)


def draw_metric_vs_horizon(
    stats: Stats,
    ax: Any,
    metric: str = "per_step_regret",
    environment: str | None = None,
    log_x: bool = False,
) -> Any:
    """:func:`plot_metric_vs_horizon` from statistics over seeds
    (:class:`~impactbandits.experiments.stats.Stats` grouped by policy and horizon, and
    environment if ``environment`` selects one), e.g. those the report reads from the store."""
    _bands_by_policy(ax, stats.where(environment=environment), "horizon", metric)
    return _finish(ax, "horizon T", axis_label(metric), log_x)


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
    stats = table_stats(longest, ("policy", "time"), [metric], level)
    return draw_metric_vs_time(stats, ax, metric, log_x=log_x)


def draw_metric_vs_time(
    stats: Stats,
    ax: Any,
    metric: str = "regret",
    environment: str | None = None,
    log_x: bool = False,
) -> Any:
    """:func:`plot_metric_vs_time` from statistics over seeds
    (:class:`~impactbandits.experiments.stats.Stats` grouped by policy and time, and
    environment if ``environment`` selects one; with ``run_horizon`` among the keys, the
    longest run of every policy)."""
    stats = stats.where(environment=environment)
    if "run_horizon" in stats.keys:
        runs = stats.keys.groupby("policy", observed=True)["run_horizon"].transform("max")
        stats = stats.take((stats.keys["run_horizon"] == runs).to_numpy())
    _bands_by_policy(ax, stats, "time", metric)
    return _finish(ax, "round t", axis_label(metric), log_x)


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
    rows = data[data["time"] == data["horizon"]]
    metric = f"pulls_{arm}"
    stats = table_stats(rows, ("policy", "horizon"), [metric])
    return draw_pulls_vs_horizon(stats, ax, arm, optimal=optimal)


def draw_pulls_vs_horizon(
    stats: Stats,
    ax: Any,
    arm: int = 0,
    environment: str | None = None,
    optimal: pd.DataFrame | None = None,
) -> Any:
    """:func:`plot_pulls_vs_horizon` from statistics over seeds (grouped by policy and
    horizon, and environment if ``environment`` selects one)."""
    metric = f"pulls_{arm}"
    _bands_by_policy(ax, stats.where(environment=environment), "horizon", metric)
    if optimal is not None:
        ax.plot(optimal["horizon"], optimal["pulls"], "k--", lw=1, label="optimal")
    return _finish(ax, "horizon T", f"pulls of arm {arm}", False)
