"""Peak memory of a 10,000-cell sweep (results stream to the store; memory must stay flat).

Run by ``benchmarks/run.py`` in its own process so the peak RSS it reports is the sweep's:
100 Bernoulli environments × 100 ε-greedy policies, horizon 200, 1 seed, process backend.
Prints one JSON line: cells, seconds, peak RSS of the runner and of runner + workers (MB).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time

from impactbandits import ExperimentSpec, run_experiment
from peak_rss import PeakRSS


def main() -> None:
    cells_side = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    environments = [
        {"kind": "bernoulli", "label": f"env{i}", "means": [0.2, 0.2 + 0.6 * i / cells_side]}
        for i in range(cells_side)
    ]
    policies = [
        {"kind": "epsilon-greedy", "label": f"eps{j}", "epsilon": j / cells_side}
        for j in range(cells_side)
    ]
    spec = ExperimentSpec.create(
        name="memory-sweep",
        environments=environments,
        policies=policies,
        horizons=[200],
        seeds=1,
        checkpoints=10,
    )
    with tempfile.TemporaryDirectory() as out, PeakRSS() as rss:
        start = time.perf_counter()
        summary = run_experiment(spec, out, backend="process", workers=2)
        seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "cells": summary.cells,
                "seconds": seconds,
                "runner_peak_rss_mb": rss.peak_self,
                "total_peak_rss_mb": rss.peak_total,
            }
        )
    )


if __name__ == "__main__":
    main()
