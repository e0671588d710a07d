"""Issue 13's engine table: every row measured in one run, against a reference from the same run.

    .venv/bin/python benchmarks/engine_table.py                  # full scale (≈ 15-25 min CPU)
    .venv/bin/python benchmarks/engine_table.py --quick          # tiny parameters (a few min)
    .venv/bin/python benchmarks/engine_table.py --skip-figures   # without rows 4-5 (lindner-fig1)
    .venv/bin/python benchmarks/engine_table.py --rows 1 2       # some rows only

Rows (full scale; ``--quick`` shrinks every one and says so in the table):

1. UCB1 on a K-arm Bernoulli bandit (means evenly spaced in [0.1, 0.9]), T = 10⁴, 100 seeds,
   whole pipeline (spec → runner → SQLite store), serial backend, K = 2, 100, 1000: CPU per pull
   of K = 1000 against K = 2 (target ≤ 3×) and peak RSS (target ≤ 150 MB at K = 1000), with the
   kernels as the library runs them (built ahead of time by ``make kernels``); 1b' the same
   without compiled kernels (``IMPACTBANDITS_KERNELS=0``); 1b'' on numba's JIT
   (``IMPACTBANDITS_KERNELS=jit``) against the JIT's floor (a process that calls one tiny kernel).
2. One replication (R = 1) of Lindner et al.'s greedy and EXP3 (γ = 0.01), T = 2000, on
   single-peaked instance 3 (Figure 1's instance) *noise-free*: ours through the engine
   (``core.simulate.simulate``, one replication per call, as a worker runs an R = 1 batch) and
   through the whole pipeline (one replication per task, ``dedup`` off), against a plain-Python
   loop of the same algorithm (lists, ``math``, ``random``; written below) on the same curves.
   Greedy's pull counts must agree exactly with the loop (noise-free, deterministic).
3. SRUM (Ron et al.) against the authors' code (tomron/CSRviaMAB, their venv from
   ``benchmarks/fidelity/authors_env.sh ron``, their ``runSimulation`` through
   ``benchmarks/fidelity/ron.py``'s worker) at R = 2, 3, 5 seeds: K = 6, μ_i = 0.2 + 0.15(i − 1),
   λ = 0.4, f = f_lin, T = 10⁴. Theirs: sum over the R runs of their per-run CPU (their imports
   excluded); ours: the pipeline with R seeds and the engine alone (our imports excluded too).
4. ``impactbandits reproduce lindner-fig1`` at full scale (CPU of the whole process tree;
   target ≤ 120 CPU s), noisy SPO's share of the worker time (the store's per-replication
   ``seconds``) and, for "vectorised over the batch", the Python function calls of that SPO per
   round and replication (cProfile's count at T and 2T, R = 1 and 30; target 0).
5. ``impactbandits report`` on that run (peak RSS of the main process ≤ 200 MB) and on a copy of
   ``runs/full/lindner-single-peaked`` if it exists (≤ 1 GB); never written into runs/full.
6. Process backend, 1 and 2 workers (target >= 1.8x wall on an idle machine; the load average is
   printed beside it), each the median of 3 pairs of runs: 6a ``reproduce rested-benchmark
   --quick`` (the quick figure with the most simulation), the whole command; 6a' the same for
   ``lindner-fig1 --quick`` (start-up only, info); 6b 6a's run phase alone
   (``run_experiment``; the report phase is serial); 6c the run phase of full ``lindner-fig1``;
   6d the machine's ceiling (equal pure-Python tasks through the same kind of pool), measured
   in every repeat right after the others, and 6b/6c as a share of it. ``--quick``:
   lindner-fig1 --quick with 2 seeds, one pair.
7. All registered figures at full scale: totals read from ``docs/fidelity/timings.toml``, which
   ``make figures`` writes (not re-measured here).

How it measures: every workload runs in its own subprocess, so its peak RSS is its own. A whole
command (rows 4-6) is timed from outside: this process is a child subreaper
(``PR_SET_CHILD_SUBREAPER``), so the forkserver and its workers, orphaned when the command exits,
are reaped here and their CPU arrives exactly in ``getrusage(RUSAGE_CHILDREN)``; peak RSS of the
tree is sampled with psutil (``peak_rss.PeakRSS``), the main process's from ``wait4``. A code
section (rows 1-3, 6b, 6c) is timed inside its subprocess after the imports and (not 6b, 6c)
after an untimed warm-up run (one seed, or one other replication) in the same process, so lazy
imports and first-call costs (e.g. loading numba kernels) are left out, as the authors' per-run
timing leaves out theirs: ``process_time`` of that process plus, with the process backend, the
CPU of the processes it starts (psutil, sampled every 0.1 s and once at the end). Before any
row, one workload loads (or compiles) the kernels, so no measured process compiles them.
Peak RSS of a section's subprocess is the kernel's ``ru_maxrss`` (interpreter and imports
included). Wall seconds depend on the load of the shared machine; CPU seconds much less.

The measuring is in ``tree_measure.py``, the workloads (and row 3's reference) in
``engine_workloads.py``; this file holds the rows and the table.
8-10. The open compiled path (``engine_compiled.py``): a user's policy compiled against its NumPy
   form, and a pip install (numba's JIT) against the make install (the built module).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
# benchmarks/ is not a package; importing engine_workloads registers its workloads
from engine_compiled import row_pip, row_user_policy, row_user_world  # noqa: E402
from engine_workloads import (  # noqa: E402
    EXP3_GAMMA,
    SINGLE_PEAKED_INSTANCE,
    SRUM_FAIRNESS,
    SRUM_LAMBDA,
    authors_srum,
)
from tree_measure import WORKLOADS, Measured, run_tree, run_workload  # noqa: E402

CLI = str(Path(sys.executable).with_name("impactbandits"))
TIMINGS = ROOT / "docs" / "fidelity" / "timings.toml"
FULL_RUNS = ROOT / "runs" / "full"
#: Runs behind each row-1 CPU figure and pairs of 1- and 2-worker runs behind each row-6
#: speed-up (full scale): the median is shown.
REPEATS = 3


# == the table =====================================================================================


@dataclass
class Row:
    key: str
    work: str
    ours: tuple[float | None, float | None, float | None] = (None, None, None)  # CPU, wall, MB
    ref_name: str = ""
    ref: tuple[float | None, float | None, float | None] = (None, None, None)
    ratio: str = ""
    target: str = ""
    status: str = ""


WORK = 42  # width of the 'work' column


class Table:
    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.notes: list[str] = []

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  [{row.key}] {row.work}: {row.ratio} {row.status}", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", file=sys.stderr, flush=True)

    def render(self, header: str) -> str:
        def num(x: float | None) -> str:
            if x is None:
                return "-"
            if x >= 1000:
                return f"{x:,.0f}"
            if x >= 100:
                return f"{x:.0f}"
            return f"{x:.2f}" if x >= 0.01 or x == 0 else f"{x:.4f}"

        def mb(x: float | None) -> str:
            return "-" if x is None else f"{x:.0f}"

        def cols(cpu: str, wall: str, rss: str) -> str:
            return f"{cpu:>8} {wall:>8} {rss:>6}"

        left = f"{'row':<4} {'work':<{WORK}} "
        head = (
            f"{left}{cols('CPU s', 'wall s', 'MB')}  {'reference':<14} "
            f"{cols('CPU s', 'wall s', 'MB')}  {'ratio':<16} {'target':<22} status"
        )
        groups = f"{'':<{len(left)}}{'ours':-^24}  {'reference, same run':-^39}"
        lines = [header, "", groups, head, "-" * len(head)]
        for r in self.rows:
            ours = cols(num(r.ours[0]), num(r.ours[1]), mb(r.ours[2]))
            ref = cols(num(r.ref[0]), num(r.ref[1]), mb(r.ref[2]))
            lines.append(
                f"{r.key:<4} {r.work:<{WORK}} {ours}  {r.ref_name:<14} {ref}  {r.ratio:<16} "
                f"{r.target:<22} {r.status}"
            )
        lines.append("")
        lines += [f"- {n}" for n in self.notes]
        return "\n".join(lines)


def met(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def _triple(m: Measured, key: str = "rss_mb") -> tuple[float, float, float]:
    return (m.result["cpu"], m.result["wall"], m.result[key])


# -- row 1 ---------------------------------------------------------------------------------------


def row_ucb1(table: Table, quick: bool) -> None:
    horizon, seeds = (2_000, 10) if quick else (10_000, 100)
    runs = {}
    for arms in (2, 100, 1000):  # the median CPU of REPEATS runs: a K = 2 run is ~0.1 CPU s
        tries = [
            run_workload("bernoulli_pipeline", arms=arms, horizon=horizon, seeds=seeds)
            for _ in range(1 if quick else REPEATS)
        ]
        runs[arms] = sorted(tries, key=lambda m: m.result["cpu"])[len(tries) // 2]
    plain = {
        arms: run_workload(
            "bernoulli_pipeline", arms=arms, horizon=horizon, seeds=seeds, kernels=False
        )
        for arms in (2, 1000)
    }
    pulls = horizon * seeds
    two, big = runs[2], runs[1000]
    ratio = big.result["cpu"] / two.result["cpu"]
    scale = f"T={horizon:g} R={seeds}"
    table.add(
        Row(
            "1a",
            f"UCB1 {scale}: K=1000, CPU per pull",
            _triple(big),
            "K = 2",
            _triple(two),
            f"{ratio:.1f}x",
            "<= 3x",
            met(ratio <= 3),
        )
    )
    growth = big.result["rss_mb"] - two.result["rss_mb"]
    table.add(
        Row(
            "1b",
            f"UCB1 {scale}: peak RSS at K=1000",
            _triple(big),
            "K = 2",
            _triple(two),
            f"{growth:+.0f} MB",
            "<= 150 MB, flat in K",
            f"{met(big.result['rss_mb'] <= 150)} (flat: {growth:+.0f} MB)",
        )
    )
    plain_growth = plain[1000].result["rss_mb"] - plain[2].result["rss_mb"]
    table.add(
        Row(
            "1b'",
            "  the same, compiled kernels off",
            _triple(plain[1000]),
            "K = 2, off",
            _triple(plain[2]),
            f"{plain_growth:+.0f} MB",
            "<= 150 MB, flat in K",
            f"{met(plain[1000].result['rss_mb'] <= 150)} "
            f"({plain[1000].result['cpu'] / plain[2].result['cpu']:.0f}x CPU)",
        )
    )
    jit = run_workload("bernoulli_pipeline", arms=1000, horizon=horizon, seeds=seeds, kernels="jit")
    floor = run_workload("numba_floor")
    table.add(
        Row(
            "1b''",
            "  the same on numba's JIT (info)",
            _triple(jit),
            "JIT floor",
            _triple(floor),
            f"{jit.result['rss_mb'] - floor.result['rss_mb']:+.0f} MB",
            "(info)",
            f"{jit.result['cpu'] / big.result['cpu']:.1f}x 1b's CPU",
        )
    )
    hundred = runs[100]
    table.add(
        Row(
            "1c",
            f"UCB1 {scale}: K=100 (info)",
            _triple(hundred),
            "K = 2",
            _triple(two),
            f"{hundred.result['cpu'] / two.result['cpu']:.1f}x",
            "-",
            "info",
        )
    )
    rates = ", ".join(f"K={k}: {pulls / m.result['cpu']:,.0f}" for k, m in runs.items())
    table.note(
        f"1: whole pipeline (serial backend), means linspace(0.1, 0.9, K), 10 checkpoints, "
        f"the run with the median CPU of {1 if quick else REPEATS} (1b': one run); "
        f"pulls per CPU second {rates}; MB = peak RSS of the workload's process (ru_maxrss). "
        f"1a-1c run the kernels as the library runs them ({_kernels()}); 1b' is the same "
        "pipeline without them (the readable NumPy loop); 1b'' on numba's JIT "
        "(IMPACTBANDITS_KERNELS=jit), against the JIT's floor: a process that only calls our "
        "smallest kernel (kernels.checkpoints.record) through the JIT, whatever it simulates "
        "(numba's typing and target contexts, LLVM's library: why the kernels are built ahead "
        "of time, make kernels). UCB1 with >= 64 arms selects through buckets of equal "
        "(count, mean) (policies/ucb_buckets.py)"
    )


# -- row 2 ---------------------------------------------------------------------------------------


def row_r1(table: Table, quick: bool) -> None:
    horizon = 2_000
    engine_reps, pipeline_reps, plain_reps = (5, 5, 20) if quick else (30, 30, 50)
    for policy, tag in (("greedy", "2a"), ("exp3", "2b")):
        plain = run_workload(
            "rested_plain", policy=policy, horizon=horizon, replications=plain_reps
        )
        engine = run_workload(
            "rested_engine", policy=policy, horizon=horizon, replications=engine_reps
        )
        pipeline = run_workload(
            "rested_pipeline", policy=policy, horizon=horizon, replications=pipeline_reps
        )
        per_plain = (
            plain.result["cpu"] / plain_reps,
            plain.result["wall"] / plain_reps,
            plain.result["rss_mb"],
        )
        name = "greedy" if policy == "greedy" else f"EXP3 g={EXP3_GAMMA}"
        for sub, m, reps in (
            ("engine", engine, engine_reps),
            ("pipeline", pipeline, pipeline_reps),
        ):
            cpu = m.result["cpu"] / reps
            ratio = cpu / per_plain[0]
            table.add(
                Row(
                    f"{tag}{'e' if sub == 'engine' else 'p'}",
                    f"{name} T={horizon}, 1 rep via {sub}",
                    (cpu, m.result["wall"] / reps, m.result["rss_mb"]),
                    "plain loop",
                    per_plain,
                    f"{ratio:.1f}x loop",
                    "<= 1x (as fast)",
                    met(ratio <= 1),
                )
            )
        if policy == "greedy":
            check = run_workload("greedy_check", horizon=horizon).result
            same = all(ours == loop for ours, loop in check.values())
            pairs = "; ".join(f"instance {k}: {o} vs {p}" for k, (o, p) in check.items())
            table.note(
                f"2a check: greedy noise-free, pulls at T = {horizon}, ours vs plain loop: {pairs}"
                + (": identical (same algorithm)" if same else ": DIFFERENT PULLS")
            )
        else:
            ours0 = [p[0] for p in engine.result["pulls"]]
            theirs0 = [p[0] for p in plain.result["pulls"]]
            table.note(
                f"2b check: EXP3 (different random streams), mean pulls of arm 0 at T: ours "
                f"{statistics.mean(ours0):.0f} (sd {statistics.pstdev(ours0):.0f}, "
                f"{engine_reps} runs) vs plain loop {statistics.mean(theirs0):.0f} "
                f"(sd {statistics.pstdev(theirs0):.0f}, {plain_reps} runs); mean reward "
                f"{statistics.mean(engine.result['rewards']):.1f} vs "
                f"{statistics.mean(plain.result['rewards']):.1f}"
            )
    table.note(
        f"2: Lindner et al.'s single-peaked instance {SINGLE_PEAKED_INSTANCE} (Figure 1's), "
        "noise-free; per replication = section CPU / replications (engine: "
        f"{engine_reps} one-replication simulate calls; pipeline: {pipeline_reps} seeds, "
        f"batch_size 1, dedup off, optimal_allocation oracle per task; loop: {plain_reps} runs); "
        "MB = peak RSS of the workload's process"
    )


# -- row 3 ---------------------------------------------------------------------------------------


def row_srum(table: Table, quick: bool) -> None:
    sys.path.insert(0, str(HERE / "fidelity"))
    import ron

    horizon = 2_000 if quick else 10_000
    counts = (2, 3, 5)
    theirs = authors_srum(horizon, max(counts))
    for r in counts:
        cpu_t = sum(run["cpu_s"] for run in theirs[:r])
        wall_t = sum(run["wall_s"] for run in theirs[:r])
        for how, name in (("pipeline", "srum_pipeline"), ("engine", "srum_engine")):
            m = run_workload(name, means=ron.MEANS, horizon=horizon, seeds=r)
            ratio = cpu_t / m.result["cpu"]
            table.add(
                Row(
                    f"3{'p' if how == 'pipeline' else 'e'}{r}",
                    f"SRUM T={horizon:g} R={r} ({how})",
                    _triple(m),
                    "authors' code",
                    (cpu_t, wall_t, None),
                    f"{ratio:.1f}x faster",
                    ">= 10x",
                    met(ratio >= 10),
                )
            )
    per_pull = 1e6 * sum(r["cpu_s"] for r in theirs) / (horizon * len(theirs))
    table.note(
        f"3: K = 6, mu = {ron.MEANS}, lambda = {SRUM_LAMBDA}, f = {SRUM_FAIRNESS}; authors' code "
        f"tomron/CSRviaMAB@cb90260 unpatched, {per_pull:.0f} us CPU per pull, seeds 0..R-1 "
        "(CPU = sum of their per-run process_time, imports excluded); ours: paper SRUM, serial "
        "pipeline with R seeds (incl. the opportunity_optimum oracle and the store) and the "
        "engine alone (one batch of R), our imports excluded"
    )


# -- rows 4 and 5 ----------------------------------------------------------------------------------


def _reproduce(name: str, out: Path, quick: bool, extra: list[str] | None = None) -> Measured:
    command = [CLI, "reproduce", name, "--out", str(out), "--no-progress"]
    if quick:
        command.append("--quick")
    m = run_tree(command + (extra or []))
    if m.code != 0:
        raise RuntimeError(f"reproduce {name} failed: {m.stderr.strip()[-300:]}")
    return m


def spo_share(run_dir: Path) -> tuple[float, float]:
    """SPO's per-replication seconds and the total, summed over the store's results."""
    uri = f"file:{run_dir / 'results.sqlite'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        rows = db.execute(
            "SELECT c.policy, SUM(r.seconds) FROM results r JOIN cells c USING (cell) "
            "GROUP BY c.policy"
        ).fetchall()
    by_policy = dict(rows)
    return by_policy.get("SPO", 0.0), sum(by_policy.values())


def row_fig1(table: Table, quick: bool, scratch: Path) -> Path:
    out = scratch / "lindner-fig1"
    extra = ["--seeds", "2"] if quick else []
    m = _reproduce("lindner-fig1", out, quick, extra)
    scale = "quick, 2 seeds" if quick else "full"
    table.add(
        Row(
            "4a",
            f"lindner-fig1 ({scale}), total",
            (m.cpu, m.wall, m.rss_tree_mb),
            "-",
            ratio="-",
            target="<= 120 CPU s (full)",
            status=met(m.cpu <= 120) + (" (quick)" if quick else ""),
        )
    )
    spo, total = spo_share(out)
    table.add(
        Row(
            "4b",
            "  noisy SPO share of worker time",
            (None, spo, None),
            "all policies",
            (None, total, None),
            f"{100 * spo / total:.0f} %",
            "(info; was 43 %)",
            "info",
        )
    )
    horizon, n = (2_000, 10) if quick else (10_000, 30)
    counted = {r: run_workload("spo_python_calls", horizon=horizon, replications=r) for r in (1, n)}
    per_round = {
        r: (c.result["calls_2t"] - c.result["calls_t"]) / (horizon * r) for r, c in counted.items()
    }
    setup = (counted[n].result["calls_t"] - counted[1].result["calls_t"]) / (n - 1)
    table.add(
        Row(
            "4c",
            f"  SPO: Python calls per round x rep., R={n}",
            (None, None, None),
            "R = 1",
            (None, None, None),
            f"{per_round[n]:.3f} vs {per_round[1]:.3f}",
            "0 (batch compiled)",
            met(per_round[n] == 0),
        )
    )
    table.note(
        f"4c: cProfile's count of Python function calls in one simulate of spo-delta (sigma = "
        f"0.05) at T = {horizon:g} and 2T, for R = 1 and {n}: the calls that grow with T x R, per "
        f"round and replication (0: no Python runs per round, the batch's LP bounds are updated "
        f"in the compiled loop); the per-replication set-up is {setup:.0f} calls. Without numba "
        f"the readable NumPy path still loops over replications in Python"
    )
    table.note(
        f"4: CPU = user + system of the whole process tree of `impactbandits reproduce` (run + "
        f"report; exact: {'yes, child subreaper' if m.exact_cpu else 'no, sampled'}), MB = "
        f"peak RSS of the tree (psutil, 0.2 s); load average at start {m.load[0]:.2f}. 4b: the "
        "store's per-replication seconds (wall, timed inside the workers: the 'wall s' columns) "
        "of SPO over all policies'"
    )
    return out


def _report(run_dir: Path) -> Measured:
    m = run_tree([CLI, "report", str(run_dir)])
    if m.code != 0:
        raise RuntimeError(f"report {run_dir} failed: {m.stderr.strip()[-300:]}")
    return m


def row_report(table: Table, quick: bool, fig1: Path | None, scratch: Path) -> None:
    if fig1 is None:
        table.add(Row("5a", "report lindner-fig1", status="skipped (needs row 4's run)"))
    else:
        m = _report(fig1)
        table.add(
            Row(
                "5a",
                f"report lindner-fig1 ({'quick' if quick else 'full'})",
                (m.cpu, m.wall, m.rss_main_mb),
                "-",
                ratio="-",
                target="<= 200 MB main proc.",
                status=met(m.rss_main_mb <= 200) + (" (quick)" if quick else ""),
            )
        )
    source = FULL_RUNS / "lindner-single-peaked"
    if quick:
        table.add(Row("5b", "report lindner-single-peaked (full)", status="skipped (--quick)"))
    elif not (source / "results.sqlite").exists():
        table.add(
            Row(
                "5b",
                "report lindner-single-peaked (full)",
                status="skipped (needs a full run: make figures)",
            )
        )
    else:
        copy = scratch / "lindner-single-peaked"
        copy.mkdir()
        for path in source.glob("results.sqlite*"):  # the store and its WAL; not the report
            shutil.copy2(path, copy / path.name)
        m = _report(copy)
        table.add(
            Row(
                "5b",
                "report lindner-single-peaked (full)",
                (m.cpu, m.wall, m.rss_main_mb),
                "-",
                ratio="-",
                target="<= 1 GB main proc.",
                status=met(m.rss_main_mb <= 1024),
            )
        )
    table.note(
        "5: `impactbandits report DIR`, CPU of its process tree; MB = peak RSS of the main "
        "process (wait4's ru_maxrss); 5b runs on a copy of runs/full/lindner-single-peaked's "
        "store in a scratch folder"
    )


# -- row 6 ---------------------------------------------------------------------------------------


#: Row 6's quick figure: the one with the most simulation at ``--quick`` (run phase, 1 worker,
#: measured 2026-11-26 after the rising/rotting kernels: rested-benchmark 7.9-9.5 s; cella-fig3
#: 7.5 (one run), tang-fig2 6.6, metelli-synthetic 3.4, every other figure <= 4 s;
#: lindner-fig1 ~0.3 s, which measures start-up only).
QUICK_FIGURE = "rested-benchmark"


def row_workers(table: Table, quick: bool, scratch: Path) -> None:
    seeds = 2 if quick else None
    repeats = 1 if quick else REPEATS
    figure = "lindner-fig1" if quick else QUICK_FIGURE
    tasks, iterations = (8, 1_000_000) if quick else (32, 5_000_000)
    # every measurement of a repeat runs back to back, so each run-phase pair has a ceiling
    # pair measured within a minute of it (the host's share of cores drifts over minutes)
    runs: dict[str, list[dict[int, Measured]]] = {k: [] for k in ("6a", "6a'", "6b", "6c", "6d")}
    for attempt in range(repeats):
        runs["6a"].append(_whole_command_pair(figure, seeds, scratch / f"w{attempt}"))
        if not quick:
            runs["6a'"].append(_whole_command_pair("lindner-fig1", None, scratch / f"f{attempt}"))
        runs["6b"].append(_run_phase_pair(figure, True, seeds))
        if not quick:
            runs["6c"].append(_run_phase_pair("lindner-fig1", False, None))
        runs["6d"].append(
            {
                n: run_workload("ceiling", workers=n, tasks=tasks, iterations=iterations)
                for n in (1, 2)
            }
        )
    ceiling = [_ratio(p, "result") for p in runs["6d"]]
    whole_1 = statistics.median(p[1].wall for p in runs["6a"])
    run_1 = statistics.median(p[1].result["wall"] for p in runs["6b"])
    serial = max(0.0, whole_1 - run_1)
    bound = whole_1 / (serial + run_1 / statistics.median(ceiling))
    quick_flag = " --quick" + (" --seeds 2" if quick else "")
    goal, info = ">= 1.8x (idle)", "- (info)"
    labels = {
        "6a": (f"{figure}{quick_flag}, whole command", goal),
        "6a'": ("lindner-fig1 --quick, whole command", info),
        "6b": (f"  {figure}{quick_flag}, run phase only", goal),
        "6c": ("  lindner-fig1 full, run phase only", goal),
        "6d": (f"  machine ceiling: {tasks} pure-Python tasks", "- (reference)"),
    }
    for tag, (label, target) in labels.items():
        pairs = runs[tag]
        if not pairs:
            continue
        whole = tag.startswith("6a")  # timed from outside; the others inside their workload
        ratios = [_ratio(p, "wall" if whole else "result") for p in pairs]
        speedup, pair = _median_pair(pairs, ratios)
        spread = "range " + "/".join(f"{x:.2f}" for x in sorted(ratios))
        if tag in ("6b", "6c"):
            of = statistics.median(r / c for r, c in zip(ratios, ceiling, strict=True))
            spread += f"; {of:.2f} of the ceiling"
        load = f"load {pair[1].load[0]:.1f}/{pair[2].load[0]:.1f}"
        status = met(speedup >= 1.8) if target == goal else "info"
        table.add(
            Row(
                tag,
                f"{label}: 2 workers",
                _tree_cells(pair[2], whole),
                "1 worker",
                _tree_cells(pair[1], whole),
                f"{speedup:.2f}x wall",
                target,
                f"{status} ({load}; {spread})",
            )
        )
    table.note(
        f"6: process backend (forkserver), 1 and 2 workers; 6a the whole command (start-up, "
        f"run, serial report phase) on the quick figure with the most simulation ({figure}; "
        f"see QUICK_FIGURE), 6a' the same on lindner-fig1 --quick (~0.3 CPU s of simulation: "
        f"start-up only, info), 6b/6c run_experiment alone; each the median speed-up of "
        f"{repeats} pairs of runs (the row shows the median pair; range = every pair); MB = "
        f"peak RSS of the tree; load = 1-min load average before the 1- and 2-worker runs on "
        f"{os.cpu_count()} cores. 6d is the machine's own ceiling, measured in each repeat right "
        f"after 6a-6c: equal pure-Python tasks through the same kind of pool, nothing stored; "
        f"'of the ceiling' = the median over repeats of (speed-up / that repeat's ceiling). "
        f"6a's serial part (imports, fork server start, report phase), measured as 6a's "
        f"1-worker wall minus 6b's of the same repeat: {serial:.1f} s of {whole_1:.1f} s; with "
        f"the run phase at the ceiling ({statistics.median(ceiling):.2f}x) 6a could reach "
        f"{bound:.2f}x (Amdahl's law)"
    )


def _tree_cells(m: Measured, whole: bool) -> tuple[float, float, float]:
    """CPU, wall and peak RSS of the process tree: of the whole command as measured from
    outside, or of the workload's timed section."""
    return (m.cpu, m.wall, m.rss_tree_mb) if whole else _triple(m, "rss_tree_mb")


