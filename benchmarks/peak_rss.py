"""Peak resident memory of a process tree, sampled with psutil (workers included)."""

from __future__ import annotations

import threading
import time

import psutil


class PeakRSS:
    """Context manager sampling the RSS of ``pid`` (default: this process) and descendants."""

    def __init__(self, pid: int | None = None, interval: float = 0.1) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_total = 0.0
        self.peak_self = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        root = psutil.Process(self.pid)
        while not self._stop.is_set():
            try:
                own = root.memory_info().rss
                total = own + sum(c.memory_info().rss for c in root.children(recursive=True))
            except psutil.Error:
                time.sleep(self.interval)
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
