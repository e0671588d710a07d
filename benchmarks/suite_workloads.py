"""The workloads of ``suite_table.py`` (issue 29): each runs in its own subprocess
(``tree_measure.run_workload``) and returns its measurements as JSON (``Section.record``); and
row 6's reference, the paper-figure renderer as it was before issue 29 (:func:`old_render`).

Row 5 counts the calls of ``impactbandits.oracles.allocation.optimal_allocation``: the workload
wraps it (:func:`install_oracle_counter`), and with the process backend this module is added to
the fork server's preload with :data:`COUNT_ENV` set, so that the fork server wraps it too at
import and every worker forked from it appends its calls to the same folder (one file per
process). Nothing here is library code.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine_workloads import _engine, _pipeline
from tree_measure import Section, workload

#: A folder: when set, importing this module wraps ``optimal_allocation`` so that each call
#: appends the curves' digest to ``FOLDER/PID.calls`` (row 5, in the fork server's workers).
COUNT_ENV = "IMPACTBANDITS_SUITE_ORACLE_COUNTS"
#: Row 2's per-round environment: Lindner et al.'s 2-arm single-peaked instance 3 (Figure 1's)
#: with their Gaussian noise σ = 0.05 (Figure 1's level), so the replications differ.
DUCB_INSTANCE, DUCB_SIGMA = 3, 0.05


# == before any row ================================================================================


@workload
def warm_figures(figures: list[list[str]]) -> dict[str, Any]:
    """One seed of each (figure, variant)'s --quick spec, serial, unmeasured: the compiled
    loops the rows reach are loaded (or compiled by numba's JIT and cached) before any measured
    process needs them."""
    from impactbandits import run_experiment
    from impactbandits.experiments.figures import get_figure

    start = time.perf_counter()
    for name, variant in figures:
        spec = get_figure(name).spec(True, variant).replace(seeds=1)
        with tempfile.TemporaryDirectory() as out:
            run_experiment(spec, out, backend="serial")
    return {"wall": time.perf_counter() - start}


# == row 2 =========================================================================================


@workload
def variant_run(figure: str, variant: str, quick: bool, seeds: int | None) -> dict[str, Any]:
    """The run phase of ``figure`` in ``variant``: ``run_experiment`` on the serial backend,
    after an untimed one-seed warm-up in this process (kernels loaded, lazy imports done)."""
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(figure).spec(quick, variant)
    if seeds:
        spec = spec.replace(seeds=seeds)
    return _pipeline(spec, backend="serial").record()


@workload
def ducb_rounds(variant: str, horizon: int, replications: int, calls: int) -> dict[str, Any]:
    """D-UCB (``variant``) on the 2-arm single-peaked instance: ``calls`` batches of
    ``replications`` replications through ``kernels.simulate`` (environment and policy built
    per call, as a worker builds them per task), after an untimed warm-up; CPU per round and
    replication, and whether the pair takes the compiled loop."""
    from impactbandits.experiments.cells import runs_compiled
    from impactbandits.registry import build_environment, build_policy

    env = (
        "single-peaked",
        {"instance": DUCB_INSTANCE, "length": horizon, "noise": "gaussian", "sigma": DUCB_SIGMA},
    )
    policy = ("d-ucb", {"variant": variant})
    reps = list(range(replications))
    section, _ = _engine(env, policy, horizon, [reps] * calls)
    environment = build_environment(*env)
    built = build_policy(*policy)
    from impactbandits.core.random import POLICY, BatchRNG

    built.reset(environment.action_space, horizon, BatchRNG.from_key(0, (2, POLICY), [0]))
    rounds = horizon * replications * calls
    return section.record(
        us_per_round=1e6 * section.cpu / rounds,
        us_per_round_wall=1e6 * section.wall / rounds,
        compiled=bool(runs_compiled(environment, built)),
    )


# == row 5: oracle computations ====================================================================


def install_oracle_counter(folder: str) -> None:
    """Wrap ``optimal_allocation`` in this process: its module's attribute and every loaded
    module that imported the name (``from ... import optimal_allocation``). Each call appends
    the digest of the curves' bytes (and their shape) to ``FOLDER/PID.calls``."""
    import numpy as np

    from impactbandits.oracles import allocation as module

    original = module.optimal_allocation
    if getattr(original, "suite_counted", False):
        return

    def counted(curves: Any, *args: Any, **kwargs: Any) -> Any:
        data = np.ascontiguousarray(curves, dtype=np.float64)
        digest = hashlib.sha256(data.tobytes()).hexdigest()[:16]
        # the pid of the caller: workers forked from the fork server inherit this function
        with open(Path(folder) / f"{os.getpid()}.calls", "a") as out:
            out.write(f"{digest}:{'x'.join(map(str, data.shape))}\n")
        return original(curves, *args, **kwargs)

    counted.suite_counted = True  # type: ignore[attr-defined]
    module.optimal_allocation = counted  # type: ignore[assignment]
    for loaded in list(sys.modules.values()):
        names = getattr(loaded, "__dict__", {})
        if names.get("optimal_allocation") is original:
            loaded.optimal_allocation = counted  # type: ignore[union-attr]
    (
        Path(folder) / f"{os.getpid()}.installed"
    ).touch()  # which processes wrapped it (the fork server too)


if os.environ.get(COUNT_ENV):  # imported by the fork server (its preload): wrap it there too
    install_oracle_counter(os.environ[COUNT_ENV])


@workload
def oracle_count(figure: str, quick: bool, backend: str, workers: int) -> dict[str, Any]:
    """Run ``figure``'s experiment with ``optimal_allocation`` counted in this process and (the
    process backend) in the fork server's workers; the calls per process and per distinct
    curves, and the distinct (environment, horizon) pairs of the spec's cells."""
    from impactbandits import run_experiment
    from impactbandits.experiments import backends
    from impactbandits.experiments.cells import expand
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(figure).spec(quick)
    cells = expand(spec)
    pairs = {(cell.environment.label, cell.rounds) for cell in cells}
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as out:
        os.environ[COUNT_ENV] = folder  # the fork server inherits it
        install_oracle_counter(folder)
        if backend == "process":
            preload = backends.preload
            # the fork server imports this module too; Python 3.11's fork server ignores the
            # sys.path it is given, so it finds the module through PYTHONPATH
            here = str(Path(__file__).resolve().parent)
            os.environ["PYTHONPATH"] = os.pathsep.join(
                [here, *filter(None, [os.environ.get("PYTHONPATH")])]
            )
            backends.preload = lambda: [*preload(), Path(__file__).stem]  # type: ignore[assignment]
        run_experiment(spec, out, backend=backend, workers=workers)
        calls: dict[str, list[str]] = {}
        for path in Path(folder).glob("*.calls"):
            calls[path.stem] = path.read_text().split()
        installed = sorted(p.stem for p in Path(folder).glob("*.installed"))
    every = [digest for digests in calls.values() for digest in digests]
    per_curves: dict[str, int] = {}
    for digest in every:
        per_curves[digest] = per_curves.get(digest, 0) + 1
    return {
        "calls": len(every),
        "per_process": {pid: len(d) for pid, d in calls.items()},
        "per_curves": per_curves,
        "distinct_curves": len(per_curves),
        "pairs": len(pairs),
        "environments": len(spec.environments),
        "cells": len(cells),
        "main_pid": str(os.getpid()),
        "hooked": installed,
    }


# == row 6: paper figure and report ================================================================

#: What both sides of row 6 import before the clock starts.
REPORT_IMPORTS = (
    "numpy",
    "pandas",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "impactbandits.experiments.figures",
    "impactbandits.experiments.report",
    "impactbandits.experiments.aggregates",
    "impactbandits.experiments.tidy",
    "impactbandits.experiments.plots",
    "impactbandits.experiments.rested_figures",
    "impactbandits.experiments.filenames",
    "impactbandits.experiments.store",
    "impactbandits.oracles.allocation",
    "impactbandits.oracles.rested",
    "impactbandits.registry",
)


@workload
def make_run(figure: str, quick: bool, out: str) -> dict[str, Any]:
    """Row 6's set-up: ``figure``'s run (no report) into ``out``, serial backend."""
    from impactbandits import run_experiment
    from impactbandits.experiments.figures import get_figure

    with Section() as section:
        run_experiment(get_figure(figure).spec(quick), out, backend="serial")
    return section.record()


@workload
def report_phase(run_dir: str, figure: str, how: str) -> dict[str, Any]:
    """The report phase of a finished run of ``figure`` (paper variant), imports excluded:
    ``how = "new"`` as ``impactbandits reproduce`` draws it now (``figure.draw`` then
    ``write_report``), ``"old"`` as it was drawn before issue 29 (:func:`old_render`, then
    ``write_report`` with nothing remembered, so that it reads the statistics itself)."""
    for name in REPORT_IMPORTS:
        importlib.import_module(name)
    from impactbandits.experiments import aggregates
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.report import write_report

    fig = get_figure(figure)
    path = Path(run_dir)
    with Section() as section:
        if how == "new":
            extra = fig.draw(path, "paper")
        else:
            extra = old_render(path, note=fig.notes.get("paper", ""))
            memo = getattr(aggregates, "AGGREGATES_MEMO", None)
            if memo is not None:  # nothing remembered: write_report reads the store itself
                memo.clear()
        write_report(path, extra_figures=extra)
    return section.record(figures=len(extra))


def old_render(
    run_dir: Path,
    metrics: tuple[str, ...] = ("per_step_regret",),
    pulls_panel: bool = True,
    note: str = "",
) -> list[Path]:
    """Row 6's reference: ``rested_figures.render_rested`` as it was before issue 29 (the
    renderer of lindner-single-peaked, lindner-fig1 and the other rested figures), step by
    step: the whole tidy table read, each environment's panels drawn from its rows with
    ``plot_metric_vs_horizon`` / ``plot_pulls_vs_horizon`` (statistics over seeds computed per
    panel), the optimal counts from ``optimal_allocation`` per environment (no memo), saved
    with ``Figure.savefig``. A benchmark reference, not library code."""
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from impactbandits.experiments.figures import built_in_environment
    from impactbandits.experiments.filenames import figure_stem
    from impactbandits.experiments.plots import plot_metric_vs_horizon, plot_pulls_vs_horizon
    from impactbandits.experiments.rested_figures import plot_curves
    from impactbandits.experiments.store import Store
    from impactbandits.experiments.tidy import tidy_table
    from impactbandits.oracles import allocation as oracle

    titles = {"per_step_regret": "per-step policy regret", "competitive_ratio": "competitive ratio"}
    with Store.open_existing(run_dir) as store:  # load_run
        spec = store.spec()
    table = tidy_table(run_dir)
    t_max = max(spec.horizons)
    paths = []
    for env_spec in spec.environments:
        env = built_in_environment(env_spec)
        curves = getattr(env, "curves", None)
        rows = table[table["environment"] == env_spec.label]
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
            plot_metric_vs_horizon(rows, axes[position], metric=metric)
            axes[position].set_title(titles.get(metric, metric))
        if two_arms:
            allocation = oracle.optimal_allocation(np.asarray(curves)[:, :t_max])
            horizons = np.asarray(spec.horizons)
            optimal = pd.DataFrame({"horizon": horizons, "pulls": allocation.counts[horizons, 0]})
            plot_pulls_vs_horizon(rows, axes[-1], arm=0, optimal=optimal)
            axes[-1].set_title("pulls of arm 0 (the paper's arm 1)")
        fig.suptitle(f"{spec.name}: {env_spec.label}" + (f"\n{note}" if note else ""))
        path = (
            Path(run_dir) / "figures" / "paper" / f"{spec.name}-{figure_stem(env_spec.label)}.png"
        )
        path.parent.mkdir(parents=True, exist_ok=True)  # the old figures.save_png
        title = fig.get_suptitle()
        fig.savefig(path, dpi=100, metadata={"Title": title} if title else None)
        paths.append(path)
    return paths


# == row 7: the run phase on a given backend =======================================================


@workload
def backend_run(
    figure: str, quick: bool, seeds: int | None, workers: int, backend: str
) -> dict[str, Any]:
    """``run_experiment`` of ``figure`` alone (no report) on ``backend`` with ``workers``
    workers; CPU of this process and of every process it starts (Dask's scheduler runs in this
    process, its nannies and workers are children), sampled."""
    from impactbandits import run_experiment
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(figure).spec(quick)
    if seeds:
        spec = spec.replace(seeds=seeds)
    if backend == "dask":
        import distributed  # noqa: F401  (its import is not the run phase's)
    with tempfile.TemporaryDirectory() as out, Section(children=True) as section:
        run_experiment(spec, out, backend=backend, workers=workers)
    return section.record()
