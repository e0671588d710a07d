"""Command-line interface: ``impactbandits run | reproduce | benchmark | report | export | list |
describe``.

Bad input (a spec error, an unknown name, an unusable output directory) prints one line,
``error: <field>: <what is allowed>``, and exits with status 2 — no traceback, nothing stored is
changed. Ctrl-C during a sweep exits with status 130 after keeping every finished result;
SIGTERM does the same and exits with status 143 (``error: terminated: K of N results are stored
in DIR; ...``). The worker processes of a sweep are ended with it, and exit by themselves if the
runner is killed (SIGKILL). One run at a time may write a directory: a second ``run`` or
``reproduce`` on it gets ``error: output: 'DIR' is in use by another run (pid N); ...``
(status 2) and changes nothing; ``export`` and ``report`` may read while a run writes.

A full disk is one line too (``error: output: disk full while storing results in DIR (K of N
stored); ...``, status 2; what was stored stays consistent), and so is a damaged store on
``export``/``report`` (``run``/``reproduce`` keep a copy of it and recompute what was lost).
What a reader should know — seeds left out of a table (``--all-seeds`` shows them), results
missing after an interrupted run, a store rebuilt — is printed as ``warning: ...`` lines on
stderr.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from impactbandits.cli import benchmark as _benchmark

# every error as one line and an exit status (moved from this module to .guards)
from impactbandits.cli.guards import _POSITIVE, _Group, _guard, _store_messages
from impactbandits.errors import SpecError

EXPORT_FORMATS = ("csv", "parquet")
LIST_WHAT = ("environments", "policies", "oracles", "figures")
#: The runner's backends (:data:`impactbandits.experiments.runner.BACKENDS`, tested equal;
#: repeated here so that ``--help`` does not import the runner).
BACKENDS = ("auto", "serial", "process", "dask")
VARIANTS = ("paper", "authors-code", "authors-ucb1")


def _run_options(function: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--out",
            "out",
            metavar="DIR",
            default=None,
            help="Run directory (default: runs/<name>-<key>).",
        ),
        click.option(
            "--backend",
            type=click.Choice(BACKENDS),
            default="auto",
            show_default=True,
            help="Where the simulations run: auto = in this process when the planned work is "
            "small (at most 5 million pulls), else a process pool over all cores.",
        ),
        click.option(
            "--workers", type=_POSITIVE, default=None, help="Worker processes (default: all cores)."
        ),
        click.option("--scheduler", default=None, help="Dask scheduler address (backend dask)."),
        click.option(
            "--seeds", type=_POSITIVE, default=None, help="Override the number of replications."
        ),
        click.option(
            "--batch-size",
            "batch_size",
            type=_POSITIVE,
            default=None,
            help="Replications simulated together per task (default: planned per worker count).",
        ),
        click.option(
            "--progress/--no-progress",
            default=None,
            help="Progress bar (default: on when the terminal is interactive).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


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

    summary = run_experiment(
        spec,
        run_dir=out,
        backend=backend,
        workers=workers,
        scheduler=scheduler,
        batch_size=batch_size,
        progress=sys.stderr.isatty() if progress is None else progress,
        log=lambda line: click.echo(line, err=True),
    )
    click.echo(
        f"{summary.computed} results computed, {summary.reused} reused -> {summary.run_dir}",
        err=True,
    )
    return summary.run_dir


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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="impactbandits")
def cli() -> None:
    """Bandits in which the learner's own actions change future rewards."""


