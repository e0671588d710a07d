"""Issue 29's table: the speed of everything around the compiled loops, every row measured in one
run against a reference from the same run.

    .venv/bin/python benchmarks/suite_table.py                # full scale (see below)
    .venv/bin/python benchmarks/suite_table.py --quick        # tiny sizes (to try it)
    .venv/bin/python benchmarks/suite_table.py --rows 3 4     # some rows only
    .venv/bin/python benchmarks/suite_table.py --skip-tang    # without row 1

Rows (full scale; ``--quick`` shrinks them and says so):

1. ``impactbandits reproduce tang-fig2`` and ``tang-fig3`` at full scale, CPU of the whole
   process tree, summed (target ≤ 70 CPU s together), against the same two figures with the
   compiled loops off (``IMPACTBANDITS_KERNELS=0``) at ``--seeds 2``, scaled linearly to the
   full seed count (start-up and report scaled too: the reference is if anything high).
2. Every figure with an ``authors-code`` variant: the run phase of ``reproduce NAME --quick
   --variant authors-code`` against the paper variant's (``run_experiment``, serial backend,
   one-seed warm-up excluded; target ≤ 2×), and the whole commands once as info; D-UCB's
   authors-code variant against its paper variant per round and replication on the 2-arm
   single-peaked instance 3 (σ = 0.05), T = 10⁴, R = 1 and 30, through ``kernels.simulate``.
3. ``impactbandits list``, ``describe ucb1``, ``describe lindner-fig1``: CPU and peak RSS of the
   command (targets ≤ 0.25 CPU s, ≤ 60 MB), against ``impactbandits --help`` beside each.
4. ``reproduce lindner-fig1 --quick`` with the defaults: CPU and peak RSS of the tree (targets
   ≤ 1.5 CPU s, ≤ 250 MB), against ``--backend process`` and ``--backend serial``.
5. Optimal-allocation computations per run of ``lindner-single-peaked --quick`` and
   ``lindner-fig1 --quick`` (``run_experiment``, serial; and the process backend with 2 workers,
   counted in the workers), against the distinct (environment, horizon) pairs of the cells
   (target: no more computations than pairs).
6. The report phase of ``lindner-single-peaked --quick`` (``figure.draw`` + ``write_report``,
   fresh process, imports excluded) against the way it was drawn before issue 29
   (``suite_workloads.old_render``: the tidy table, panels from it, ``optimal_allocation`` per
   environment; then ``write_report`` reading the statistics itself). Target ≤ 0.5×.
7. Dask against the process backend, full ``lindner-fig1``, run phase, 2 workers: CPU of the
   whole tree (Dask's nannies and workers included; sampled) and wall. Target ≤ +15 % CPU.
8. 1 → 2 workers, full ``lindner-fig1``, whole command wall, against the machine's ceiling
   measured in the same repeat (``engine_workloads.ceiling``). Target ≥ 0.9 × ceiling.
9. All registered figures at full scale, read from ``docs/fidelity/timings.toml`` (written by
   ``make figures``; not re-measured): the 21 figures without ``piecewise-stationary`` (target
   ≤ 600 CPU s) and all.

Measurements are medians of ``--repeat`` runs (default 3; 1 with ``--quick``) for rows 2-4 and
6-8, of ``--repeat-long`` runs (default 1) for row 1 and for a row-2 figure whose run phase takes
over ``LONG_CPU`` (30) CPU s; where a ratio is formed the two sides alternate (A B A B). Time on
2 idle cores: row 1 ≈ 10 min, rows 3-9 ≈ 10 min; row 2 a few minutes once the authors-code
variants run about as fast as the paper's, ≈ 30 min while some run 10-500× slower (2026-11-27).

Whole commands are timed from outside (``tree_measure.run_tree``: CPU of the whole process tree,
fork-server workers included, exactly; peak RSS of the tree, sampled, and of the main process
from GNU time); code sections inside a fresh interpreter (``tree_measure.run_workload`` and
``Section``). Nothing is written into runs/ or docs/: every run goes to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# benchmarks/ is not a package; importing the workload modules registers their workloads
import engine_table  # noqa: E402
import suite_workloads  # noqa: E402, F401
from engine_table import CLI, TIMINGS, Row, Table, _kernels, met  # noqa: E402
from suite_workloads import DUCB_INSTANCE, DUCB_SIGMA  # noqa: E402
from tree_measure import Measured, run_tree, run_workload  # noqa: E402

engine_table.WORK = 48  # the 'work' column of the shared Table, wider for these labels
ROWS = ("1", "2", "3", "4", "5", "6", "7", "8", "9")
TANG = ("tang-fig2", "tang-fig3")
TANG_REFERENCE_SEEDS = 2
KERNELS_OFF = {"IMPACTBANDITS_KERNELS": "0"}
EXCLUDED_FROM_21 = "piecewise-stationary"
GNU_TIME = Path("/usr/bin/time")
#: Row 2: a run phase longer than this (CPU s) is a long run (``--repeat-long`` pairs, no whole
#: command beside it).
LONG_CPU = 30.0


@dataclass
class Context:
    table: Table
    quick: bool
    repeat: int
    repeat_long: int
    scratch: Path


# == measuring =====================================================================================

Triple = tuple[float | None, float | None, float | None]


def command(args: Sequence[str], env: dict[str, str] | None = None) -> Measured:
    """``impactbandits ARGS`` to the end (``env``: extra variables, set through ``env(1)``,
    which execs the command in the same process); raises if it fails.

    The main process's peak RSS comes from GNU time (``%M``) when it is installed, not from
    ``run_tree``'s ``wait4``: on Linux a child's ``ru_maxrss`` includes the resident set of
    the process it was forked from, up to its ``exec`` (this table's own, 50-100 MB), which
    would hide a 20 MB command; time's child is forked from time (1 MB)."""
    prefix = ["/usr/bin/env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
    with tempfile.NamedTemporaryFile("r", suffix=".maxrss") as peak:
        timer = [str(GNU_TIME), "-f", "%M", "-o", peak.name] if GNU_TIME.exists() else []
        m = run_tree([*timer, *prefix, CLI, *args])
        if m.code != 0:
            tail = m.stderr.strip()[-300:]
            raise RuntimeError(f"impactbandits {' '.join(args[:3])} failed: {tail}")
        if timer:
            m.rss_main_mb = int(peak.read().split()[-1]) / 1024
    return m


def reproduce(
    name: str, out: Path, quick: bool, extra: Sequence[str] = (), env: dict[str, str] | None = None
) -> Measured:
    """``impactbandits reproduce NAME --out OUT`` (the folder removed afterwards)."""
    args = ["reproduce", name, "--out", str(out), "--no-progress", *["--quick"] * quick, *extra]
    try:
        return command(args, env)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def tree(m: Measured) -> tuple[float, float, float]:
    """CPU, wall and peak RSS of a whole command's process tree."""
    return (m.cpu, m.wall, max(m.rss_tree_mb, m.rss_main_mb))


def section(m: Measured) -> tuple[float, float, float]:
    """CPU, wall and peak RSS (of the tree) of a workload's timed section."""
    return (m.result["cpu"], m.result["wall"], m.result["rss_tree_mb"])


def medians(triples: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The median of each column (CPU, wall, MB) over repeats."""
    cpu, wall, mb = zip(*triples, strict=True)
    return (statistics.median(cpu), statistics.median(wall), statistics.median(mb))


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return "" if len(values) < 2 else " range " + "/".join(fmt.format(v) for v in sorted(values))


def quick_tag(ctx: Context) -> str:
    return " (quick)" if ctx.quick else ""


# == row 1: tang-fig2 + tang-fig3 ==================================================================


def row_tang(ctx: Context) -> None:
    from impactbandits.experiments.figures import get_figure

    seeds = {name: get_figure(name).spec(ctx.quick).seeds for name in TANG}
    ref_seeds = ["--seeds", str(TANG_REFERENCE_SEEDS)]
    ours: dict[str, list[Measured]] = {name: [] for name in TANG}
    ref: dict[str, list[Measured]] = {name: [] for name in TANG}
    out = ctx.scratch / "tang"
    for _ in range(ctx.repeat_long):  # A B A B per figure
        for name in TANG:
            ours[name].append(reproduce(name, out, ctx.quick))
            ref[name].append(reproduce(name, out, ctx.quick, ref_seeds, KERNELS_OFF))
    scale = "quick" if ctx.quick else "full"
    totals_ours, totals_ref = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    for i, name in enumerate(TANG):
        factor = seeds[name] / TANG_REFERENCE_SEEDS
        a = medians([tree(m) for m in ours[name]])
        b = medians([tree(m) for m in ref[name]])
        b = (b[0] * factor, b[1] * factor, b[2])
        for totals, x in ((totals_ours, a), (totals_ref, b)):
            totals[0] += x[0]
            totals[1] += x[1]
            totals[2] = max(totals[2], x[2])
        ctx.table.add(
            Row(
                f"1{'ab'[i]}",
                f"reproduce {name} ({scale}, {seeds[name]} seeds)",
                a,
                f"off, x{factor:g}",
                b,
                f"{a[0] / b[0]:.3f}x CPU",
                "(part of 1)",
                "info",
            )
        )
    ratio = totals_ours[0] / totals_ref[0]
    ctx.table.add(
        Row(
            "1",
            f"tang-fig2 + tang-fig3 ({scale}), summed",
            tuple(totals_ours),  # type: ignore[arg-type]
            f"off, x{seeds[TANG[0]] / TANG_REFERENCE_SEEDS:g}",
            tuple(totals_ref),  # type: ignore[arg-type]
            f"{ratio:.3f}x CPU",
            "<= 70 CPU s together",
            met(totals_ours[0] <= 70) + quick_tag(ctx),
        )
    )
    ctx.table.note(
        f"1: `impactbandits reproduce NAME --out TMP` ({scale} scale, default backend: auto, "
        f"which may run a small run such as the reference's in-process; all cores), CPU of "
        "the whole process tree (run + report), MB = peak RSS of the tree; "
        f"median of {ctx.repeat_long}. Reference ('off'): the same command with "
        f"IMPACTBANDITS_KERNELS=0 (no compiled loops) and --seeds {TANG_REFERENCE_SEEDS}, its "
        f"CPU and wall multiplied by seeds/{TANG_REFERENCE_SEEDS} (linear scaling of the whole "
        "command: start-up and report are scaled too, so the reference is if anything high); "
        "MB not scaled"
    )


# == row 2: authors-code variants ==================================================================


def long_pair(runs: dict[str, list[Measured]]) -> bool:
    """Whether a variant's first run phase took more than :data:`LONG_CPU` CPU seconds."""
    return any(ms and ms[0].result["cpu"] > LONG_CPU for ms in runs.values())


def authors_code_figures() -> list[str]:
    from impactbandits.experiments.figures import FIGURES, get_figure

    return [name for name in FIGURES if "authors-code" in get_figure(name).variants]


def row_authors_code(ctx: Context) -> None:
    figures = authors_code_figures()
    seeds = 1 if ctx.quick else None
    keys = iter("abcdefghijklmnopqrstuvwxyz")
    for name in figures:
        key = f"2{next(keys)}"
        try:
            runs: dict[str, list[Measured]] = {"paper": [], "authors-code": []}
            for attempt in range(ctx.repeat):  # A B A B
                for variant in runs:
                    runs[variant].append(
                        run_workload(
                            "variant_run", figure=name, variant=variant, quick=True, seeds=seeds
                        )
                    )
                if attempt + 1 >= ctx.repeat_long and long_pair(runs):
                    break  # a long run: measured --repeat-long times, as row 1
            ours = medians([section(m) for m in runs["authors-code"]])
            ref = medians([section(m) for m in runs["paper"]])
            ratio = ours[0] / ref[0]
            ratios = [
                a.result["cpu"] / p.result["cpu"]
                for a, p in zip(runs["authors-code"], runs["paper"], strict=True)
            ]
            whole = "whole command not run (--quick: first figure only)"
            if long_pair(runs):
                whole = f"whole command not run (run phase > {LONG_CPU:.0f} CPU s)"
            elif not ctx.quick or name == figures[0]:
                extra = ["--seeds", str(seeds)] if seeds else []
                out = ctx.scratch / "variant"
                paper = reproduce(name, out, True, extra)
                authors = reproduce(name, out, True, [*extra, "--variant", "authors-code"])
                whole = (
                    f"whole command {authors.cpu / paper.cpu:.2f}x ({authors.cpu:.1f} vs "
                    f"{paper.cpu:.1f} CPU s)"
                )
            ctx.table.add(
                Row(
                    key,
                    f"{name} authors-code{' (1 seed)' * ctx.quick}",
                    ours,
                    "paper",
                    ref,
                    f"{ratio:.2f}x CPU",
                    "<= 2x paper",
                    f"{met(ratio <= 2)}{spread(ratios)}; {len(ratios)} pairs; {whole}",
                )
            )
        except Exception as exc:  # one figure failing must not lose the others
            ctx.table.add(Row(key, f"{name} authors-code", status=f"error: {exc}"[:200]))
    ctx.table.note(
        f"2a-2{chr(ord('a') + len(figures) - 1)}: the figures with an authors-code variant "
        f"({', '.join(figures)}): the run phase (run_experiment of the --quick spec"
        f"{', 1 seed' * ctx.quick}, serial "
        "backend, after a one-seed warm-up in the same process: kernels loaded or compiled, "
        f"lazy imports done), median of {ctx.repeat} pairs, alternating paper / authors-code "
        f"(of {ctx.repeat_long} if a run takes over {LONG_CPU:.0f} CPU s: --repeat-long); "
        "'whole command' = `impactbandits reproduce NAME --quick [--variant authors-code]` once "
        "each (default backend, CPU of the tree; info), unless the run phase is that long"
        + (" (--quick: the first figure only)" if ctx.quick else "")
    )
    horizon = 2_000 if ctx.quick else 10_000
    for reps in (1, 5 if ctx.quick else 30):
        calls = max(1, 30 // reps)
        runs = {"paper": [], "authors-code": []}
        for _ in range(ctx.repeat):
            for variant in runs:
                runs[variant].append(
                    run_workload(
                        "ducb_rounds",
                        variant=variant,
                        horizon=horizon,
                        replications=reps,
                        calls=calls,
                    )
                )
        us = {v: statistics.median(m.result["us_per_round"] for m in ms) for v, ms in runs.items()}
        ratio = us["authors-code"] / us["paper"]
        compiled = {v: all(m.result["compiled"] for m in ms) for v, ms in runs.items()}
        path = "/".join("compiled" if compiled[v] else "readable" for v in runs)
        ctx.table.add(
            Row(
                f"2r{reps}",
                f"d-ucb authors-code T={horizon:g} R={reps}, per round",
                medians([section(m) for m in runs["authors-code"]]),
                "paper",
                medians([section(m) for m in runs["paper"]]),
                f"{ratio:.2f}x",
                "<= 2x paper",
                f"{met(ratio <= 2)} ({us['authors-code']:.3f} vs {us['paper']:.3f} us CPU per "
                f"round x rep.; paper/authors: {path})",
            )
        )
    ctx.table.note(
        f"2r: D-UCB (variant authors-code against paper) on the 2-arm single-peaked instance "
        f"{DUCB_INSTANCE} with Gaussian noise sigma = {DUCB_SIGMA}, one batch of R replications "
        f"through kernels.simulate (environment and policy built per call, as a worker does per "
        f"task), the batch simulated max(1, 30 // R) times in the timed section after an untimed "
        f"warm-up; us per round and replication = section CPU / (T x R x calls); 'compiled' is "
        f"cells.runs_compiled's answer for the pair. Before issue 29 the readable authors-code "
        f"loop took 32-34 us per round whatever R, the paper kernels 0.2-0.3 us"
    )


# == row 3: list and describe ======================================================================


def installed_bytecode(folder: Path) -> dict[str, str]:
    """The environment under which commands run the package with its bytecode compiled, as
    ``pip install`` leaves it: a copy of the package in ``folder``, compiled there by
    ``compileall`` and put first on ``PYTHONPATH`` (nothing is written into the source tree).
    A source checkout under ``PYTHONDONTWRITEBYTECODE`` compiles every module at every start."""
    import subprocess

    import impactbandits

    site = folder / "site"
    shutil.copytree(Path(impactbandits.__file__).parent, site / "impactbandits")
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(site)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return {"PYTHONPATH": str(site)}


def row_cli(ctx: Context) -> None:
    commands = {
        "3a": ["list"],
        "3b": ["describe", "ucb1"],
        "3c": ["describe", "lindner-fig1"],
    }
    env = installed_bytecode(ctx.scratch / "bytecode")
    helps: dict[str, list[Measured]] = {k: [] for k in commands}
    ours: dict[str, list[Measured]] = {k: [] for k in commands}
    cold: list[Measured] = []
    for _ in range(ctx.repeat):  # --help, then the command, for each command
        for key, args in commands.items():
            helps[key].append(command(["--help"], env))
            ours[key].append(command(args, env))
        cold.append(command(["list"], {"PYTHONDONTWRITEBYTECODE": "1"}))
    for key, args in commands.items():
        a = medians([tree(m) for m in ours[key]])
        b = medians([tree(m) for m in helps[key]])
        ok = a[0] <= 0.25 and a[2] <= 60
        ctx.table.add(
            Row(
                key,
                f"impactbandits {' '.join(args)}",
                a,
                "--help",
                b,
                f"{a[0] / b[0]:.2f}x CPU",
                "<= 0.25 CPU s, 60 MB",
                f"{met(ok)}{spread([m.cpu for m in ours[key]])}",
            )
        )
    a = medians([tree(m) for m in cold])
    b = medians([tree(m) for m in ours["3a"]])
    ctx.table.add(
        Row(
            "3d",
            "  list, no bytecode (a source checkout)",
            a,
            "3a",
            b,
            f"{a[0] / b[0]:.2f}x CPU",
            "- (info)",
            f"info{spread([m.cpu for m in cold])}",
        )
    )
    ctx.table.note(
        f"3: the whole command (stdout to a file), CPU of its process tree, MB = its peak RSS "
        f"({'GNU time' if GNU_TIME.exists() else 'wait4, floored at this process RSS'}); "
        f"the package's bytecode compiled first, as pip does at install (a compiled copy of the "
        f"package first on PYTHONPATH); `impactbandits --help` run just before each; median of "
        f"{ctx.repeat} (range: the command's CPU); 3d: `list` with no bytecode at all, every "
        f"module compiled from source as it is imported (PYTHONDONTWRITEBYTECODE=1, no cache)"
    )


# == row 4: lindner-fig1 --quick ===================================================================


def row_fig1_quick(ctx: Context) -> None:
    variants = {
        "default": [],
        "process": ["--backend", "process"],
        "serial": ["--backend", "serial"],
    }
    runs: dict[str, list[Measured]] = {k: [] for k in variants}
    out = ctx.scratch / "fig1-quick"
    for _ in range(ctx.repeat):  # A B C A B C
        for how, extra in variants.items():
            runs[how].append(reproduce("lindner-fig1", out, True, extra))
    ours = medians([tree(m) for m in runs["default"]])
    ok = ours[0] <= 1.5 and ours[2] <= 250
    for key, ref_name in (("4a", "process"), ("4b", "serial")):
        ref = medians([tree(m) for m in runs[ref_name]])
        ctx.table.add(
            Row(
                key,
                "reproduce lindner-fig1 --quick (defaults)",
                ours,
                ref_name,
                ref,
                f"{ours[0] / ref[0]:.2f}x CPU",
                "<= 1.5 CPU s, 250 MB",
                f"{met(ok)}{spread([m.cpu for m in runs['default']])}",
            )
        )
    ctx.table.note(
        f"4: `impactbandits reproduce lindner-fig1 --quick --out TMP` with no --backend, with "
        f"--backend process and with --backend serial (all cores: {os.cpu_count()}), run + "
        f"report, CPU of the whole process tree; MB = peak RSS of the tree (the sum sampled by "
        f"psutil every 0.2 s, or the main process's peak if larger); median of {ctx.repeat}, "
        "alternating"
    )


# == row 5: oracle computations ====================================================================


def row_oracle(ctx: Context) -> None:
    keys = iter("abcd")
    for figure in ("lindner-single-peaked", "lindner-fig1"):
        for backend, workers in (("serial", 1), ("process", 2)):
            key = f"5{next(keys)}"
            label = f"{figure} quick, {backend}" + (f" x{workers}" if workers > 1 else "")
            try:
                r = run_workload(
                    "oracle_count", figure=figure, quick=True, backend=backend, workers=workers
                ).result
            except Exception as exc:  # one failing count must not lose the others
                ctx.table.add(Row(key, label, status=f"error: {exc}"[:200]))
                continue
            others = [pid for pid in r["hooked"] if pid != r["main_pid"]]
            counted = backend == "serial" or bool(others)
            worst = max(r["per_curves"].values(), default=0)
            status = met(r["calls"] <= r["pairs"]) if counted else "not counted in workers"
            ctx.table.add(
                Row(
                    key,
                    f"{label}: OPT",
                    ratio=f"{r['calls']} / {r['pairs']} pairs",
                    target="<= (env, horizon) pairs",
                    status=f"{status} ({r['distinct_curves']} distinct curves, at most {worst} "
                    f"calls each; {r['environments']} env., {r['cells']} cells; calls per "
                    f"process {sorted(r['per_process'].values(), reverse=True)})",
                )
            )
    ctx.table.note(
        "5: run_experiment of the figure's --quick spec, calls of impactbandits.oracles."
        "allocation.optimal_allocation (wrapped; with the process backend the fork server "
        "imports suite_workloads, which wraps it there, so every worker appends its calls to a "
        "shared folder) against the distinct (environment, rounds) pairs of the spec's cells; "
        "distinct curves = distinct hashes of the curves' bytes given to it"
    )


# == row 6: paper figure + report ==================================================================

REPORT_FIGURE = "lindner-single-peaked"


def row_report(ctx: Context) -> None:
    base = ctx.scratch / "report"
    made = run_workload("make_run", figure=REPORT_FIGURE, quick=True, out=str(base / "run"))
    dirs = {how: base / how for how in ("new", "old")}
    for path in dirs.values():
        shutil.copytree(base / "run", path)
    runs: dict[str, list[Measured]] = {k: [] for k in dirs}
    for _ in range(ctx.repeat):  # A B A B
        for how, path in dirs.items():
            runs[how].append(
                run_workload("report_phase", run_dir=str(path), figure=REPORT_FIGURE, how=how)
            )
    ours = medians([section(m) for m in runs["new"]])
    ref = medians([section(m) for m in runs["old"]])
    ratio = ours[0] / ref[0]
    ratios = [
        n.result["cpu"] / o.result["cpu"] for n, o in zip(runs["new"], runs["old"], strict=True)
    ]
    ctx.table.add(
        Row(
            "6",
            f"{REPORT_FIGURE} --quick: draw + report",
            ours,
            "before (old)",
            ref,
            f"{ratio:.2f}x CPU",
            "<= 0.5x (halved)",
            f"{met(ratio <= 0.5)}{spread(ratios)}; {runs['new'][0].result['figures']} PNGs each",
        )
    )
    ctx.table.note(
        f"6: in a fresh process, after importing numpy, pandas, matplotlib and the library's "
        f"report, figure, plot, oracle modules (suite_workloads.REPORT_IMPORTS): new = "
        f"figure.draw(run_dir, 'paper') + write_report(run_dir, extra_figures=...), as "
        f"`reproduce` does; old = suite_workloads.old_render (render_rested before issue 29: "
        f"tidy_table, plot_metric_vs_horizon / plot_pulls_vs_horizon per environment, "
        f"optimal_allocation per environment, Figure.savefig) + write_report with the "
        f"statistics memo cleared (so it reads the store itself, as it did); MB = peak RSS of "
        f"the process; median of {ctx.repeat}, alternating, on copies of one run of "
        f"{REPORT_FIGURE} --quick (made in {made.result['wall']:.1f} s, serial)"
    )


# == row 7: Dask against process ===================================================================


def row_dask(ctx: Context) -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        ctx.table.add(
            Row("7", "dask vs process", status="skipped: pip install 'impactbandits[dask]'")
        )
        return
    seeds = 2 if ctx.quick else None
    runs: dict[str, list[Measured]] = {"process": [], "dask": []}
    for _ in range(ctx.repeat):  # A B A B
        for backend in runs:
            runs[backend].append(
                run_workload(
                    "backend_run",
                    figure="lindner-fig1",
                    quick=ctx.quick,
                    seeds=seeds,
                    workers=2,
                    backend=backend,
                )
            )
    ours = medians([section(m) for m in runs["dask"]])
    ref = medians([section(m) for m in runs["process"]])
    extra = ours[0] / ref[0] - 1
    outside = {b: statistics.median(m.cpu for m in ms) for b, ms in runs.items()}
    label = "lindner-fig1 " + ("quick, 2 seeds" if ctx.quick else "full")
    ctx.table.add(
        Row(
            "7",
            f"{label}, run phase: dask x2",
            ours,
            "process x2",
            ref,
            f"{100 * extra:+.0f} % CPU",
            "<= +15 % CPU",
            f"{met(extra <= 0.15)}{quick_tag(ctx)} (wall {ours[1] / ref[1]:.2f}x; whole "
            f"workload incl. imports {outside['dask']:.1f} vs {outside['process']:.1f} CPU s)",
        )
    )
    ctx.table.note(
        f"7: run_experiment(spec, out, backend=..., workers=2) alone, CPU of the workload's "
        f"process (Dask's scheduler and client run there) and of every process it starts "
        f"(Dask's nannies and workers, the fork server and its workers; psutil, every 0.1 s), "
        f"wall of the call; MB = peak RSS of the tree; median of {ctx.repeat}, alternating. "
        f"'whole workload' = the subprocess's whole tree measured from outside (imports, "
        f"distributed's included)"
    )


# == row 8: 1 -> 2 workers against the ceiling =====================================================


def row_workers(ctx: Context) -> None:
    extra = ["--backend", "process", *(["--seeds", "2"] if ctx.quick else [])]
    tasks, iterations = (8, 1_000_000) if ctx.quick else (32, 5_000_000)
    out = ctx.scratch / "workers"
    pairs: list[dict[int, Measured]] = []
    ceilings: list[dict[int, Measured]] = []
    for _ in range(ctx.repeat):  # the figure's pair, then the ceiling's, in every repeat
        pairs.append(
            {
                n: reproduce("lindner-fig1", out, ctx.quick, ["--workers", str(n), *extra])
                for n in (1, 2)
            }
        )
        ceilings.append(
            {
                n: run_workload("ceiling", workers=n, tasks=tasks, iterations=iterations)
                for n in (1, 2)
            }
        )
    speedups = [p[1].wall / p[2].wall for p in pairs]
    ceiling = [c[1].result["wall"] / c[2].result["wall"] for c in ceilings]
    shares = [s / c for s, c in zip(speedups, ceiling, strict=True)]
    share = statistics.median(shares)
    label = "lindner-fig1 " + ("quick, 2 seeds" if ctx.quick else "full")
    loads = "/".join(f"{p[1].load[0]:.1f}" for p in pairs)
    ctx.table.add(
        Row(
            "8",
            f"{label}: 2 workers (whole cmd)",
            medians([tree(p[2]) for p in pairs]),
            "1 worker",
            medians([tree(p[1]) for p in pairs]),
            f"{statistics.median(speedups):.2f}x wall",
            ">= 0.9 x ceiling",
            f"{met(share >= 0.9)}{quick_tag(ctx)} ({share:.2f} of the ceiling"
            f"{spread(shares)}; load {loads})",
        )
    )
    ctx.table.add(
        Row(
            "8c",
            f"  machine ceiling: {tasks} pure-Python tasks",
            medians([section(c[2]) for c in ceilings]),
            "1 worker",
            medians([section(c[1]) for c in ceilings]),
            f"{statistics.median(ceiling):.2f}x wall",
            "- (reference)",
            f"info{spread(ceiling)}",
        )
    )
    ctx.table.note(
        f"8: `impactbandits reproduce lindner-fig1 --backend process --workers N --out TMP`, the "
        f"whole command timed from outside; the ceiling (engine_workloads.ceiling: {tasks} equal "
        f"pure-Python tasks through the same kind of pool, nothing stored) measured right after "
        f"the pair in each of {ctx.repeat} repeats; 'of the ceiling' = median over repeats of "
        f"(speed-up / that repeat's ceiling speed-up); load = 1-min load average before each "
        f"1-worker run on {os.cpu_count()} cores"
    )


# == row 9: all figures, from timings.toml =========================================================


def row_figures(ctx: Context) -> None:
    from impactbandits.experiments.figures import FIGURES

    if not TIMINGS.exists():
        ctx.table.add(Row("9", "all figures, full scale", status="skipped (no timings.toml)"))
        return
    timings = {k: v for k, v in tomllib.loads(TIMINGS.read_text()).items() if k != "_meta"}
    subset = {k: v for k, v in timings.items() if k != EXCLUDED_FROM_21}

    def totals(rows: dict[str, Any]) -> tuple[float, float, float]:
        return (
            sum(float(v["cpu_s"]) for v in rows.values()),
            sum(float(v["wall_s"]) for v in rows.values()),
            max(float(v.get("peak_rss_mb", 0)) for v in rows.values()),
        )

    few, every = totals(subset), totals(timings)
    missing = sorted(set(FIGURES) - set(timings))
    ctx.table.add(
        Row(
            "9a",
            f"{len(subset)} figures (not {EXCLUDED_FROM_21}), full",
            few,
            "-",
            ratio=f"{few[0] / 60:.1f} CPU min",
            target="<= 600 CPU s",
            status=met(few[0] <= 600) + " (make figures)",
        )
    )
    ctx.table.add(
        Row(
            "9b",
            f"all {len(timings)}/{len(FIGURES)} figures, full",
            every,
            "-",
            ratio=f"{every[1] / 60:.1f} wall min",
            target="- (info)",
            status="info",
        )
    )
    dates = sorted({str(v.get("date", "?")) for v in timings.values()})
    heaviest = sorted(subset, key=lambda k: -float(subset[k]["cpu_s"]))[:4]
    ctx.table.note(
        f"9: not measured here: totals of docs/fidelity/timings.toml, written by `make figures` "
        f"on {', '.join(dates)}; MB = the largest figure's peak RSS; most CPU: "
        + ", ".join(f"{k} {float(subset[k]['cpu_s']):.0f} s" for k in heaviest)
        + (f"; missing figures: {', '.join(missing)}" if missing else "")
    )


# == main ==========================================================================================


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return "unknown CPU"


def guard(table: Table, key: str, step: Callable[[], Any]) -> None:
    """Run one row; a failing row prints its error (and its traceback on stderr), the table
    goes on."""
    try:
        step()
    except Exception as exc:
        traceback.print_exc()
        table.add(Row(key, "(failed)", status=f"error: {exc}"[:200]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (to try the script)")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs per measurement (default 3; quick 1)"
    )
    parser.add_argument(
        "--repeat-long", type=int, default=None, help="runs per measurement of row 1 (default 1)"
    )
    parser.add_argument("--skip-tang", action="store_true", help="without row 1")
    args = parser.parse_args(argv)
    rows = set(args.rows) - ({"1"} if args.skip_tang else set())
    table = Table()
    start, load = time.perf_counter(), os.getloadavg()
    warm = run_workload("warm_figures", figures=warm_list(rows)).result["wall"]
    with tempfile.TemporaryDirectory(prefix="suite-table-") as tmp:
        ctx = Context(
            table=table,
            quick=args.quick,
            repeat=args.repeat or (1 if args.quick else 3),
            repeat_long=args.repeat_long or 1,
            scratch=Path(tmp),
        )
        steps = {
            "1": row_tang,
            "2": row_authors_code,
            "3": row_cli,
            "4": row_fig1_quick,
            "5": row_oracle,
            "6": row_report,
            "7": row_dask,
            "8": row_workers,
            "9": row_figures,
        }
        for key in ROWS:
            if key in rows:
                print(f"row {key} ...", file=sys.stderr, flush=True)
                guard(table, key, lambda step=steps[key]: step(ctx))
    if args.skip_tang:
        table.add(Row("1", "tang-fig2 + tang-fig3", status="skipped (--skip-tang)"))
    end = os.getloadavg()
    scale = "--quick: reduced sizes, targets are for full scale" if args.quick else "full scale"
    header = "\n".join(
        [
            f"Issue 29 suite table ({scale}); {time.strftime('%Y-%m-%d %H:%M')}; the table took "
            f"{(time.perf_counter() - start) / 60:.1f} min wall (warm-up {warm:.0f} s)",
            f"{cpu_model()}, {os.cpu_count()} cores; load average at start "
            f"{load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, at end {end[0]:.2f}/{end[1]:.2f}/"
            f"{end[2]:.2f}; {_kernels()}",
        ]
    )
    print(table.render(header), flush=True)


def warm_list(rows: set[str]) -> list[tuple[str, str]]:
    """The (figure, variant) pairs whose compiled loops the rows measured from outside use (row
    2's workloads warm up in their own process, before the clock starts)."""
    pairs = []
    if "1" in rows:
        pairs += [(name, "paper") for name in TANG]
    if rows & {"4", "5", "7", "8"}:
        pairs.append(("lindner-fig1", "paper"))
    if rows & {"5", "6"}:
        pairs.append(("lindner-single-peaked", "paper"))
    return sorted(set(pairs))


if __name__ == "__main__":
    main()
