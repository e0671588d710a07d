"""``report.html``: PNG figures and a summary table for a run directory.

One figure per environment, ``RUN_DIR/figures/<stem>.png`` with
:func:`~impactbandits.experiments.filenames.figure_stem` (unique and stable per label); paper
renderers write theirs under ``RUN_DIR/figures/paper/``, so the two never meet.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from impactbandits.experiments.filenames import figure_stems
from impactbandits.experiments.plots import plot_metric_vs_horizon, plot_metric_vs_time
from impactbandits.experiments.store import Store
from impactbandits.experiments.tidy import (
    Seeds,
    read_table,
    seed_limit,
    store_coverage,
    warn_coverage,
)
from impactbandits.metrics import summarise

__all__ = ["longest_cells", "summary_table", "write_report"]


SUMMARY_METRICS = ("reward", "regret", "per_step_regret", "switches")


def summary_table(table: pd.DataFrame, metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """Per environment and policy, at the largest horizon: mean ± CI of ``metrics``
    (``pulls`` expands to one column per arm, ``phases`` to the phase shares)."""
    columns: list[str] = []
    for metric in metrics:
        if metric == "pulls":
            columns += [c for c in table.columns if c.startswith("pulls_")]
        elif metric == "phases":
            columns += [c for c in table.columns if c.startswith("phase_")]
        elif metric in table.columns:
            columns.append(metric)
    rows = []
    last = table[
        table["horizon"] == table.groupby("environment", observed=True)["horizon"].transform("max")
    ]
    for (env, policy), group in last.groupby(["environment", "policy"], sort=False, observed=True):
        row = {
            "environment": env,
            "policy": policy,
            "horizon": int(group["horizon"].iloc[0]),
            "seeds": int(group["seed"].nunique()),
        }
        for metric in columns:
            if group[metric].notna().any():
                s = summarise(group, metric, by=("policy",)).iloc[0]
                row[metric] = f"{s['mean']:.4g} ± {s['ci']:.2g}"
            else:
                row[metric] = ""
        rows.append(row)
    return pd.DataFrame(rows)


def longest_cells(store: Store, seeds: int | None) -> set[str]:
    """Per environment and policy, the cells of the longest run with results (seeds below
    ``seeds``): the rows :func:`~impactbandits.experiments.plots.plot_metric_vs_time` draws."""
    stored = {cell for cell, seed in store.finished() if seeds is None or seed < seeds}
    cells = [c for c in store.cells() if c["cell"] in stored]
    rounds: dict[tuple[str, str], int] = {}
    for c in cells:
        pair = (c["environment"], c["policy"])
        rounds[pair] = max(rounds.get(pair, 0), c["rounds"])
    return {c["cell"] for c in cells if c["rounds"] == rounds[c["environment"], c["policy"]]}


def write_report(
    run_dir: str | Path, extra_figures: Sequence[Path] = (), seeds: Seeds = None
) -> Path:
    """Write ``RUN_DIR/report.html`` (and ``RUN_DIR/figures/*.png``); return its path.

    ``seeds`` as in :func:`~impactbandits.experiments.tidy.tidy_table` (``"all"``: every stored
    seed); the page states the seeds shown and stored, and the same facts are warned
    (:class:`~impactbandits.experiments.store.StoreWarning`) as by ``tidy_table``."""
    run_dir = Path(run_dir)
    with Store.open_existing(run_dir) as store:
        store.check()
        spec = store.spec()
        coverage = store_coverage(store, spec, seeds)
        warn_coverage(coverage)
        table = read_table(store, spec, seeds=seeds)
        # the time panels show the longest run of every policy: read only those trajectories
        longest = longest_cells(store, seed_limit(spec, seeds))
        trajectories = read_table(store, spec, trajectories=True, seeds=seeds, cells=longest)
    figures_dir = run_dir / "figures"
    figures_dir.mkdir(exist_ok=True)
    has_regret = table["regret"].notna().any()
    metric_h = "per_step_regret" if has_regret else "reward"
    metric_t = "regret" if has_regret else "reward"
    images: list[tuple[str, Path]] = []
    stems = figure_stems(str(env) for env in table["environment"].unique())
    for env in table["environment"].unique():
        # the horizon panel needs several horizons: with one it would be a single point
        single = table.loc[table["environment"] == env, "horizon"].nunique() < 2
        fig = Figure(figsize=(5.5 if single else 11, 4), layout="constrained")
        axes = fig.subplots(1, 1 if single else 2, squeeze=False)[0]
        plot_metric_vs_time(trajectories, axes[0], metric=metric_t, environment=env)
        axes[0].set_title(f"{env}: {metric_t} vs time (longest run)")
        if not single:
            wide = table["horizon"].max() >= 30 * table["horizon"].min()
            plot_metric_vs_horizon(table, axes[1], metric=metric_h, environment=env, log_x=wide)
            axes[1].set_title(f"{env}: {metric_h} vs horizon")
        path = figures_dir / f"{stems[str(env)]}.png"
        fig.savefig(path, dpi=110)
        images.append((str(env), path))
    summary = summary_table(table, spec.metrics) if len(table) else pd.DataFrame()
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(spec.name)}</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}"
        "img{max-width:100%}</style></head><body>",
        f"<h1>{html.escape(spec.name)}</h1>",
        f"<p>{html.escape(spec.description)}</p>" if spec.description else "",
        f"<p>{len(spec.environments)} environment(s), {len(spec.policies)} policies, "
        f"horizons {spec.horizons[0]}…{spec.horizons[-1]} ({len(spec.horizons)}), "
        f"{html.escape(coverage.describe())}, root seed {spec.seed}. "
        "Intervals: 95% Student-t over seeds.</p>",
        "<h2>Summary at the largest horizon</h2>",
        summary.to_html(index=False, escape=True) if len(summary) else "<p>No results yet.</p>",
    ]
    for title, path in [*((p.stem, p) for p in extra_figures), *images]:
        rel = path.relative_to(run_dir) if path.is_relative_to(run_dir) else path
        parts.append(f"<h2>{html.escape(title)}</h2><img src='{html.escape(rel.as_posix())}'>")
    parts.append("</body></html>")
    out = run_dir / "report.html"
    out.write_text("\n".join(parts), encoding="utf-8")
    return out