@cli.command()
@click.argument("spec_path", metavar="SPEC.toml")
@_run_options
@click.option(
    "--report/--no-report", default=True, show_default=True, help="Write report.html after the run."
)
@_guard
@_store_messages
def run(
    spec_path: str,
    out: str | None,
    backend: str,
    workers: int | None,
    scheduler: str | None,
    seeds: int | None,
    batch_size: int | None,
    progress: bool | None,
    report: bool,
) -> None:
    """Run the experiment described by SPEC.toml (resumes an interrupted run).

    Names a run directory with --out (default runs/<name>-<key>); running the same command
    again resumes it. How long it takes depends on the spec: the compiled loops run about
    10^6-10^7 pulls per CPU second for the common policies (see `impactbandits describe
    KIND`)."""
    from impactbandits.experiments.spec import load_spec

    spec = load_spec(spec_path, seeds=seeds)
    run_dir = _execute(spec, out, backend, workers, scheduler, batch_size, progress)
    if report:
        from impactbandits.experiments.report import write_report

        redraw = f"impactbandits report {shlex.quote(str(run_dir))}"
        click.echo(_report_phase(run_dir, redraw, lambda: write_report(run_dir)))


@cli.command()
@click.argument("name")
@click.option("--quick", is_flag=True, help="Reduced grid: seconds instead of minutes.")
@click.option(
    "--variant",
    type=click.Choice(VARIANTS),
    default="paper",
    show_default=True,
    help="authors-code: every component as in the authors' published code (figures whose "
    "authors published code; see the fidelity ledger); authors-ucb1 (ron-fig1, ron-fig2): "
    "only SRUM's black box as in the authors' code.",
)
@_run_options
@_guard
@_store_messages
def reproduce(
    name: str,
    quick: bool,
    variant: str,
    out: str | None,
    backend: str,
    workers: int | None,
    scheduler: str | None,
    seeds: int | None,
    batch_size: int | None,
    progress: bool | None,
) -> None:
    """Reproduce a registered paper figure (NAME from `impactbandits list figures`) and write
    its report.

    On 2 cores with the compiled loops, a figure takes 2 to 886 CPU seconds at full paper scale
    (1,937 CPU s, about 19 min, for all 26 registered figures) and a few seconds with --quick;
    `impactbandits describe NAME` shows a figure's size. Interrupted runs resume where they
    stopped."""
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.report import write_report

    figure = get_figure(name)
    spec = figure.spec(quick, variant)
    if seeds is not None:
        spec = spec.replace(seeds=seeds)
    run_dir = _execute(spec, out, backend, workers, scheduler, batch_size, progress)

    def draw() -> Path:
        extra = figure.draw(run_dir, variant)
        return write_report(run_dir, extra_figures=extra)

    flags = "".join(
        [" --quick" if quick else "", f" --variant {variant}" if variant != "paper" else ""]
    )
    seeds_flag = f" --seeds {seeds}" if seeds is not None else ""
    redraw = f"impactbandits reproduce {name}{flags}{seeds_flag} --out {shlex.quote(str(run_dir))}"
    click.echo(_report_phase(run_dir, redraw, draw))


_ALL_SEEDS = click.option(
    "--all-seeds",
    "all_seeds",
    is_flag=True,
    help="Show every stored seed (default: the seeds of the latest run's spec).",
)


@cli.command()
@click.argument("run_dir", metavar="RUN_DIR")
@_ALL_SEEDS
@_guard
@_store_messages
def report(run_dir: str, all_seeds: bool) -> None:
    """Write RUN_DIR/report.html with figures and a summary table."""
    from impactbandits.experiments.report import write_report

    click.echo(write_report(run_dir, seeds="all" if all_seeds else None))


@cli.command()
@click.argument("run_dir", metavar="RUN_DIR")
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="csv", show_default=True
)
@click.option(
    "--out",
    "--output",
    "-o",
    "output",
    metavar="FILE",
    default=None,
    help="File to write (default: RUN_DIR/results.FORMAT).",
)
@click.option("--trajectories", is_flag=True, help="Include intra-run checkpoints.")
@_ALL_SEEDS
@_guard
@_store_messages
def export(run_dir: str, fmt: str, output: str | None, trajectories: bool, all_seeds: bool) -> None:
    """Export the tidy table: one row per (cell, seed, horizon)."""
    from impactbandits.experiments.tidy import tidy_table

    table = tidy_table(run_dir, trajectories=trajectories, seeds="all" if all_seeds else None)
    path = Path(output) if output else Path(run_dir) / f"results.{fmt}"
    if path.is_dir():
        raise SpecError("output", f"{str(path)!r} is a directory; give a file name")
    _write_atomically(path, lambda target: _write_table(table, target, fmt))
    click.echo(path)


