"""What "no replayed work" saves (issue 13, item 5): each figure reproduced twice in one run,
first simulating every seed (``IMPACTBANDITS_DEDUP=0``), then with deterministic cells computed
once and copied to every seed; prints CPU seconds of the whole process tree (PeakRSS), the
simulation seconds stored with the results, and the ratios.

    .venv/bin/python benchmarks/dedup.py                      # both Lindner figures, --quick
    .venv/bin/python benchmarks/dedup.py lindner-increasing --workers 2
    .venv/bin/python benchmarks/dedup.py --estimate runs/full/lindner-increasing lindner-increasing

``--estimate RUN_DIR NAME`` reads a finished full-scale store of figure ``NAME`` (read-only)
and estimates the full-scale saving from the simulation seconds stored per cell and, for a
sample of deterministic cells per policy, the measured time of one replication against all
seeds (see :func:`estimate`).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak_rss import PeakRSS

FIGURES = ("lindner-increasing", "lindner-single-peaked")
CLI = [sys.executable, "-m", "impactbandits"]


def stored_seconds(run_dir: Path) -> float:
    """Sum of the per-result simulation seconds the workers recorded."""
    uri = f"file:{run_dir / 'results.sqlite'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        return float(conn.execute("SELECT COALESCE(SUM(seconds), 0) FROM results").fetchone()[0])


def reproduce(name: str, out: Path, dedup: bool, workers: int) -> tuple[float, float, float]:
    """(wall s, CPU s of the process tree, stored simulation s) of one quick reproduction."""
    env = {**os.environ, "IMPACTBANDITS_DEDUP": "1" if dedup else "0"}
    args = [*CLI, "reproduce", name, "--quick", "--out", str(out), "--workers", str(workers)]
    start = time.perf_counter()
    proc = subprocess.Popen([*args, "--no-progress"], env=env, stdout=subprocess.DEVNULL)
    with PeakRSS(proc.pid) as rss:
        code = proc.wait()
    if code:
        sys.exit(f"{' '.join(args)} exited with {code}")
    return time.perf_counter() - start, rss.cpu_seconds, stored_seconds(out)


def measure(names: list[str], workers: int) -> None:
    with tempfile.TemporaryDirectory(prefix="dedup-bench-") as tmp:
        for name in names:
            before = reproduce(name, Path(tmp) / f"{name}-replayed", False, workers)
            after = reproduce(name, Path(tmp) / f"{name}-dedup", True, workers)
            (w0, c0, s0), (w1, c1, s1) = before, after
            print(
                f"{name} --quick --workers {workers}: "
                f"replayed: wall {w0:.1f} s, CPU {c0:.1f} s, simulation {s0:.1f} s; "
                f"dedup: wall {w1:.1f} s, CPU {c1:.1f} s, simulation {s1:.1f} s; "
                f"ratios (replayed / dedup): wall {w0 / w1:.2f}x, CPU {c0 / c1:.2f}x, "
                f"simulation {s0 / max(s1, 1e-9):.2f}x",
                flush=True,
            )


def estimate(run_dir: Path, name: str, sample: int = 2) -> None:
    """Full-scale saving of figure ``name`` from its finished store in ``run_dir``.

    A deterministic cell's stored seconds are the time of one batch of all its seeds; dedup
    replaces it by one replication, which is not 1/seeds of the time (the per-round overhead
    is shared by the batch). So for ``sample`` deterministic cells of each policy label the
    two are timed here, in this process, and each deterministic cell's stored seconds are
    scaled by its label's measured ratio."""
    import random
    from collections import defaultdict

    from impactbandits.experiments.cells import Task, expand
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.worker import run_task

    spec = get_figure(name).spec(False, "paper")
    cells = {c.key: c for c in expand(spec)}
    uri = f"file:{run_dir / 'results.sqlite'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = conn.execute("SELECT cell, SUM(seconds) FROM results GROUP BY cell").fetchall()
    stored = {cell: float(seconds) for cell, seconds in rows if cell in cells}
    total = sum(stored.values())
    by_label: dict[str, list[str]] = defaultdict(list)
    for key in stored:
        if cells[key].deterministic:
            by_label[cells[key].policy.label].append(key)
    seeds = tuple(range(spec.seeds))
    ratio: dict[str, float] = {}
    for label, keys in sorted(by_label.items()):
        picked = random.Random(0).sample(keys, min(sample, len(keys)))
        one = full = 0.0
        for key in picked:
            cell = cells[key]
            start = time.process_time()
            run_task(Task(cell, seeds))
            middle = time.process_time()
            run_task(Task(cell, seeds[:1], seeds[1:]))
            full += middle - start
            one += time.process_time() - middle
        ratio[label] = one / full
        print(
            f"  {label}: one replication / {len(seeds)} = {ratio[label]:.2f} ({len(picked)} cells)"
        )
    det = sum(stored[k] for keys in by_label.values() for k in keys)
    saved = sum(stored[k] * (1 - ratio[label]) for label, keys in by_label.items() for k in keys)
    print(
        f"{name} (full scale, {run_dir}): {len(stored)} of {len(cells)} cells stored; "
        f"deterministic cells: {sum(map(len, by_label.values()))} ({det:.0f} of {total:.0f} "
        f"stored simulation s, {det / total:.0%}); dedup saves about {saved:.0f} s "
        f"({saved / total:.0%} of the simulation time: {total / (total - saved):.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(FIGURES))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--estimate", metavar="RUN_DIR", type=Path)
    args = parser.parse_args()
    if args.estimate is not None:
        for name in args.names[:1] or FIGURES[:1]:
            estimate(args.estimate, name)
    else:
        measure(args.names, args.workers)


if __name__ == "__main__":
    main()
