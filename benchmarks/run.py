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

Machines are shared and noisy: each measurement is the median of ``--repeat`` runs; the ratios
are what matter. Targets: ≥ 50× SMPyBandits per core; ≤ 500 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from impactbandits import ExperimentSpec, run_experiment

HERE = Path(__file__).resolve().parent
HORIZON = 10_000
REPETITIONS = 100
MEANS = [0.3, 0.7]
OURS = {"UCB": {"kind": "ucb1"}, "Exp3": {"kind": "exp3", "gamma": 0.01}}


def smpybandits(repetitions: int) -> dict | None:
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
            str(HERE / "smpybandits_reference.py"),
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


def ours(name: str, backend: str, repetitions: int, repeat: int) -> float:
    """Median pulls/second of the whole pipeline (spec, runner, store) for one policy."""
    spec = ExperimentSpec.create(
        name=f"bench-{name.lower()}",
        environments=[{"kind": "bernoulli", "means": MEANS}],
        policies=[OURS[name]],
        horizons=[HORIZON],
        seeds=repetitions,
        checkpoints=10,
    )
    rates = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            run_experiment(spec, out, backend=backend)
            rates.append(HORIZON * repetitions / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=REPETITIONS)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-oracles", action="store_true")
    args = parser.parse_args()

    reference = None if args.skip_reference else smpybandits(args.repetitions)
    print(
        f"\n2-arm Bernoulli (0.3, 0.7), T = {HORIZON}, {args.repetitions} replications, "
        "whole pipeline (spec, runner, SQLite store)"
    )
    print(
        f"{'policy':6} {'SMPyBandits':>14} {'ours serial':>14} {'ratio/core':>11} "
        f"{'ours process':>14} {'ratio':>8}"
    )
    for name in OURS:
        serial = ours(name, "serial", args.repetitions, args.repeat)
        process = ours(name, "process", args.repetitions, args.repeat)
        ref = reference[name]["pulls_per_second"] if reference else float("nan")
        print(
            f"{name:6} {ref:14,.0f} {serial:14,.0f} {serial / ref:10.1f}x "
            f"{process:14,.0f} {process / ref:7.1f}x"
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


if __name__ == "__main__":
    main()
