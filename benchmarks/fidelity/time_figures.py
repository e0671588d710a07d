"""Run registered figures at full paper scale, one after another, and time each one.

For every figure: wall seconds, CPU seconds of the whole process tree (user + system of the
``impactbandits reproduce`` process and every descendant — forkserver workers included — as
last seen by psutil sampling every 0.2 s, so a process living < 0.2 s may be missed), and peak
RSS of the tree (same sampling). Results are merged into
``docs/fidelity/timings.toml`` (one table per figure), which the fidelity ledger shows; rerun
``docs/fidelity/build.py`` afterwards.

    .venv/bin/python benchmarks/fidelity/time_figures.py                 # all 17 figures
    .venv/bin/python benchmarks/fidelity/time_figures.py tang-fig2 ron-fig2 --workers 2
    .venv/bin/python benchmarks/fidelity/time_figures.py --out runs/full  # keep the runs

Runs go to ``--out``/NAME (default ``runs/full``): an existing finished store is not recomputed,
so delete it to re-time a figure. Interleave nothing heavy with it: the machine has 2 cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from impactbandits.experiments.figures import FIGURES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from peak_rss import PeakRSS  # noqa: E402 - benchmarks/ is not a package

TIMINGS = ROOT / "docs" / "fidelity" / "timings.toml"


def time_figure(name: str, out: Path, workers: int | None) -> dict[str, object]:
    command = [str(Path(sys.executable).with_name("impactbandits")), "reproduce", name]
    command += ["--out", str(out / name)]
    if workers:
        command += ["--workers", str(workers)]
    wall0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakRSS(proc.pid, interval=0.2) as tree:
        stdout, stderr = proc.communicate()
    wall, cpu = time.perf_counter() - wall0, tree.cpu_seconds
    if proc.returncode != 0:
        tail = (stderr or stdout).strip().splitlines()[-1:] or ["?"]
        raise SystemExit(f"error: {name}: exit {proc.returncode}: {tail[0]}")
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "peak_rss_mb": round(tree.peak_total),
        "report": stdout.strip().splitlines()[-1] if stdout.strip() else "",
    }


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def write(timings: dict[str, dict[str, object]]) -> None:
    """Merge ``timings`` into the file as it is now (another run may have added figures)."""
    current = tomllib.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    timings = {**current, **timings}
    lines = ["# written by benchmarks/fidelity/time_figures.py: do not edit by hand", ""]
    for name in sorted(timings, key=lambda n: (n != "_meta", n)):
        lines.append(f'["{name}"]')
        lines += [f"{key} = {_toml(value)}" for key, value in timings[name].items()]
        lines.append("")
    TIMINGS.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="figures (default: all registered)")
    parser.add_argument("--out", default="runs/full", help="parent folder of the run folders")
    parser.add_argument("--workers", type=int, default=None, help="default: all cores")
    args = parser.parse_args()
    names = args.names or list(FIGURES)
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise SystemExit(f"error: names: unknown figures {unknown}; see impactbandits list")
    timings: dict[str, dict[str, object]] = {}
    out = Path(args.out)
    total_wall = total_cpu = 0.0
    for name in names:
        result = time_figure(name, out, args.workers)
        result["date"] = dt.date.today().isoformat()
        timings[name] = result
        total_wall += float(result["wall_s"])  # type: ignore[arg-type]
        total_cpu += float(result["cpu_s"])  # type: ignore[arg-type]
        print(
            f"{name:<24} wall {result['wall_s']:>8} s   CPU {result['cpu_s']:>8} s   "
            f"peak RSS {result['peak_rss_mb']:>6} MB",
            flush=True,
        )
        timings["_meta"] = {
            "how": f"impactbandits reproduce NAME at full scale, {os.cpu_count()} cores, "
            "process backend; CPU = user + system of the whole process tree; "
            "peak RSS of the tree (psutil, 0.2 s); measured by "
            "benchmarks/fidelity/time_figures.py; wall seconds depend on what else shares the "
            "2 cores, CPU seconds do not"
        }
        write(timings)
    print(f"{'total':<24} wall {total_wall:>8.1f} s   CPU {total_cpu:>8.1f} s")


if __name__ == "__main__":
    main()
