"""Report of large stores against export of the same stores, measured in the same run: wall
and CPU seconds and peak RSS of the whole process tree of ``impactbandits report RUN_DIR``
and of ``impactbandits export RUN_DIR`` (the tidy table at the grid horizons, written as CSV:
the reference), and their ratios. ``--baseline SRC`` measures another source tree beside the
current one (the code before a change: ``git archive HEAD src | tar -x -C DIR``, then
``--baseline DIR/src``).

The stores, 10⁶ results each (``--stores`` picks some):

* ``report-large``: 2 environments (3-arm Bernoulli and Gaussian, both with an oracle) × UCB1,
  greedy (anytime) and explore-then-commit (horizon-aware) × horizons 100 and 200 (8 cells) ×
  125,000 seeds with 12 trajectory points per run: 1.06 GB of ``results.sqlite`` (the store the
  report was first measured on);
* ``default-checkpoints``: the same at the spec's default 50 trajectory points, 4.1 GB (what a
  user's spec of that size stores);
* ``one-cell``: one environment × UCB1 × horizon 200 × 10⁶ seeds (the most a spec may ask
  for) at 50 points, 4.1 GB: every result in one cell, which the report holds until it is read
  to its end.

Each is simulated once with the process backend in batches of 256 seeds (``--batch-size``: the
runner's planner takes minutes to split that many seeds by itself), 3 to 6 minutes on 2 cores,
and kept in ``--keep DIR`` (default ``impactbandits-report-large`` in the temporary folder,
``$TMPDIR``: ``DIR/run``, ``DIR/default-checkpoints/run``, ``DIR/one-cell/run``), so re-runs
only measure.

    .venv/bin/python benchmarks/report_large.py [--keep DIR] [--stores A,B] [--repeat N]
        [--baseline SRC]

Target (issues 25 and 41): report peak RSS ≤ 600 MB on each. Measured in one run with
``--baseline`` (2 cores shared with other work: wall seconds vary by 2x, CPU seconds of the
process tree far less): before, the seed coverage built a set of 10⁶ Python tuples (0.2 GB) and
each cell's values were copied whole for their statistics; now the coverage is one array of
seeds per cell, statistics are reduced a block at a time and values beyond 96 MB wait in a
temporary file (``experiments/group_pool.py``). The page and the figures' data are the same.

    store                 report before          report now             export now
    report-large          390 MB, 56.6 CPU s     233 MB, 47.2 CPU s     349 MB, 58.2 CPU s
    default-checkpoints   595 MB, 67.1 CPU s     365 MB, 60.7 CPU s     335 MB, 96.7 CPU s
    one-cell            2,963 MB, 75.0 CPU s     355 MB, 57.1 CPU s     273 MB, 93.2 CPU s
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak_rss import PeakRSS

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / ".venv" / "bin" / "impactbandits")
PYTHON = str(ROOT / ".venv" / "bin" / "python")

#: Issues 25 and 41: the report of a 10⁶-result store peaks at no more than this.
TARGET_MB = 600

BERNOULLI = """
[[environments]]
kind = "bernoulli"
label = "bernoulli"
means = [0.3, 0.5, 0.7]
"""
GAUSSIAN = """
[[environments]]
kind = "gaussian"
label = "gaussian"
n_arms = 3
sigma = 0.5
"""
POLICIES = {kind: f'\n[[policies]]\nkind = "{kind}"\n' for kind in ("ucb1", "greedy", "etc")}


def spec_text(name: str, description: str, head: str, *tables: str) -> str:
    return f'name = "{name}"\ndescription = "{description}"\n{head}' + "".join(tables)


_MANY_SEEDS = ("report-large", "Report memory: many seeds at short horizons.")
#: name → (folder under --keep, spec); the specs of the module docstring.
STORES = {
    "report-large": (".", spec_text(
        *_MANY_SEEDS, "horizons = [100, 200]\nseeds = 125000\ncheckpoints = 12\n",
        BERNOULLI, GAUSSIAN, *POLICIES.values(),
    )),
    "default-checkpoints": ("default-checkpoints", spec_text(
        *_MANY_SEEDS, "horizons = [100, 200]\nseeds = 125000\ncheckpoints = 50\n",
        BERNOULLI, GAUSSIAN, *POLICIES.values(),
    )),
    "one-cell": ("one-cell", spec_text(
        "report-one-cell",
        "Report memory: one cell of a million seeds at the default checkpoints.",
        "horizons = [200]\nseeds = 1000000\n", BERNOULLI, POLICIES["ucb1"],
    )),
}  # fmt: skip


def make_store(base: Path, text: str) -> Path:
    """The run directory ``base/run``, simulated from the spec ``text`` unless it holds a
    store already."""
    run_dir = base / "run"
    if not (run_dir / "results.sqlite").exists():
        base.mkdir(parents=True, exist_ok=True)
        spec = base / "spec.toml"
        spec.write_text(text, encoding="utf-8")
        start = time.perf_counter()
        subprocess.run([CLI, "run", str(spec), "--out", str(run_dir), "--backend", "process",
                        "--batch-size", "256", "--no-report", "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        print(f"store simulated in {time.perf_counter() - start:.0f} s ({run_dir})")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    keep = Path(tempfile.gettempdir()) / "impactbandits-report-large"
    parser.add_argument("--keep", type=Path, default=keep)
    parser.add_argument(
        "--stores", default=",".join(STORES),
        help=f"stores to measure, comma-separated (default: all of {', '.join(STORES)})",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; medians shown")
    parser.add_argument(
        "--baseline", type=Path, metavar="SRC",
        help="also measure the source tree SRC (e.g. `git archive HEAD src | tar -x -C DIR`, "
        "then DIR/src) in the same run",
    )  # fmt: skip
    args = parser.parse_args()
    names = [name.strip() for name in args.stores.split(",") if name.strip()]
    unknown = [name for name in names if name not in STORES]
    if unknown or not names:
        parser.error(f"--stores: unknown {', '.join(unknown)}; allowed: {', '.join(STORES)}")
    trees = {"": None} if args.baseline is None else {"": None, " (baseline)": args.baseline}
    met = True
    for name in names:
        folder, text = STORES[name]
        run_dir = make_store(args.keep / folder, text)
        store = run_dir / "results.sqlite"
        csv = run_dir.parent / "export.csv"
        rows = {}
        for suffix, src in trees.items():
            export = [measure(["export", str(run_dir), "-o", str(csv)], src)
                      for _ in range(args.repeat)]  # fmt: skip
            report = [measure(["report", str(run_dir)], src) for _ in range(args.repeat)]
            rows[suffix] = (median(export), median(report))
        csv.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            results = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            cells = db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        size = os.path.getsize(store) / 1e9
        print(f"{name}: {results:,} results in {cells} cells, {size:.2f} GB ({store})")
        for suffix, (export, report) in rows.items():
            for what, (wall, cpu, rss) in (("export", export), ("report", report)):
                print(f"  {what + suffix:20s} wall {wall:6.1f} s  CPU {cpu:6.1f} s  peak RSS "
                      f"{rss:6.0f} MB  / export: CPU {cpu / export[1]:4.2f}x, "
                      f"RSS {rss / export[2]:4.2f}x")  # fmt: skip
        rss = rows[""][1][2]
        met = met and rss <= TARGET_MB
        print(f"  report peak RSS {rss:.0f} MB (target <= {TARGET_MB} MB): "
              f"{'met' if rss <= TARGET_MB else 'NOT MET'}")  # fmt: skip
        if args.baseline is not None:
            (_, now), (_, before) = rows[""], rows[" (baseline)"]
            print(
                f"  report / report (baseline): wall {now[0] / before[0]:4.2f}x, "
                f"CPU {now[1] / before[1]:4.2f}x, peak RSS {now[2] / before[2]:4.2f}x"
            )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
