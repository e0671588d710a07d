"""Peak memory of a 10,000-cell sweep (results stream to the store; memory must stay flat).

Run by ``benchmarks/run.py`` in its own process so the peak RSS it reports is the sweep's:
100 Bernoulli environments × 100 ε-greedy policies, horizon 200, 1 seed, process backend.
Prints one JSON line: cells, seconds, peak RSS of the runner and of runner + workers (MB).
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time

import psutil

from impactbandits import ExperimentSpec, run_experiment


class PeakRSS:
    """Samples the RSS of this process and all its descendants (workers, forkserver)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.peak_total = 0.0
        self.peak_self = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            try:
                own = me.memory_info().rss
                total = own + sum(c.memory_info().rss for c in me.children(recursive=True))
            except psutil.Error:
                continue
            self.peak_self = max(self.peak_self, own / 2**20)
            self.peak_total = max(self.peak_total, total / 2**20)
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


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
