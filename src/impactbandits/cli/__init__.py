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

Results (a report's path, a table's, ``--json`` documents) go to stdout, everything else to
stderr. The group's ``-q`` leaves out the informational and ``warning:`` lines and the progress
bar, ``-v`` adds the requested backend and the session's timings
(:class:`~impactbandits.cli.guards.Verbosity`, passed to the commands in click's context
object); ``error:`` lines are always printed. Arguments that name a figure or a component
complete in the shell (``_IMPACTBANDITS_COMPLETE``; the group's help says how), from the
registries' tables without importing a figure module.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import click
from click.shell_completion import CompletionItem

from impactbandits.cli import benchmark as _benchmark

# every error as one line and an exit status (moved from this module to .guards)
from impactbandits.cli.guards import (
    _POSITIVE,
    Verbosity,
    _Group,
    _guard,
    _store_messages,
    verbosity,
)
from impactbandits.errors import SpecError
from impactbandits.links import docs_page

EXPORT_FORMATS = ("csv", "parquet")
LIST_WHAT = ("environments", "policies", "oracles", "figures")
#: The runner's backends (:data:`impactbandits.experiments.runner.BACKENDS`, tested equal;
#: repeated here so that ``--help`` does not import the runner).
BACKENDS = ("auto", "serial", "process", "dask")
VARIANTS = ("paper", "authors-code", "authors-ucb1")


# -- shell completion ---------------------------------------------------------------------------


def _figure_names() -> list[str]:
    """The registered figures (the figure registry's table: no figure module is imported)."""
    from impactbandits.experiments.figures import FIGURES

    return sorted(FIGURES)


def _component_names() -> list[str]:
    """The built-in environments, policies and oracles, read from the registry's source files
    (``registry.py``, ``policies/names.py``) without running them: importing the registry loads
    NumPy and pydantic, about 0.3 s on every Tab press. Tested equal to the registry's tables;
    imports them after all if the sources cannot be read."""
    import ast

    root = Path(__file__).resolve().parents[1]
    wanted = {"registry.py": {"ENVIRONMENTS", "ORACLES"}, "policies/names.py": {"POLICIES"}}
    names: set[str] = set()
    try:
        for path, tables in wanted.items():
            found = {
                node.target.id: ast.literal_eval(node.value)
                for node in ast.parse((root / path).read_text(encoding="utf-8")).body
                if isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in tables
                and node.value is not None
            }
            if set(found) != tables:
                raise LookupError(path)
            for table in found.values():
                names.update(table)
    except (OSError, SyntaxError, ValueError, LookupError):  # no sources, or a new layout
        from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

        names = {*ENVIRONMENTS, *POLICIES, *ORACLES}
    return sorted(names)


def _matching(names: list[str], incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def _complete_figure(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    return _matching(_figure_names(), incomplete)


def _complete_kind(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    if ":" in incomplete:  # an import path: the shell cannot know the user's modules
        return []
    return _matching(sorted({*_figure_names(), *_component_names()}), incomplete)


def _complete_dir(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    return [CompletionItem(incomplete, type="dir")]  # the shell lists the directories


def _complete_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    return [CompletionItem(incomplete, type="file")]


def _decorated(function: Callable[..., Any], options: list[Any]) -> Callable[..., Any]:
    """``function`` with click ``options`` in the order listed (the first shown first)."""
    for option in reversed(options):
        function = option(function)
    return function


def _run_options(function: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--out",
            "out",
            metavar="DIR",
            default=None,
            shell_complete=_complete_dir,
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
            help="Progress bar (default: on when the terminal is interactive, off with -q).",
        ),
    ]
    return _decorated(function, options)


def _figure_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--figure-format`` and ``--figure-style``: how the report's figures are written."""
    from impactbandits.experiments.figure_output import FIGURE_FORMATS

    options = [
        click.option(
            "--figure-format",
            "figure_format",
            type=click.Choice(FIGURE_FORMATS),
            default="png",
            show_default=True,
            help="Figures for a paper: pdf or svg are written beside each PNG (the report shows "
            "the PNG); every figure also gets a CSV of its lines.",
        ),
        click.option(
            "--figure-style",
            "figure_style",
            metavar="STYLE",
            default=None,
            help="A Matplotlib style name or a .mplstyle file, applied over the library's "
            "style (font sizes for two panels across a paper's text width).",
        ),
    ]
    return _decorated(function, options)


def _figure_output(figure_format: str, figure_style: str | None) -> Any:
    """The checked :class:`~impactbandits.experiments.figure_output.FigureOutput`: a bad style
    is refused (one line, status 2) before anything runs."""
    from impactbandits.experiments.figure_output import FigureOutput

    return FigureOutput(format=figure_format, style=figure_style)


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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Only results (stdout) and errors: no progress bar, no informational or warning lines.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="More detail on stderr: the backend asked for, the session's timings.",
)
@click.version_option(package_name="impactbandits")
@click.pass_context
def cli(ctx: click.Context, quiet: bool, verbose: bool) -> None:
    """Bandits in which the learner's own actions change future rewards.

    Results (a report's path, a table's, --json documents) go to stdout; stderr carries
    `error: <field>: <what is allowed>` lines (always; exit status 2 for bad input), `warning:`
    and informational lines and the progress bar (not with -q), and detail such as timings
    (with -v).

    Shell completion of commands, options, figure and component names: add the line for your
    shell to its startup file (~/.bashrc, ~/.zshrc, ~/.config/fish/config.fish).

    \b
      bash:  eval "$(_IMPACTBANDITS_COMPLETE=bash_source impactbandits)"
      zsh:   eval "$(_IMPACTBANDITS_COMPLETE=zsh_source impactbandits)"
      fish:  _IMPACTBANDITS_COMPLETE=fish_source impactbandits | source
    """
    if quiet and verbose:
        ctx.fail("quiet: -q/--quiet and -v/--verbose exclude each other")
    ctx.obj = Verbosity(-1 if quiet else 1 if verbose else 0)


class _FigureCommand(click.Command):
    """A command whose help ends with the registered figure names (the figure registry's
    table: no figure module is imported) and the address of the fidelity ledger."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        import textwrap

        for head, text in (
            ("Registered figures (NAME):", ", ".join(_figure_names())),
            ("The fidelity ledger (what each variant reproduces):", docs_page("fidelity")),
        ):
            formatter.write_paragraph()
            formatter.write_text(head)
            with formatter.indentation():
                indent = " " * formatter.current_indent
                width = max(formatter.width - formatter.current_indent, 20)
                for line in textwrap.wrap(
                    text, width, break_on_hyphens=False, break_long_words=False
                ):
                    formatter.write(f"{indent}{line}\n")
        super().format_epilog(ctx, formatter)


@cli.command()
@click.argument("spec_path", metavar="SPEC.toml", shell_complete=_complete_file)
@_run_options
@click.option(
    "--report/--no-report", default=True, show_default=True, help="Write report.html after the run."
)
@_figure_options
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
    figure_format: str,
    figure_style: str | None,
) -> None:
    """Run the experiment described by SPEC.toml (resumes an interrupted run).

    Names a run directory with --out (default runs/<name>-<key>); running the same command
    again resumes it. How long it takes depends on the spec: the compiled loops run about
    10^6-10^7 pulls per CPU second for the common policies (see `impactbandits describe
    KIND`)."""
    from impactbandits.experiments.spec import load_spec

    spec = load_spec(spec_path, seeds=seeds)
    output = _figure_output(figure_format, figure_style)
    run_dir = _execute(spec, out, backend, workers, scheduler, batch_size, progress)
    if report:
        from impactbandits.experiments.report import write_report

        redraw = f"impactbandits report {shlex.quote(str(run_dir))}"
        _show_report(run_dir, redraw, lambda o: write_report(run_dir, output=o), output)


@cli.command(cls=_FigureCommand)
@click.argument("name", shell_complete=_complete_figure)
@click.option("--quick", is_flag=True, help="Reduced grid: seconds instead of minutes.")
@click.option(
    "--variant",
    type=click.Choice(VARIANTS),
    default="paper",
    show_default=True,
    help="authors-code: every component as in the authors' published code (figures whose "
    "authors published code; see the fidelity ledger, below); authors-ucb1 (ron-fig1, "
    "ron-fig2): only SRUM's black box as in the authors' code.",
)
@_run_options
@click.option(
    "--report/--no-report",
    default=True,
    show_default=True,
    help="Draw the figures and write report.html after the run (--no-report: print the run "
    "directory and the command that draws them later).",
)
@_figure_options
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
    report: bool,
    figure_format: str,
    figure_style: str | None,
) -> None:
    """Reproduce a registered paper figure (NAME from `impactbandits list figures`) and write
    its report.

    With the compiled loops the figures take 1,937 CPU s for all 26 registered figures at full
    paper scale (1.4 to 886 CPU s each), and a few seconds with --quick; `impactbandits describe
    NAME` shows a figure's size. Interrupted runs resume where they stopped."""
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.report import write_report

    figure = get_figure(name)
    spec = figure.spec(quick, variant)
    if seeds is not None:
        spec = spec.replace(seeds=seeds)
    output = _figure_output(figure_format, figure_style)
    run_dir = _execute(spec, out, backend, workers, scheduler, batch_size, progress)

    def draw(output: Any) -> Path:
        extra = figure.draw(run_dir, variant, output=output)
        return write_report(run_dir, extra_figures=extra, output=output)

    flags = "".join(
        [" --quick" if quick else "", f" --variant {variant}" if variant != "paper" else ""]
    )
    seeds_flag = f" --seeds {seeds}" if seeds is not None else ""
    if figure_format != "png":
        flags += f" --figure-format {figure_format}"
    if figure_style is not None:
        flags += f" --figure-style {shlex.quote(figure_style)}"
    redraw = f"impactbandits reproduce {name}{flags}{seeds_flag} --out {shlex.quote(str(run_dir))}"
    if not report:
        click.echo(run_dir)
        verbosity().info(
            f"report not drawn (--no-report); draw it with `{redraw}` (nothing is recomputed)"
        )
        return
    _show_report(run_dir, redraw, draw, output)


_ALL_SEEDS = click.option(
    "--all-seeds",
    "all_seeds",
    is_flag=True,
    help="Show every stored seed (default: the seeds of the latest run's spec).",
)


@cli.command()
@click.argument("run_dir", metavar="RUN_DIR", shell_complete=_complete_dir)
@_ALL_SEEDS
@_figure_options
@_guard
@_store_messages
def report(run_dir: str, all_seeds: bool, figure_format: str, figure_style: str | None) -> None:
    """Write RUN_DIR/report.html with figures (each with the CSV of its lines) and a summary
    table."""
    from impactbandits.experiments.report import write_report

    output = _figure_output(figure_format, figure_style)
    seeds: Literal["all"] | None = "all" if all_seeds else None
    redraw = f"impactbandits report {shlex.quote(run_dir)}"
    _show_report(
        Path(run_dir), redraw, lambda o: write_report(run_dir, seeds=seeds, output=o), output
    )


@cli.command()
@click.argument("run_dir", metavar="RUN_DIR", shell_complete=_complete_dir)
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
    shell_complete=_complete_file,
    help="File to write (default: RUN_DIR/results.FORMAT).",
)
@click.option("--trajectories", is_flag=True, help="Include intra-run checkpoints.")
@_ALL_SEEDS
@_guard
@_store_messages
def export(run_dir: str, fmt: str, output: str | None, trajectories: bool, all_seeds: bool) -> None:
    """Export the tidy table: one row per (cell, seed, horizon)."""
    from impactbandits.cli.phases import Phase
    from impactbandits.experiments.tidy import tidy_table

    path = Path(output) if output else Path(run_dir) / f"results.{fmt}"
    if path.is_dir():
        raise SpecError("output", f"{str(path)!r} is a directory; give a file name")
    talk = verbosity()
    live = sys.stderr.isatty() and not talk.quiet
    with Phase("export", live=live, echo=None if talk.quiet else talk.info):
        table = tidy_table(run_dir, trajectories=trajectories, seeds="all" if all_seeds else None)
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


_JSON_OPTION = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (its shape: see above)."
)


@cli.command(name="list")
@click.argument("what", required=False, default=None, type=click.Choice(LIST_WHAT))
@_JSON_OPTION
@_guard
def list_(what: str | None, as_json: bool) -> None:
    """List environments, policies, oracles and figures (or one of them); `impactbandits
    describe NAME` gives one in full.

    With --json, an object with a key per section listed ("environments", "policies",
    "oracles", "figures"), each a list sorted by name: a component as {"name": ..., "summary":
    its docstring's first paragraph}, a figure as {"name": ..., "title": ...}."""
    from impactbandits.describe import SECTIONS, listing

    sections = LIST_WHAT if what is None else (what,)
    if as_json:
        import json

        document = {s: [{"name": n, SECTIONS[s]: text} for n, text in listing(s)] for s in sections}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    import shutil
    import textwrap

    columns = min(shutil.get_terminal_size((100, 24)).columns, 120)
    for section in sections:
        click.echo(f"{section}:")
        rows = listing(section)
        width = max((len(name) for name, _ in rows), default=0)
        for name, text in rows:
            lines = textwrap.wrap(text, max(30, columns - width - 4)) or [""]
            click.echo(f"  {name.ljust(width)}  {lines[0]}")
            for line in lines[1:]:
                click.echo(f"  {' ' * width}  {line}")


@cli.command()
@click.argument("kind", metavar="KIND", shell_complete=_complete_kind)
@_JSON_OPTION
@_guard
def describe(kind: str, as_json: bool) -> None:
    """Describe an environment, policy, oracle or figure (a name from `impactbandits list`, or
    an import path 'module:Name'): its citation, parameters with types, defaults, allowed
    values and when another parameter's value makes one required, or a figure's size.

    With --json, one object: "name", "role" ("environment", "policy", "oracle", "import path"
    or "figure"), "summary", "citation" (or null); for a component also "import_path",
    "description" (paragraphs), "module" ({"name", "description"} of a built-in's module, or
    null) and "parameters" (null for a function), each parameter {"name", "type", "required",
    "default" (absent when required), "allowed" (bounds, or null), "choices" (a Literal's
    values, or null), "required_when": [{"param", "values", "text"}]}; for a figure "figure":
    {"title", "source", "variants", "sizes": {"full", "quick"} each {"environments",
    "policies", "max_horizon", "seeds", "cells", "simulated_rounds"}, "run"}."""
    from impactbandits.describe import as_json as to_json
    from impactbandits.describe import as_text, description

    about = description(kind)
    if as_json:
        import json

        click.echo(json.dumps(to_json(about), indent=2, ensure_ascii=False))
        return
    import shutil

    click.echo(as_text(about, width=min(shutil.get_terminal_size((100, 24)).columns, 100) - 2))


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
