"""Cost of validating a policy's actions every round (issue 12), measured against the same loop
that validates round 1 only, in one run, interleaved (A, B, A, B, …) so that load on the shared
machine hits both alike.

The simulation loop checks every round for user code (a shape/dtype test and one unsigned
comparison: ``Discrete.check``) and round 1 for the built-ins, whose actions are arg-maxima or
draws over the arms by construction. Reported: process CPU seconds (median of ``--repeat``)
and the ratio every-round / round-1.

    .venv/bin/python benchmarks/bench_validate_actions.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
from impactbandits.registry import build_environment, build_policy

HORIZON = 10_000


def cpu_seconds(policy: str, replications: int, arms: int, every_round: bool) -> float:
    env = build_environment("bernoulli", {"means": list(np.linspace(0.1, 0.9, arms))})
    learner = build_policy(policy, {})
    reps = range(replications)
    start = time.process_time()
    simulate(
        env,
        learner,
        HORIZON,
        None,
        np.array([HORIZON]),
        EnvironmentRandom(0, 1, reps),
        BatchRNG.from_key(0, (2,), reps),
        check_actions=every_round,
    )
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"T = {HORIZON}, CPU seconds (median of {args.repeat}), interleaved")
    print(f"{'policy':8} {'R':>4} {'K':>4} {'round 1':>9} {'every':>9} {'ratio':>7}")
    for policy, replications, arms in [
        ("ucb1", 1, 2),
        ("greedy", 1, 2),
        ("ucb1", 100, 2),
        ("ucb1", 100, 100),
    ]:
        first, every = [], []
        for _ in range(args.repeat):
            first.append(cpu_seconds(policy, replications, arms, every_round=False))
            every.append(cpu_seconds(policy, replications, arms, every_round=True))
        a, b = statistics.median(first), statistics.median(every)
        print(f"{policy:8} {replications:4d} {arms:4d} {a:9.3f} {b:9.3f} {b / a:7.3f}")


if __name__ == "__main__":
    main()
