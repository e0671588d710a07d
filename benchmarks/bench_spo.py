"""Wall time of noisy SPO (Lindner et al. 2021, §4): one run, 2 arms, T = 10⁴ (target < 1 s).

Single-peaked instance 3 with Gaussian noise σ = 0.05 and the LP (⋆) bound with ε̄ = 2σ,
refreshing every arm's index every round, through the library's simulation loop (one
replication). Also times a batch of 30 replications (the paper's seeds) for reference.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.envs.rested_families import SinglePeakedBandit
from impactbandits.kernels import simulate
from impactbandits.policies.spo import SPO

HORIZON = 10_000
SIGMA = 0.05


def run_seconds(replications: int) -> float:
    env = SinglePeakedBandit(instance=3, length=HORIZON, noise="gaussian", sigma=SIGMA)
    reps = list(range(replications))
    start = time.perf_counter()
    simulate(
        env,
        SPO(noise_bound=2 * SIGMA),
        HORIZON,
        HORIZON,
        np.array([HORIZON]),
        EnvironmentRandom(0, 1, reps),
        BatchRNG.from_key(0, (2,), reps),
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    one = statistics.median(run_seconds(1) for _ in range(args.repeat))
    thirty = statistics.median(run_seconds(30) for _ in range(max(1, args.repeat // 2)))
    print(
        f"noisy SPO, 2 arms, T = {HORIZON}: one run {one:.3f} s (target < 1 s); "
        f"30 replications batched {thirty:.2f} s ({thirty / 30:.3f} s per run)"
    )


if __name__ == "__main__":
    main()
