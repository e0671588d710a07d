"""Report pages: no empty horizon panel for single-horizon runs; readable large tick labels."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import imread
from matplotlib.ticker import EngFormatter

from impactbandits import run_experiment
from impactbandits.experiments.plots import plot_metric_vs_horizon, plot_metric_vs_time
from impactbandits.experiments.report import write_report

from .conftest import small_spec


def _png_width(path):
    return imread(path).shape[1]


def test_single_horizon_report_has_no_horizon_panel(tmp_path):
    one = tmp_path / "one"
    many = tmp_path / "many"
    run_experiment(small_spec(horizons=[60], seeds=2), one, backend="serial")
    run_experiment(small_spec(horizons=[20, 60], seeds=2), many, backend="serial")
    write_report(one)
    write_report(many)
    # the CSV beside each figure holds the lines of its panels, read off the drawn figure
    single = pd.read_csv(one / "figures" / "b2.csv")
    double = pd.read_csv(many / "figures" / "b2.csv")
    assert sorted(single["panel"].unique()) == ["regret against the round (longest run)"]
    assert sorted(double["panel"].unique()) == [
        "per step regret against the horizon",
        "regret against the round (longest run)",
    ]
    # one panel (regret vs time) is narrower than the two-panel figure
    assert _png_width(one / "figures" / "b2.png") < _png_width(many / "figures" / "b2.png")


def _fake_trajectories(horizon: int) -> pd.DataFrame:
    times = np.linspace(horizon / 50, horizon, 50).astype(int)
    rows = [
        {
            "environment": "e",
            "policy": p,
            "seed": s,
            "time": t,
            "run_horizon": horizon,
            "horizon": horizon,
            "regret": 0.01 * t * (1 + s),
        }
        for p in ("a", "b")
        for s in range(3)
        for t in times
    ]
    return pd.DataFrame(rows)


def _overlaps(fig: Figure, ax) -> int:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    low, high = ax.get_xlim()
    boxes = [
        label.get_window_extent(renderer)
        for tick, label in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True)
        if label.get_visible() and label.get_text() and low <= tick <= high
    ]
    boxes.sort(key=lambda b: b.x0)
    return sum(1 for a, b in itertools.pairwise(boxes) if a.x1 > b.x0)


def test_large_round_ticks_do_not_overlap():
    # panels a third to a half of a page wide: with matplotlib's plain integer labels
    # ("100000", "150000", …) they collide at 3.0 in (T = 2·10⁵) and 3.7 in (T = 5·10⁵)
    # (checked with the previous plots.py)
    for width in (2.6, 3.0, 3.7, 5.5):
        for horizon in (200_000, 500_000, 2_000_000):
            fig = Figure(figsize=(width, 2.5), layout="constrained")
            ax = fig.subplots()
            plot_metric_vs_time(_fake_trajectories(horizon), ax, environment="e")
            assert isinstance(ax.xaxis.get_major_formatter(), EngFormatter)
            assert _overlaps(fig, ax) == 0, (width, horizon)
            labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            assert any(label.endswith(("k", "M")) for label in labels)


def test_horizon_panel_ticks_use_engineering_notation():
    table = _fake_trajectories(200_000)
    table["per_step_regret"] = table["regret"] / table["horizon"]
    table = table[table["time"] == table["horizon"]]
    other = table.assign(horizon=100_000, time=100_000)
    fig = Figure(figsize=(2.6, 2.5), layout="constrained")
    ax = fig.subplots()
    plot_metric_vs_horizon(pd.concat([other, table]), ax, environment="e")
    assert isinstance(ax.xaxis.get_major_formatter(), EngFormatter)
    assert _overlaps(fig, ax) == 0
