"""π_low's switches between ranking policies for T up to 10⁶ (Cella & Cesa-Bianchi 2020,
Theorem 3: O(k ln ln T)), on the Figure-2 instance (k = 7, delays drawn per replication),
one replication per T: prints the count, the bound k·(S + 1) with S the number of stages, and
k ln ln T."""

from __future__ import annotations

import math
import time

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.delay import DelayedPayoffBandit
from impactbandits.kernels import simulate
from impactbandits.policies.delay import PiLow, stage_count

MEANS = [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0]


def main() -> None:
    k = len(MEANS)
    print(f"{'T':>9} {'switches':>9} {'k(S+1)':>7} {'k ln ln T':>10} {'seconds':>8}")
    for T in (10**3, 10**4, 10**5, 10**6):
        env = DelayedPayoffBandit(MEANS, switching_cost=1.0)
        start = time.perf_counter()
        trajectory = simulate(
            env,
            BatchedSimplePolicy(PiLow()),
            T,
            T,
            np.array([T]),
            EnvironmentRandom(0, 1, [0]),
            BatchRNG.from_key(0, (2,), [0]),
        )
        seconds = time.perf_counter() - start
        switches = int(trajectory.phase_switches[0, -1])
        print(
            f"{T:>9} {switches:>9} {k * (stage_count(T, k) + 1):>7} "
            f"{k * math.log(math.log(T)):>10.1f} {seconds:>8.1f}"
        )


if __name__ == "__main__":
    main()