def _ratio(pair: dict[int, Measured], source: str) -> float:
    """1-worker wall / 2-worker wall: measured from outside (``wall``) or inside (``result``)."""
    if source == "wall":
        return pair[1].wall / pair[2].wall
    return pair[1].result["wall"] / pair[2].result["wall"]


def _whole_command_pair(figure: str, seeds: int | None, out: Path) -> dict[int, Measured]:
    """``impactbandits reproduce FIGURE --quick`` with 1 and 2 workers, timed from outside."""
    extra = ["--seeds", str(seeds)] if seeds else []
    pair = {}
    for n in (1, 2):
        pair[n] = _reproduce(figure, out, True, ["--workers", str(n), *extra])
        shutil.rmtree(out, ignore_errors=True)
    return pair


def _run_phase_pair(figure: str, quick: bool, seeds: int | None) -> dict[int, Measured]:
    """``run_experiment`` of ``figure`` alone with 1 and 2 workers."""
    return {
        n: run_workload("figure_run", figure=figure, quick=quick, seeds=seeds, workers=n)
        for n in (1, 2)
    }


def _median_pair(pairs: list[Any], speedups: list[float]) -> tuple[float, Any]:
    """The median speed-up and the pair it came from (the first pair for an even count)."""
    speedup = statistics.median(speedups)
    return speedup, pairs[speedups.index(speedup)] if len(pairs) % 2 else pairs[0]


