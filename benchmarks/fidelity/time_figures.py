"""Run registered figures at full paper scale, one after another, and time each one.

For every figure: wall seconds, CPU seconds of the whole process tree (user + system of the
``impactbandits reproduce`` process and every descendant — forkserver workers included —
exactly: this process is their child subreaper and reads ``getrusage(RUSAGE_CHILDREN)``, see
``benchmarks/tree_measure.py``), peak RSS of the tree (psutil, sampled every 0.2 s) and the
1-minute load average when the run started. Results are merged into
``docs/fidelity/timings.toml`` (one table per figure; ``--quick`` fills its ``quick_*`` keys
instead), which the fidelity ledger and the timing statements of the texts
(``timing_statements.py``) read; rerun ``docs/fidelity/build.py`` and
``timing_statements.py --write`` afterwards.

    .venv/bin/python benchmarks/fidelity/time_figures.py                 # every figure
    .venv/bin/python benchmarks/fidelity/time_figures.py tang-fig2 ron-fig2 --workers 2
    .venv/bin/python benchmarks/fidelity/time_figures.py --quick          # every figure, --quick

Runs go to ``--out``/NAME (default ``runs/full``, ``runs/quick`` with ``--quick``), emptied
first, so every figure is computed. Interleave nothing heavy with it: CPU seconds hardly depend
on the load, wall seconds do.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tomllib
from pathlib import Path

from impactbandits.experiments.figures import FIGURES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from tree_measure import run_tree  # noqa: E402 - benchmarks/ is not a package

TIMINGS = ROOT / "docs" / "fidelity" / "timings.toml"


def time_figure(
    name: str, out: Path, workers: int | None, quick: bool = False
) -> dict[str, object]:
    """Reproduce ``name`` into ``out/name`` (emptied first) and measure it."""
    shutil.rmtree(out / name, ignore_errors=True)
    command = [str(Path(sys.executable).with_name("impactbandits")), "reproduce", name]
    command += ["--out", str(out / name)] + ["--quick"] * quick
    if workers:
        command += ["--workers", str(workers)]
    measured = run_tree(command)
    if measured.code != 0:
        tail = (measured.stderr or measured.stdout).strip().splitlines()[-1:] or ["?"]
        raise SystemExit(f"error: {name}: exit {measured.code}: {tail[0]}")
    if not measured.exact_cpu:
        print(f"warning: {name}: CPU sampled (no child subreaper here)", file=sys.stderr)
    prefix = "quick_" if quick else ""
    result: dict[str, object] = {
        f"{prefix}wall_s": round(measured.wall, 1),
        f"{prefix}cpu_s": round(measured.cpu, 1),
        f"{prefix}peak_rss_mb": round(measured.rss_tree_mb),
        f"{prefix}load": round(measured.load[0], 1),
    }
    if not quick:  # (an absolute folder of this machine is not written into the table)
        folder = "<out>" if out.is_absolute() else out.as_posix()
        result["report"] = f"{folder}/{name}/report.html"
    return result


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def write(timings: dict[str, dict[str, object]]) -> None:
    """Merge ``timings`` into the file as it is now (another run may have added figures; the
    keys of an entry not measured now are kept)."""
    current = tomllib.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    timings = {**current, **{k: {**current.get(k, {}), **v} for k, v in timings.items()}}
    lines = ["# written by benchmarks/fidelity/time_figures.py: do not edit by hand", ""]
    for name in sorted(timings, key=lambda n: (n != "_meta", n)):
        lines.append(f'["{name}"]')
        lines += [f"{key} = {_toml(value)}" for key, value in timings[name].items()]
        lines.append("")
    TIMINGS.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="figures (default: all registered)")
    parser.add_argument("--out", default=None, help="parent folder of the run folders")
    parser.add_argument("--workers", type=int, default=None, help="default: all cores")
    parser.add_argument("--quick", action="store_true", help="time the --quick runs")
    args = parser.parse_args()
    names = args.names or list(FIGURES)
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise SystemExit(f"error: names: unknown figures {unknown}; see impactbandits list")
    timings: dict[str, dict[str, object]] = {}
    out = Path(args.out or ("runs/quick" if args.quick else "runs/full"))
    prefix = "quick_" if args.quick else ""
    total_wall = total_cpu = 0.0
    for name in names:
        result = time_figure(name, out, args.workers, args.quick)
        result[f"{prefix}date"] = dt.date.today().isoformat()
        timings[name] = result
        total_wall += float(result[f"{prefix}wall_s"])  # type: ignore[arg-type]
        total_cpu += float(result[f"{prefix}cpu_s"])  # type: ignore[arg-type]
        print(
            f"{name:<24} wall {result[f'{prefix}wall_s']:>8} s   "
            f"CPU {result[f'{prefix}cpu_s']:>8} s   "
            f"peak RSS {result[f'{prefix}peak_rss_mb']:>6} MB",
            flush=True,
        )
        timings["_meta"] = {
            "how": f"impactbandits reproduce NAME at full scale (quick_*: with --quick), "
            f"{os.cpu_count()} cores, default backend; CPU = user + system of the whole "
            "process tree (exact: benchmarks/tree_measure.py); peak RSS of the tree (psutil, "
            "0.2 s); load = the 1-minute load average at the start; measured by "
            "benchmarks/fidelity/time_figures.py; wall seconds depend on what else shares the "
            "cores, CPU seconds hardly do"
        }
        write(timings)
    print(f"{'total':<24} wall {total_wall:>8.1f} s   CPU {total_cpu:>8.1f} s")


if __name__ == "__main__":
    main()
