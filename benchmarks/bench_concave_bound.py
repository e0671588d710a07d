"""Speed of the exact LP (⋆) solver (Lindner et al. 2021, Section 4) against HiGHS.

One arm with n = 1000 past pulls of a concave increasing curve observed with bounded noise
|ε| ≤ 0.1 (intervals ŷ ± 0.1) and R = 10⁴ remaining pulls. Timed, each as a median over
repetitions (time.perf_counter):

* ``ConcaveBound.value(R)`` — SPO's per-arm, per-round query (R counting down, as in SPO);
* ``ConcaveBound.add`` — per observation, amortised over the n pulls;
* ``lp_bound`` — one-shot from the n intervals;
* ``lp_bound_highs`` — scipy's HiGHS on the sparse LP (the test reference).

Target: value(R) ≥ 1000× faster than HiGHS. Run ``python benchmarks/bench_concave_bound.py``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from impactbandits.oracles.concave_bound import ConcaveBound, lp_bound
from impactbandits.oracles.concave_bound_reference import lp_bound_highs

PAST_PULLS = 1000
REMAINING = 10_000
NOISE_BOUND = 0.1
#: True curve f(j) = CURVE_SCALE·(1 − (1 + j/CURVE_RATE)^(−CURVE_POWER)): concave, increasing.
CURVE_SCALE = 0.9
CURVE_RATE = 100.0
CURVE_POWER = 0.5
TARGET_RATIO = 1000.0
DEFAULT_REPEAT = 7
HIGHS_REPEAT = 3
SEED = 2021


def instance(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Intervals ŷ_j ± ε̄ around f(j) + noise, |noise| ≤ ε̄, j = 1..PAST_PULLS."""
    rng = np.random.default_rng(seed)
    j = np.arange(1, PAST_PULLS + 1, dtype=float)
    truth = CURVE_SCALE * (1.0 - (1.0 + j / CURVE_RATE) ** -CURVE_POWER)
    observed = truth + rng.uniform(-NOISE_BOUND, NOISE_BOUND, PAST_PULLS)
    return observed - NOISE_BOUND, observed + NOISE_BOUND


def median_seconds(run: Callable[[], object], repeat: int, calls: int = 1) -> float:
    """Median over ``repeat`` timings of ``run``, divided by the ``calls`` it makes."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--highs-repeat", type=int, default=HIGHS_REPEAT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)

    lower, upper = instance(args.seed)
    bound = ConcaveBound.from_intervals(lower, upper)

    def countdown() -> None:
        value = bound.value
        for remaining in range(REMAINING, 0, -1):
            value(remaining)

    def feed() -> None:
        ConcaveBound.from_intervals(lower, upper)

    t_value = median_seconds(countdown, args.repeat, calls=REMAINING)
    t_add = median_seconds(feed, args.repeat, calls=PAST_PULLS)
    t_once = median_seconds(lambda: lp_bound(lower, upper, REMAINING), args.repeat)
    t_highs = median_seconds(lambda: lp_bound_highs(lower, upper, REMAINING), args.highs_repeat)

    ours, once = bound.value(REMAINING), lp_bound(lower, upper, REMAINING)
    highs = lp_bound_highs(lower, upper, REMAINING)
    print(f"LP (⋆): n = {PAST_PULLS} past pulls (noise bound {NOISE_BOUND}), R = {REMAINING}")
    print(f"  optimum: incremental {ours!r}, one-shot {once!r}, HiGHS {highs!r}")
    if ours is not None and highs is not None:
        print(f"  |incremental − HiGHS| = {abs(ours - highs):.2e}")
    print(f"  ConcaveBound.value(R)   {t_value * 1e6:10.3f} µs per call")
    print(f"  ConcaveBound.add        {t_add * 1e6:10.3f} µs per observation (amortised)")
    print(f"  lp_bound (one-shot)     {t_once * 1e6:10.1f} µs")
    print(f"  lp_bound_highs (HiGHS)  {t_highs * 1e3:10.1f} ms")
    ratio_value, ratio_once = t_highs / t_value, t_highs / t_once
    verdict = "meets" if ratio_value >= TARGET_RATIO else "MISSES"
    print(f"  speed-up vs HiGHS: value(R) {ratio_value:,.0f}×, one-shot {ratio_once:,.0f}×")
    print(f"  ({verdict} the ≥ {TARGET_RATIO:,.0f}× target for the per-round query)")


if __name__ == "__main__":
    main()
