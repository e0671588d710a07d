#!/usr/bin/env python3
"""``smpybandits_reference.py`` unchanged, timed in CPU seconds as well as wall seconds.

Standalone like the reference (it does NOT import impactbandits): run it with the interpreter of
the SMPyBandits virtual environment, with the reference's arguments::

    PY=$(bash benchmarks/smpybandits_env.sh | tail -n 1)
    "$PY" benchmarks/smpybandits_cpu.py --repetitions 100 > smpy.json

The reference times each repetition's construction + ``startGame()`` + loop with
``time.perf_counter`` (two calls per repetition). Here its clock is replaced by one that returns
``time.process_time()`` and notes ``perf_counter`` on each call, so for every policy the JSON
has ``seconds`` / ``pulls_per_second`` in CPU seconds of this process (``cpu_seconds``,
``pulls_per_cpu_second``) and ``wall_seconds`` / ``pulls_per_wall_second`` of the same timed
sections. Nothing else changes (same seeds, reward tables and policies).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import smpybandits_reference as reference


class _Clock:
    """Stands in for the reference's ``time`` module: CPU time, wall time noted on the side."""

    def __init__(self):
        self.walls = []

    def perf_counter(self):
        self.walls.append(time.perf_counter())
        return time.process_time()


_clock = _Clock()
_run_policy = reference.run_policy


def run_policy(policy_class, kwargs, horizon, repetitions, seed):
    _clock.walls.clear()
    result = _run_policy(policy_class, kwargs, horizon, repetitions, seed)
    walls = _clock.walls
    wall = sum(walls[i + 1] - walls[i] for i in range(0, len(walls) - 1, 2))
    pulls = horizon * repetitions
    result["cpu_seconds"] = result["seconds"]
    result["pulls_per_cpu_second"] = result["pulls_per_second"]
    result["wall_seconds"] = wall
    result["pulls_per_wall_second"] = pulls / wall
    return result


reference.time = _clock
reference.run_policy = run_policy

if __name__ == "__main__":
    sys.exit(reference.main())
