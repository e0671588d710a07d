"""Progress of a command's long phases after the simulation (whose bar the runner draws): the
report, figure by figure, and an export.

On a terminal a phase is a live line — a spinner, what it is doing, how many items are done and
the time elapsed — left on screen when it ends; elsewhere (a log file, CI) it is one line when it
ends: ``report: 12 figures in 8.4 s``. Nothing is printed with ``--quiet``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["Phase"]


class Phase:
    """One phase: ``with Phase("report", unit="figure", live=tty, echo=...) as phase:`` then
    :meth:`advance` per item done (``phase.advance`` fits
    :attr:`~impactbandits.experiments.figure_output.FigureOutput.on_saved`).

    ``live``: draw the live line (a terminal); ``echo``: where the closing line goes (``None``:
    nowhere, as with ``--quiet``); ``unit``: the items' name (``None``: the phase is not
    counted, only timed)."""

    def __init__(
        self,
        name: str,
        *,
        unit: str | None = None,
        live: bool = False,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        self.name, self.unit, self.live, self.echo = name, unit, live, echo
        self.count = 0
        self._start = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Phase:
        self._start = time.perf_counter()
        if self.live and self.echo is not None:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._describe(""))
        return self

    def _describe(self, item: str) -> str:
        counted = f" {self.count} {self.unit}{'s' if self.count != 1 else ''}" if self.unit else ""
        return f"{self.name}:{counted}" + (f" (last: {item})" if item else "")

    def advance(self, item: Path | str | None = None) -> None:
        """One more item done (``item``: its file or name, shown on the live line)."""
        self.count += 1
        if self._bar is not None:
            shown = item.name if isinstance(item, Path) else (item or "")
            self._bar.update(self._task, description=self._describe(shown))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        seconds = time.perf_counter() - self._start
        if self._bar is not None:
            self._bar.update(self._task, description=self._describe(""))
            self._bar.stop()
        elif self.echo is not None and kind is None:
            self.echo(f"{self._describe('')} in {seconds:.1f} s")
