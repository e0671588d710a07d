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

import shlex
import sys
from pathlib import Path
from typing import Any, Literal

import click

from impactbandits.cli import benchmark as _benchmark
from impactbandits.cli.drive import _execute, _show_report

# every error as one line and an exit status (moved from this module to .guards)
from impactbandits.cli.guards import (
    Verbosity,
    _Choice,
    _Group,
    _guard,
    _nonempty_path,
    _store_messages,
    verbosity,
)
from impactbandits.cli.options import (
    _ALL_SEEDS,
    _JSON_OPTION,
    BACKENDS,
    EXPORT_FORMATS,
    LIST_WHAT,
    VARIANTS,
    _complete_dir,
    _complete_figure,
    _complete_file,
    _complete_kind,
    _figure_names,
    _figure_options,
    _figure_output,
    _run_options,
)
from impactbandits.cli.table_file import _write_atomically, _write_table
from impactbandits.errors import SpecError
from impactbandits.links import docs_page

__all__ = ["BACKENDS", "BLAS_THREADS", "EXPORT_FORMATS", "LIST_WHAT", "VARIANTS", "cli", "main"]


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
@click.option(
    "--quick",
    is_flag=True,
    help="Reduced grid: fewer horizons and seeds (`impactbandits describe NAME` shows both).",
)
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

    With the compiled loops the figures take 3,823 CPU s for all 26 registered figures at full
    paper scale (3.5 to 1,839 CPU s each); `--quick` runs take 1.7 to 145 CPU s each.
    `impactbandits describe NAME` shows a figure's size. Interrupted runs resume where they
    stopped."""
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
    callback=_nonempty_path,
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
        root = None if output else Path(run_dir)  # the default file: inside the run directory
        _write_atomically(path, lambda target: _write_table(table, target, fmt), root)
    click.echo(path)


@cli.command(name="list")
@click.argument("what", required=False, default=None, type=_Choice(LIST_WHAT))
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
