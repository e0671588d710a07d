"""Running a spec from the command line and drawing its report: the session's informational and
``-v`` lines, the report's progress, and Ctrl-C/SIGTERM while the report is drawn answered by
one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from impactbandits.cli.guards import Verbosity, verbosity


def _execute(
    spec: Any,
    out: str | None,
    backend: str,
    workers: int | None,
    scheduler: str | None,
    batch_size: int | None,
    progress: bool | None,
) -> Path:
    from impactbandits.experiments.runner import run_experiment

    talk = verbosity()
    if progress is None:  # -q: no bar unless --progress asks for one
        progress = sys.stderr.isatty() and not talk.quiet
    if talk.verbose:
        from impactbandits.experiments.backends import default_workers

        count = 1 if backend == "serial" else (workers or default_workers())
        talk.detail(
            f"asked for: backend {backend}, {count} worker(s), batch size "
            f"{batch_size or 'planned per worker count'}"
        )
    summary = run_experiment(
        spec,
        run_dir=out,
        backend=backend,
        workers=workers,
        scheduler=scheduler,
        batch_size=batch_size,
        progress=progress,
        log=talk.info,
    )
    talk.info(f"{summary.computed} results computed, {summary.reused} reused -> {summary.run_dir}")
    if talk.verbose:
        _session_detail(summary, talk)
    return summary.run_dir


def _session_detail(summary: Any, talk: Verbosity) -> None:
    """With ``-v``: where and how long this session ran (the session the runner stored)."""
    if not summary.computed:
        talk.detail("session: nothing to compute (every result was stored)")
        return
    from impactbandits.experiments.provenance import sessions_from_meta
    from impactbandits.experiments.store import Store

    with Store.open_existing(summary.run_dir) as store:
        sessions = sessions_from_meta(store.meta("sessions"))
    last = sessions[-1] if sessions else None
    if last is not None and last.computed == summary.computed:  # (this session's record)
        copied = summary.computed - summary.simulated
        talk.detail(
            f"session: backend {last.backend}, {last.workers} worker(s), "
            f"{last.wall_seconds:.2f} s wall, {last.cpu_seconds:.2f} s CPU; "
            f"{summary.simulated} replications simulated"
            + (f", {copied} copied from identical deterministic runs" if copied else "")
        )


def _show_report(run_dir: Path, redraw: str, draw: Callable[[Any], Path], output: Any) -> None:
    """Draw the report (:func:`_report_phase`) with its progress, figure by figure
    (:class:`~impactbandits.cli.phases.Phase`), and print its path; with ``-v``, how long it
    took. ``draw(output)`` draws with ``output`` (a
    :class:`~impactbandits.experiments.figure_output.FigureOutput`)."""
    import dataclasses
    import time

    from impactbandits.cli.phases import Phase

    talk = verbosity()
    started = time.perf_counter()
    live = sys.stderr.isatty() and not talk.quiet
    with Phase("report", unit="figure", live=live, echo=None if talk.quiet else talk.info) as phase:
        counted = dataclasses.replace(output, on_saved=phase.advance)
        path = _report_phase(run_dir, redraw, lambda: draw(counted))
    talk.detail(f"report drawn in {time.perf_counter() - started:.2f} s")
    click.echo(path)


def _report_phase(run_dir: Path, redraw: str, draw: Callable[[], Path]) -> Path:
    """``draw()`` (the report after a finished run), with Ctrl-C and SIGTERM answered by one
    line that says every result is stored and how to draw the report again (exit status 130 /
    143) instead of a silent exit."""
    from impactbandits.experiments.processes import TerminateRequest, sigterm_stops
    from impactbandits.experiments.runner import Interrupted, Terminated

    try:
        with sigterm_stops():
            return draw()
    except (KeyboardInterrupt, TerminateRequest) as stop:
        error = Terminated if isinstance(stop, TerminateRequest) else Interrupted
        word = "terminated" if error is Terminated else "interrupted"
        raise error(
            f"{word} while drawing the report: every result is stored in {run_dir}; draw it "
            f"again with `{redraw}` (nothing is recomputed)"
        ) from None