# -- row 7 ---------------------------------------------------------------------------------------


def row_figures(table: Table) -> None:
    from impactbandits.experiments.figures import FIGURES

    if not TIMINGS.exists():
        table.add(Row("7", "all figures, full scale", status="skipped (no timings.toml)"))
        return
    # the figures only: "_meta", "_kernels" and the other "_" entries are not figures
    timings = {k: v for k, v in tomllib.loads(TIMINGS.read_text()).items() if k[:1] != "_"}
    wall = sum(float(v["wall_s"]) for v in timings.values())
    cpu = sum(float(v["cpu_s"]) for v in timings.values())
    dates = sorted({str(v.get("date", "?")) for v in timings.values()})
    missing = sorted(set(FIGURES) - set(timings))
    table.add(
        Row(
            "7",
            f"all {len(timings)}/{len(FIGURES)} figures, full scale",
            (cpu, wall, max(float(v.get("peak_rss_mb", 0)) for v in timings.values())),
            "-",
            ratio=f"{wall / 60:.0f} min wall",
            target="<= 30 min wall",
            status=met(wall <= 1800 and not missing) + " (make figures)",
        )
    )
    table.note(
        f"7: not measured here: totals of docs/fidelity/timings.toml, written by `make figures` "
        f"(benchmarks/fidelity/time_figures.py) on {', '.join(dates)}; MB = the largest "
        "figure's peak RSS; "
        + (f"missing figures: {', '.join(missing)}" if missing else "every registered figure")
    )


