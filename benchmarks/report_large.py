"""Report of a large store against export of the same store, measured in the same run: wall
and CPU seconds and peak RSS of the whole process tree of ``impactbandits report RUN_DIR``
and of ``impactbandits export RUN_DIR`` (the tidy table at the grid horizons, written as CSV:
the reference), and their ratios. ``--baseline SRC`` measures another source tree beside the
current one (the code before a change: ``git archive HEAD src | tar -x -C DIR``, then
``--baseline DIR/src``).

The store: 2 environments (3-arm Bernoulli and Gaussian, both with an oracle) × UCB1, greedy
(anytime) and explore-then-commit (horizon-aware) × horizons 100 and 200 (8 cells) × 125,000
seeds with 12 trajectory points per run: 10⁶ results, 1.06 GB of ``results.sqlite`` (the size of
the store the report was first measured on). It is simulated once with the process backend in
batches of 256 seeds (``--batch-size``: the runner's planner takes minutes to split 125,000
seeds by itself), about 3 minutes on 2 cores, and kept in ``--keep DIR`` (default
``/tmp/impactbandits-report-large``), so re-runs only measure.

    .venv/bin/python benchmarks/report_large.py [--keep DIR] [--repeat N] [--baseline SRC]

Target: report peak RSS ≤ 600 MB. Measured (2 shared cores): the report that built the tidy
table peaked at 1.8 GB (3.4x export's 536 MB) and took 32 CPU s; streaming statistics
(``experiments/aggregates.py``) it peaks at about 0.42 GB (0.8x export) with 18 CPU s.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

from peak_rss import PeakRSS

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / ".venv" / "bin" / "impactbandits")
PYTHON = str(ROOT / ".venv" / "bin" / "python")

#: Issue 25: the report of the 10⁶-result store peaks at no more than this.
TARGET_MB = 600

SPEC = """name = "report-large"
description = "Report memory: many seeds at short horizons."
horizons = [100, 200]
seeds = {seeds}
checkpoints = 12

[[environments]]
kind = "bernoulli"
label = "bernoulli"
means = [0.3, 0.5, 0.7]

[[environments]]
kind = "gaussian"
label = "gaussian"
n_arms = 3
sigma = 0.5

[[policies]]
kind = "ucb1"

[[policies]]
kind = "greedy"

[[policies]]
kind = "etc"
"""


def make_store(base: Path, seeds: int) -> Path:
    """The run directory ``base/run``, simulated unless it holds a store already."""
    run_dir = base / "run"
    if not (run_dir / "results.sqlite").exists():
        base.mkdir(parents=True, exist_ok=True)
        spec = base / "spec.toml"
        spec.write_text(SPEC.format(seeds=seeds), encoding="utf-8")
        start = time.perf_counter()
        subprocess.run([CLI, "run", str(spec), "--out", str(run_dir), "--backend", "process",
                        "--batch-size", "256", "--no-report", "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        print(f"store simulated in {time.perf_counter() - start:.0f} s")
    return run_dir


def measure(args: list[str], src: Path | None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of the process tree of ``impactbandits
    ARGS`` (``src``: with that source tree first on the path, e.g. an older version)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", "impactbandits", *args], env=env,
                            stdout=subprocess.DEVNULL)  # fmt: skip
    with PeakRSS(proc.pid, interval=0.2) as rss:
        code = proc.wait()
    if code:
        raise SystemExit(f"impactbandits {' '.join(args)} failed with exit code {code}")
    return time.perf_counter() - start, rss.cpu_seconds, rss.peak_total


def median(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    wall, cpu, rss = (statistics.median(column) for column in zip(*runs, strict=True))
    return wall, cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=Path("/tmp/impactbandits-report-large"))
    parser.add_argument("--seeds", type=int, default=125_000, help="seeds of a new store")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; medians shown")
    parser.add_argument(
        "--baseline", type=Path, metavar="SRC",
        help="also measure the source tree SRC (e.g. `git archive HEAD src | tar -x -C DIR`, "
        "then DIR/src) in the same run",
    )  # fmt: skip
    args = parser.parse_args()
    run_dir = make_store(args.keep, args.seeds)
    store = run_dir / "results.sqlite"
    csv = args.keep / "export.csv"
    trees = {"": None} if args.baseline is None else {"": None, " (baseline)": args.baseline}
    rows = {}
    for suffix, src in trees.items():
        export = [measure(["export", str(run_dir), "-o", str(csv)], src)
                  for _ in range(args.repeat)]  # fmt: skip
        report = [measure(["report", str(run_dir)], src) for _ in range(args.repeat)]
        rows[suffix] = (median(export), median(report))
    csv.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        results = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    print(f"store: {results:,} results, {os.path.getsize(store) / 1e9:.2f} GB ({store})")
    for suffix, (export, report) in rows.items():
        for name, (wall, cpu, rss) in (("export", export), ("report", report)):
            print(f"  {name + suffix:20s} wall {wall:6.1f} s  CPU {cpu:6.1f} s  peak RSS "
                  f"{rss:6.0f} MB  / export: CPU {cpu / export[1]:4.2f}x, "
                  f"RSS {rss / export[2]:4.2f}x")  # fmt: skip
    rss = rows[""][1][2]
    print(f"  report peak RSS {rss:.0f} MB (target <= {TARGET_MB} MB): "
          f"{'met' if rss <= TARGET_MB else 'NOT MET'}")  # fmt: skip
    if args.baseline is not None:
        (_, now), (_, before) = rows[""], rows[" (baseline)"]
        print(
            f"  report / report (baseline): wall {now[0] / before[0]:4.2f}x, "
            f"CPU {now[1] / before[1]:4.2f}x, peak RSS {now[2] / before[2]:4.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