def _write_table(table: Any, target: Path, fmt: str) -> None:
    if fmt == "csv":
        table.to_csv(target, index=False)
    else:
        table.to_parquet(target, index=False)


def _write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """``write`` a temporary file beside ``path``, then rename it: a failure (a full disk)
    leaves no half-written ``path`` (an earlier one stays), and the error names ``path``
    (a full disk: :func:`_store_messages`' line)."""
    from impactbandits.experiments.store_files import is_disk_full

    special = path.exists() and not path.is_file()  # a device or a pipe: written as it is
    partial = path if special else path.with_name(f".{path.name}.partial")

    def discard() -> None:
        if not special:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)

    try:
        write(partial)
        if not special:
            partial.replace(path)
    except OSError as exc:
        discard()
        if is_disk_full(exc):  # pandas' error names no file
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise SpecError("output", f"cannot write {str(path)!r} ({exc.strerror or exc})") from None
    except BaseException:
        discard()
        raise


@cli.command(name="list")
@click.argument("what", required=False, default=None, type=click.Choice(LIST_WHAT))
@_guard
def list_(what: str | None) -> None:
    """List environments, policies, oracles and figures (or one of them); `impactbandits
    describe NAME` gives one in full."""
    import shutil
    import textwrap

    columns = min(shutil.get_terminal_size((100, 24)).columns, 120)
    for section in LIST_WHAT if what is None else (what,):
        click.echo(f"{section}:")
        rows = _list_rows(section)
        width = max((len(name) for name, _ in rows), default=0)
        for name, text in rows:
            lines = textwrap.wrap(text, max(30, columns - width - 4)) or [""]
            click.echo(f"  {name.ljust(width)}  {lines[0]}")
            for line in lines[1:]:
                click.echo(f"  {' ' * width}  {line}")


def _list_rows(section: str) -> list[tuple[str, str]]:
    """``(name, one line)`` for each entry of a ``list`` section: a figure's title (which
    imports only its paper's module), a component's docstring summary (the registry is
    imported for components only)."""
    if section == "figures":
        from impactbandits.experiments.figures import FIGURES, get_figure

        return [(name, get_figure(name).title) for name in sorted(FIGURES)]
    from impactbandits.describe import summary
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES, resolve

    tables = {"environments": ENVIRONMENTS, "policies": POLICIES, "oracles": ORACLES}
    roles = {"environments": "environment", "policies": "policy", "oracles": "oracle"}
    return [
        (name, summary(resolve(roles[section], name, section))) for name in sorted(tables[section])
    ]


@cli.command()
@click.argument("kind", metavar="KIND")
@_guard
def describe(kind: str) -> None:
    """Describe an environment, policy, oracle or figure (a name from `impactbandits list`, or
    an import path 'module:Name'): its citation, parameters with types, defaults and allowed
    values, or a figure's size."""
    import shutil

    from impactbandits.describe import describe as text

    click.echo(text(kind, width=min(shutil.get_terminal_size((100, 24)).columns, 100) - 2))


_benchmark.register(cli, _run_options, _guard, _store_messages)


#: Thread pools of the BLAS libraries NumPy and SciPy load, capped at one thread unless the user
#: set them: the library's work is single-threaded within a process (its parallelism is
#: processes, ``--workers``), and an idle pool costs every process ~0.05 CPU s as it starts.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def main() -> None:
    import os

    for name in BLAS_THREADS:  # before anything imports NumPy (inherited by worker processes)
        os.environ.setdefault(name, "1")
    cli()