# == main ==========================================================================================

ROWS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny parameters (trying it out)")
    parser.add_argument(
        "--skip-figures", action="store_true", help="skip rows 4-5 (lindner-fig1 at full scale)"
    )
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.workload:
        print(json.dumps(WORKLOADS[args.workload](**json.loads(args.params))), flush=True)
        return

    rows = set(args.rows)
    if args.skip_figures:
        rows -= {"4", "5"}
    table = Table()
    run_workload("warm_kernels")  # numba's cache filled before anything is measured
    start, load = time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="engine-table-") as tmp:
        scratch = Path(tmp)
        fig1 = None
        for key in ROWS:
            if key not in rows:
                continue
            step = {
                "1": partial(row_ucb1, table, args.quick),
                "2": partial(row_r1, table, args.quick),
                "3": partial(row_srum, table, args.quick),
                "4": partial(row_fig1, table, args.quick, scratch),
                "5": partial(row_report, table, args.quick, fig1, scratch),
                "6": partial(row_workers, table, args.quick, scratch),
                "7": partial(row_figures, table),
                "8": partial(row_user_policy, table, Row, args.quick),
                "9": partial(row_pip, table, Row, CLI, scratch, args.quick),
                "10": partial(row_user_world, table, Row, args.quick),
            }[key]
            result = _guard(table, key, step)
            if key == "4":
                fig1 = result
    if args.skip_figures:
        table.add(
            Row("4-5", "lindner-fig1 full run and reports", status="skipped (--skip-figures)")
        )
    scale = "--quick: reduced sizes, targets are for full scale" if args.quick else "full scale"
    header = (
        f"Issue 13 engine table ({scale}); {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} cores, load average at start {load[0]:.2f}/{load[1]:.2f}/"
        f"{load[2]:.2f}; the table took {(time.perf_counter() - start) / 60:.1f} min wall; "
        f"{_kernels()}"
    )
    print(table.render(header), flush=True)


def _kernels() -> str:
    """Where the library's compiled round loops come from (built ahead of time, numba's JIT,
    or off): they change every row."""
    try:
        from impactbandits import kernels
    except ImportError:
        return "no compiled kernels in this version"
    try:
        backend = kernels.backend()
    except Exception as exc:  # a library in flux must not stop the table
        return f"compiled kernels: unknown ({exc})"
    if not backend:
        return "compiled kernels: off (numba missing or IMPACTBANDITS_KERNELS=0)"
    if backend == "aot":
        return "compiled kernels: built ahead of time (make kernels)"
    import numba

    return f"compiled kernels: numba {numba.__version__} JIT"


def _guard(table: Table, key: str, step: Any) -> Any:
    try:
        return step()
    except Exception as exc:  # one failing row must not lose the others
        table.add(Row(key, "(failed)", status=f"error: {exc}"[:200]))
        return None


if __name__ == "__main__":
    main()
