"""``make bench``: throughput against SMPyBandits measured in the same run, and sweep memory.

1. SMPyBandits ``UCB`` and ``Exp3`` (γ = 0.01) on a 2-arm Bernoulli bandit (0.3, 0.7),
   T = 10⁴, 100 repetitions, in its own virtual environment (``benchmarks/smpybandits_env.sh``).
2. The same problem through our whole pipeline (spec → runner → store): UCB1 and EXP3 (γ = 0.01),
   serial backend (one core) and process backend (all cores).
3. Peak RSS of a 10,000-cell sweep (``benchmarks/memory_sweep.py``).
4. Exact oracles and SPO (``bench_allocation.py``, ``bench_concave_bound.py``, ``bench_spo.py``):
   OPT for all horizons of a 4-arm single-peaked instance at T = 10⁵ (target ≤ 0.3 s); the LP
   (⋆) bound against HiGHS at n = 1000, R = 10⁴ (target ≥ 1000×); one noisy-SPO run with
   2 arms and T = 10⁴ (target < 1 s).
5. Patil et al.'s Algorithm 1 at k = 10, T = 10⁶ (target < 5 s) and competitive-ratio growth in k
   (``bench_patil.py``).
6. The report of a 10⁶-result (1.06 GB) store against its export (``report_large.py``; target
   ≤ 600 MB peak RSS).
7. Issue 13's engine table (``engine_table.py``): every row measured in this run against its
   reference (K = 2, a plain-Python loop, the authors' code, one worker), CPU and wall seconds
   side by side; ``--skip-figures`` leaves out the full ``lindner-fig1`` run (≈ 450 CPU s).
8. Issue 29's suite table (``suite_table.py``): the speed of everything around the compiled
   loops (tang-fig2/3, authors-code variants, ``list``/``describe``, ``lindner-fig1 --quick``,
   oracle computations, the report phase, Dask, 1 → 2 workers, all figures), each row against a
   reference measured in the same run; ``--skip-tang`` leaves out its full tang-fig2/3 runs.

Machines are shared and noisy: each measurement is the median of ``--repeat`` runs; the ratios
are what matter. Items 1-2 are reported in pulls per CPU second (per core: the serial backend's
CPU is one core's) beside pulls per wall second; CPU seconds cover the whole process tree (the
process backend's workers included) and exclude imports (``engine_table.run_workload``).
Targets: ≥ 50× SMPyBandits per core; ≤ 500 MB peak RSS. ``--quick``: tiny sizes, to try it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from engine_table import run_workload

HERE = Path(__file__).resolve().parent
HORIZON = 10_000
REPETITIONS = 100
MEANS = [0.3, 0.7]
OURS = {"UCB": {"kind": "ucb1"}, "Exp3": {"kind": "exp3", "gamma": 0.01}}


def smpybandits(repetitions: int) -> dict | None:
    """SMPyBandits in its own venv; per policy pulls per CPU second and per wall second of the
    reference's timed sections (``smpybandits_cpu.py`` runs ``smpybandits_reference.py``)."""
    env = subprocess.run(
        ["bash", str(HERE / "smpybandits_env.sh")], capture_output=True, text=True, check=False
    )
    if env.returncode != 0:
        print(f"SMPyBandits environment unavailable: {env.stderr.strip()[-300:]}")
        return None
    python = env.stdout.strip().splitlines()[-1]
    ref = subprocess.run(
        [
            python,
            str(HERE / "smpybandits_cpu.py"),
            "--horizon",
            str(HORIZON),
            "--repetitions",
            str(repetitions),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if ref.returncode != 0:
        print(f"SMPyBandits reference failed: {ref.stderr.strip()[-300:]}")
        return None
    return json.loads(ref.stdout)["results"]


def ours(name: str, backend: str, repetitions: int, repeat: int) -> tuple[float, float]:
    """Median pulls per CPU second and per wall second of the whole pipeline (spec, runner,
    store) for one policy, each run in a fresh process (CPU of its workers included)."""
    cpu, wall = [], []
    for _ in range(repeat):
        result = run_workload(
            "bernoulli_pipeline",
            means=MEANS,
            policy=OURS[name],
            horizon=HORIZON,
            seeds=repetitions,
            backend=backend,
        ).result
        cpu.append(result["pulls"] / result["cpu"])
        wall.append(result["pulls"] / result["wall"])
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=None, help=f"default {REPETITIONS}")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (to try the script)")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-oracles", action="store_true")
    parser.add_argument("--skip-engine-table", action="store_true")
    parser.add_argument(
        "--skip-figures", action="store_true", help="engine table without lindner-fig1 (rows 4-5)"
    )
    parser.add_argument(
        "--skip-suite-table", action="store_true", help="without issue 29's suite table"
    )
    parser.add_argument(
        "--skip-tang",
        action="store_true",
        help="suite table without row 1 (tang-fig2 and tang-fig3 at full scale)",
    )
    parser.add_argument(
        "--skip-report-large",
        action="store_true",
        help="without the report of a 10^6-result store (about 3 min to make it, once)",
    )
    args = parser.parse_args()
    repetitions = args.repetitions or (3 if args.quick else REPETITIONS)
    repeat = args.repeat or (1 if args.quick else 3)

    reference = None if args.skip_reference else smpybandits(repetitions)
    print(
        f"\n2-arm Bernoulli (0.3, 0.7), T = {HORIZON}, {repetitions} replications, "
        "whole pipeline (spec, runner, SQLite store); pulls per CPU second (per core) | per wall "
        f"second, median of {repeat}; SMPyBandits: its timed loop, same run"
    )
    print(
        f"{'policy':6} {'SMPyBandits':>19} {'ours serial':>21} {'ratio/core':>10} "
        f"{'ours process':>21} {'ratio':>13}  target"
    )
    print(
        f"{'':6} {'CPU | wall':>19} {'CPU | wall':>21} {'CPU':>10} {'CPU | wall':>21} "
        f"{'CPU | wall':>13}"
    )
    nan = float("nan")
    for name in OURS:
        try:
            serial_cpu, serial_wall = ours(name, "serial", repetitions, repeat)
            process_cpu, process_wall = ours(name, "process", repetitions, repeat)
        except RuntimeError as exc:  # one failing measurement must not lose the others
            print(f"{name:6} error: {str(exc)[:300]}")
            continue
        ref = reference[name] if reference else {}
        ref_cpu = ref.get("pulls_per_cpu_second", nan)
        ref_wall = ref.get("pulls_per_wall_second", nan)
        per_core = serial_cpu / ref_cpu
        status = "no reference" if reference is None else ("met" if per_core >= 50 else "NOT MET")
        print(
            f"{name:6} {ref_cpu:>8,.0f} | {ref_wall:>8,.0f} {serial_cpu:>9,.0f} | "
            f"{serial_wall:>9,.0f} {per_core:>9.1f}x {process_cpu:>9,.0f} | {process_wall:>9,.0f} "
            f"{process_cpu / ref_cpu:>5.1f}x | {process_wall / ref_wall:>5.1f}x  "
            f">= 50x per core: {status}"
        )
    if reference is None:
        print("(no SMPyBandits reference: the floor is 1.5M pulls/s per core for UCB1)")

    if not args.skip_memory:
        mem = subprocess.run(
            [sys.executable, str(HERE / "memory_sweep.py")],
            capture_output=True,
            text=True,
            check=True,
        )
        m = json.loads(mem.stdout)
        print(
            f"\n{m['cells']}-cell sweep: {m['seconds']:.1f} s, peak RSS of the runner "
            f"{m['runner_peak_rss_mb']:.0f} MB, runner + workers {m['total_peak_rss_mb']:.0f} MB"
            " (target <= 500 MB)"
        )

    if not args.skip_oracles:
        for script in (
            "bench_allocation.py",
            "bench_concave_bound.py",
            "bench_spo.py",
            "bench_patil.py",
            "bench_pilow.py",
            "bench_simplex.py",
        ):
            print(f"\n== {script}", flush=True)
            subprocess.run([sys.executable, str(HERE / script)], check=True)

    if not args.skip_report_large:
        print("\n== report_large.py (issue 25: report of a 10^6-result store)", flush=True)
        keep = Path(tempfile.gettempdir()) / "impactbandits-report-large-quick"
        sizes = ["--seeds", "2000", "--keep", str(keep)]
        subprocess.run(
            [sys.executable, str(HERE / "report_large.py"), *sizes * args.quick], check=True
        )

    if not args.skip_engine_table:
        print("\n== engine_table.py (issue 13)", flush=True)
        flags = ["--quick"] * args.quick + ["--skip-figures"] * args.skip_figures
        subprocess.run([sys.executable, str(HERE / "engine_table.py"), *flags], check=True)

    if not args.skip_suite_table:
        print("\n== suite_table.py (issue 29)", flush=True)
        flags = ["--quick"] * args.quick + ["--skip-tang"] * args.skip_tang
        if args.repeat:
            flags += ["--repeat", str(args.repeat)]
        subprocess.run([sys.executable, str(HERE / "suite_table.py"), *flags], check=True)


if __name__ == "__main__":
    main()
