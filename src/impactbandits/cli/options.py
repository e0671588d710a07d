"""The command line's shared options and shell completion: ``--out``/``--backend``/... of the
commands that run a spec, ``--figure-format``/``--figure-style`` of those that draw figures,
``--all-seeds`` and ``--json``, and the completion of figure and component names (from the
registries' tables, without importing a figure module)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from impactbandits.cli.guards import _POSITIVE, _nonempty_path

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
            callback=_nonempty_path,
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


_ALL_SEEDS = click.option(
    "--all-seeds",
    "all_seeds",
    is_flag=True,
    help="Show every stored seed (default: the seeds of the latest run's spec).",
)


_JSON_OPTION = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (its shape: see above)."
)
