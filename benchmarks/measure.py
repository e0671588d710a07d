"""Run a command; print its wall time, and the CPU seconds and peak RSS of its whole process
tree (psutil, sampled every 0.5 s; CPU of a process that lives less than that may be missed).

.venv/bin/python benchmarks/measure.py -- .venv/bin/impactbandits reproduce lindner-fig1
"""

from __future__ import annotations

import subprocess
import sys
import time

from peak_rss import PeakRSS


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: measure.py -- COMMAND [ARGS...]")
    start = time.perf_counter()
    proc = subprocess.Popen(args)
    with PeakRSS(proc.pid) as rss:
        code = proc.wait()
    seconds = time.perf_counter() - start
    print(
        f"wall {seconds:.1f} s, CPU {rss.cpu_seconds:.1f} s (process tree), "
        f"peak RSS of the process tree {rss.peak_total:.0f} MB "
        f"(main process {rss.peak_self:.0f} MB), exit {code}"
    )
    sys.exit(code)


if __name__ == "__main__":
    main()
