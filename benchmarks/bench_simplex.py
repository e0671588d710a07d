"""Speed of the exact UCB-index oracle of Tang, Ho & Liu (2021), Section 4, Eq. (6).

One ``maximise_index`` call (Algorithm 1, line 4) for ``K = 10`` groups on the ε-grid with
``M = 1/ε = 40`` levels, i.e. over ``C(39, 9) ≈ 2.1·10⁸`` meta-arms, with the paper's bonus
``sqrt(K ln t / min n)``. Cases:

* ``long run`` — random scores ``jε·r̄`` and counts in 1..5000 (many distinct counts);
* ``many ties`` — counts in 1..3 and scores on a coarse lattice (many equal counts and values);
* ``all tied`` — all scores 0 and all counts 1 (every one of the K·M pins is optimal);
* ``long run`` with a flat bonus, where pruning cannot skip any threshold of the threshold method.

Also timed: the threshold method ``maximise_index_by_thresholds`` (the independent exact
cross-check). Target: ≤ 100 ms per ``maximise_index``. Run ``python benchmarks/bench_simplex.py``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable

import numpy as np

from impactbandits.policies.impact_index import (
    maximise_index,
    maximise_index_by_thresholds,
    paper_bonus,
)

N_GROUPS = 10
LEVELS = 40
LONG_RUN_MAX_COUNT = 5000
TIED_MAX_COUNT = 3
TIED_SCORE_STEPS = 4
TARGET_SECONDS = 0.100
DEFAULT_REPEAT = 21
SEED = 2021


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``run`` over ``repeat`` calls (after one warm-up call)."""
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def instances(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The benchmark cases: ``name -> (scores, counts)``, each ``(K, M)``."""
    rng = np.random.default_rng(seed)
    shape = (N_GROUPS, LEVELS)
    level_share = np.arange(1, LEVELS + 1) / LEVELS  # s(k, j) = jε·r̄(k, j), r̄ ∈ [0, 1]
    long_run = (rng.random(shape) * level_share, rng.integers(1, LONG_RUN_MAX_COUNT + 1, shape))
    ties = (
        np.round(rng.random(shape) * TIED_SCORE_STEPS) / TIED_SCORE_STEPS * level_share,
        rng.integers(1, TIED_MAX_COUNT + 1, shape),
    )
    all_tied = (np.zeros(shape), np.ones(shape, dtype=np.int64))
    return {"long run": long_run, "many ties": ties, "all tied": all_tied}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)

    n_meta_arms = math.comb(LEVELS - 1, N_GROUPS - 1)
    print(f"UCB index oracle (Eq. 6): K = {N_GROUPS}, M = 1/ε = {LEVELS}")
    print(
        f"  brute force would enumerate C({LEVELS - 1}, {N_GROUPS - 1}) = {n_meta_arms:,} meta-arms"
    )
    worst = 0.0
    for name, (scores, counts) in instances(args.seed).items():
        bonus = paper_bonus(N_GROUPS, int(counts.sum()))
        t_pin = median_seconds(
            lambda s=scores, n=counts, b=bonus: maximise_index(s, n, b), args.repeat
        )
        t_thr = median_seconds(
            lambda s=scores, n=counts, b=bonus: maximise_index_by_thresholds(s, n, b), args.repeat
        )
        levels, value = maximise_index(scores, counts, bonus)
        _, check = maximise_index_by_thresholds(scores, counts, bonus)
        distinct = len(np.unique(counts))
        worst = max(worst, t_pin)
        print(
            f"  {name:9s} ({distinct:4d} distinct counts): maximise_index {t_pin * 1e3:7.3f} ms,"
            f" thresholds {t_thr * 1e3:7.2f} ms, |Δ value| = {abs(value - check):.1e}"
        )
        print(f"            levels {levels.tolist()}, index {value:.6f}")
    # The threshold method without help from pruning: a flat bonus keeps every threshold.
    scores, counts = instances(args.seed)["long run"]
    flat = np.zeros_like
    t_flat = median_seconds(lambda: maximise_index_by_thresholds(scores, counts, flat), args.repeat)
    t_pin = median_seconds(lambda: maximise_index(scores, counts, flat), args.repeat)
    print(
        f"  long run, flat bonus (no threshold pruned): maximise_index {t_pin * 1e3:.3f} ms,"
        f" thresholds {t_flat * 1e3:.2f} ms"
    )
    verdict = "meets" if worst <= TARGET_SECONDS else "MISSES"
    print(
        f"  worst median {worst * 1e3:.3f} ms: {verdict} the ≤ {TARGET_SECONDS * 1e3:.0f} ms target"
    )


if __name__ == "__main__":
    main()
