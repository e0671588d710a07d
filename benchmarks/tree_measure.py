"""Measuring a benchmark from outside: a command's whole process tree, or a code section inside a
workload run in a fresh interpreter (``benchmarks/engine_table.py`` uses both).

- :func:`run_tree` runs a command to the end: wall seconds, CPU of the whole process tree and peak
  RSS. This process makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``, Linux), so
  descendants orphaned when the command exits (a multiprocessing forkserver and its workers) are
  reaped here and their CPU arrives exactly in ``getrusage(RUSAGE_CHILDREN)``; without it the
  CPU falls back on psutil sampling. Peak RSS of the tree is sampled (``peak_rss.PeakRSS``), the
  main process's comes from ``wait4``.
- :func:`workload` registers a function; :func:`run_workload` runs it in a fresh interpreter
  (``python tree_measure.py MODULE_FILE NAME --params JSON``, which imports ``MODULE_FILE`` and
  prints the function's JSON result) under :func:`run_tree`, so its peak RSS is its own.
- :class:`Section` times a code section inside that process: ``process_time`` plus, with
  ``children``, the CPU of the processes it starts (:class:`TreeSampler`, psutil, every 0.1 s).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from peak_rss import PeakRSS

PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Measured:
    """One subprocess (and everything it started), timed from outside."""

    wall: float
    cpu: float
    rss_main_mb: float
    rss_tree_mb: float
    code: int
    stdout: str
    stderr: str
    load: tuple[float, float, float]
    exact_cpu: bool
    result: dict[str, Any] = field(default_factory=dict)


_SUBREAPER: bool | None = None


def _subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux; once)."""
    global _SUBREAPER
    if _SUBREAPER is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _SUBREAPER = False
    return _SUBREAPER


def _reap_orphans(timeout: float = 60.0) -> bool:
    """Wait for every remaining child (the forkserver and resource tracker of a finished
    command exit when their parent's pipes close). False if some are still alive."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def run_tree(command: list[str], cwd: str | Path | None = None) -> Measured:
    """Run ``command`` to the end: wall, CPU of the whole process tree, peak RSS."""
    exact = _subreaper()
    load = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd)
        with PeakRSS(proc.pid, interval=0.2) as tree:
            _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if exact and not _reap_orphans():
            print(f"warning: processes left by {command[:3]} still alive", file=sys.stderr)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    cpu = _cpu(after) - _cpu(before)
    if not exact:  # forkserver workers are never waited for: fall back on sampling
        cpu = max(cpu, tree.cpu_seconds)
    return Measured(
        wall=wall,
        cpu=cpu,
        rss_main_mb=max(usage.ru_maxrss / 1024, tree.peak_self),
        rss_tree_mb=tree.peak_total,
        code=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        load=load,
        exact_cpu=exact,
    )


def run_workload(name: str, **params: Any) -> Measured:
    """Run ``WORKLOADS[name](**params)`` in a fresh interpreter; its JSON goes to ``.result``."""
    module = Path(sys.modules[WORKLOADS[name].__module__].__file__ or "").resolve()
    command = [sys.executable, str(Path(__file__).resolve()), str(module), name]
    measured = run_tree([*command, "--params", json.dumps(params)])
    if measured.code != 0:
        tail = measured.stderr.strip().splitlines()[-3:]
        raise RuntimeError(f"workload {name} failed (exit {measured.code}): {' | '.join(tail)}")
    measured.result = json.loads(measured.stdout.strip().splitlines()[-1])
    return measured


class TreeSampler:
    """CPU (per process, last seen) and summed RSS of this process's descendants, sampled."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.me = psutil.Process()
        self.cpu: dict[tuple[int, float], float] = {}
        self.base: dict[tuple[int, float], float] = {}
        self.peak_tree_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        total = self.me.memory_info().rss
        for proc in self.me.children(recursive=True):
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    self.cpu[(proc.pid, proc.create_time())] = times.user + times.system
                    total += proc.memory_info().rss
            except psutil.Error:
                continue
        self.peak_tree_mb = max(self.peak_tree_mb, total / 2**20)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(psutil.Error):
                self.sample()

    def start(self) -> None:
        self.sample()
        self.base = dict(self.cpu)
        self._thread.start()

    def stop(self) -> float:
        """Stop sampling; CPU seconds of descendants since :meth:`start`."""
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(psutil.Error):
            self.sample()
        return sum(v - self.base.get(k, 0.0) for k, v in self.cpu.items())


class Section:
    """Wall and CPU seconds of a code section in this process; with ``children``, also the CPU
    of the processes it starts (sampled: psutil's scan of /proc costs a few ms per sample, so
    it runs only where there are workers to see)."""

    def __init__(self, children: bool = False) -> None:
        self.tree = TreeSampler() if children else None

    def __enter__(self) -> Section:
        if self.tree is not None:
            self.tree.start()
        self._cpu = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu
        if self.tree is not None:
            self.cpu += self.tree.stop()

    def record(self, **extra: Any) -> dict[str, Any]:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tree = self.tree.peak_tree_mb if self.tree is not None else 0.0
        peaks = {"rss_mb": rss, "rss_tree_mb": max(rss, tree)}
        return {"cpu": self.cpu, "wall": self.wall, **peaks, **extra}


# == workloads: functions run in their own subprocess by run_workload ============================

WORKLOADS: dict[str, Any] = {}


def workload(fn: Any) -> Any:
    """Register ``fn`` (module level, returns JSON-able data) for :func:`run_workload`."""
    WORKLOADS[fn.__name__] = fn
    return fn


def main(argv: list[str] | None = None) -> None:
    """The subprocess of :func:`run_workload`: import the module, run the workload, print JSON."""
    parser = argparse.ArgumentParser(description="Run one workload and print its JSON result.")
    parser.add_argument("module", type=Path, help="the file that defines the workload")
    parser.add_argument("workload", help="the workload function's name")
    parser.add_argument("--params", default="{}", help="keyword arguments, as a JSON object")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.module.parent))
    fn = getattr(importlib.import_module(args.module.stem), args.workload)
    print(json.dumps(fn(**json.loads(args.params))), flush=True)


if __name__ == "__main__":
    main()
