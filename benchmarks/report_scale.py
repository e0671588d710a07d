"""Report of a 40-environment run: wall and CPU seconds (whole process tree) and peak RSS of
``impactbandits report``, with the standard figures drawn in one process (the default, the
reference) and by a pool of two (``IMPACTBANDITS_REPORT_WORKERS=2``), measured in the same
run. The run itself (40 random IMAB instances × 5 policies × 15 horizons × 20 seeds) is made
once in a temporary directory.

    .venv/bin/python benchmarks/report_scale.py [--environments 40] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak_rss import PeakRSS

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / ".venv" / "bin" / "impactbandits")


def spec_text(environments: int) -> str:
    horizons = ", ".join(str(h) for h in [*range(100, 1001, 100), *range(1200, 2001, 200)])
    lines = [
        'name = "report-scale"',
        'description = "Report scaling: many environments."',
        f"horizons = [{horizons}]",
        "seeds = 20",
        "",
    ]
    for i in range(environments):
        lines += ["[[environments]]", 'kind = "imab"', 'family = "random"', "k = 5",
                  "length = 2000", f"seed = {i}", f'label = "random {i}"', ""]  # fmt: skip
    for kind in ("ucb1", "greedy", "patil", "exp3", "round-robin"):
        lines += ["[[policies]]", f'kind = "{kind}"', ""]
    return "\n".join(lines)


def measure(run_dir: Path, workers: str | None) -> tuple[float, float, float]:
    env = dict(os.environ)
    if workers is not None:
        env["IMPACTBANDITS_REPORT_WORKERS"] = workers
    start = time.perf_counter()
    proc = subprocess.Popen([CLI, "report", str(run_dir)], env=env, stdout=subprocess.DEVNULL)
    with PeakRSS(proc.pid) as rss:
        proc.wait()
    return time.perf_counter() - start, rss.cpu_seconds, rss.peak_total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environments", type=int, default=40)
    parser.add_argument("--keep", type=Path, help="make (or reuse) the run here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        run_dir = base / "run"
        spec = base / "spec.toml"
        if not (run_dir / "results.sqlite").exists():
            base.mkdir(parents=True, exist_ok=True)
            spec.write_text(spec_text(args.environments), encoding="utf-8")
            subprocess.run([CLI, "run", str(spec), "--out", str(run_dir)], check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
        rows = [("one process (default)", measure(run_dir, None)),
                ("pool of 2 (opt-in)", measure(run_dir, "2"))]  # fmt: skip
    reference = rows[0][1]
    print(f"report of {args.environments} environments (5 policies, 15 horizons, 20 seeds)")
    for name, (wall, cpu, rss) in rows:
        print(f"  {name:26s} wall {wall:6.1f} s  CPU {cpu:6.1f} s  peak RSS {rss:6.0f} MB  "
              f"wall ratio {reference[0] / wall:4.2f}x")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
