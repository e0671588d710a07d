"""The figure registry: named, reproducible experiments (``impactbandits reproduce NAME``).

Each entry is a :class:`Figure`: a function from ``quick`` (reduced grid) to a full
:class:`~impactbandits.experiments.spec.ExperimentSpec`, and optionally a renderer drawing the
paper's own panels from the run directory. Paper issues add their entries to :data:`FIGURES`
(lazy import paths: nothing is imported until a figure is asked for).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.errors import SpecError, unknown_name

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.core.environment import Environment
    from impactbandits.experiments.claims import Claim
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ComponentSpec, ExperimentSpec, SpecRecord

__all__ = [
    "FIGURES",
    "Figure",
    "built_in_environment",
    "get_figure",
    "load_run",
    "quick_name",
    "save_png",
    "scaled_spec",
]


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    source: str
    """Paper, section and figure number reproduced."""
    build: Callable[..., ExperimentSpec]
    """``build(quick)``: the experiment; ``quick=True`` gives the reduced grid. A figure with
    an authors'-code counterpart is built as ``build(quick, variant="authors-code")`` too."""
    render: Callable[..., list[Path]] | None = None
    """Draw the paper's panels from a finished run directory; returns the PNG paths. It takes
    ``output=`` (:class:`~impactbandits.experiments.figure_output.FigureOutput`, passed on to
    :func:`save_png`); a figure with :attr:`notes` has a renderer that also takes ``note=`` (a
    line for each PNG's face)."""
    variants: tuple[str, ...] = ("paper",)
    """``"paper"`` (the default) and, where the authors published code that differs from the
    paper, ``"authors-code"``: every component switched to its authors' code behaviour; a
    figure may name other readings (``ron-fig1``'s ``"authors-ucb1"``: only the black box as in
    the authors' code), each built as ``build(quick, variant=NAME)``."""
    claims: tuple[Claim, ...] = ()
    """The paper's claims about this figure as checks on its full-scale run
    (:mod:`~impactbandits.experiments.claims`): the fidelity ledger's status and numbers."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Per variant, a line the figure's PNGs (and so its report) carry on their face: where
    that variant's figure shows the opposite of the paper, and which variant shows the paper's
    behaviour."""

    def draw(
        self, run_dir: Path, variant: str = "paper", output: FigureOutput | None = None
    ) -> list[Path]:
        """The renderer's PNGs for a finished run of ``variant`` (none without a renderer),
        with the variant's note on their face, drawn and written as ``output`` says (default:
        PNG only, the library's style)."""
        from impactbandits.experiments.figure_output import FigureOutput

        if self.render is None:
            return []
        output = output or FigureOutput()
        note = self.notes.get(variant, "")
        with output.drawing():
            if note:
                return self.render(run_dir, note=note, output=output)
            return self.render(run_dir, output=output)

    def spec(self, quick: bool = False, variant: str = "paper") -> ExperimentSpec:
        """The figure's experiment at full or ``--quick`` scale, in the given ``variant``.

        The authors'-code experiment is named ``NAME-authors-code`` (its own store)."""
        if variant not in self.variants:
            allowed = ", ".join(self.variants)
            raise SpecError(
                "variant",
                f"{variant!r} is not available for {self.name} (allowed: {allowed}); "
                "authors-code exists only for figures whose authors published code",
            )
        if variant == "paper":
            return self.build(quick)
        return self.build(quick, variant=variant)


FIGURES: Mapping[str, str] = {
    "demo-stationary": "impactbandits.experiments.papers.demo:FIGURE",
    "lindner-fig1": "impactbandits.experiments.papers.lindner:FIG1",
    "lindner-single-peaked": "impactbandits.experiments.papers.lindner:SINGLE_PEAKED",
    "lindner-increasing": "impactbandits.experiments.papers.lindner:INCREASING",
    "lindner-gaussian": "impactbandits.experiments.papers.lindner:GAUSSIAN",
    "lindner-fico": "impactbandits.experiments.papers.lindner:FICO",
    "lindner-recommender": "impactbandits.experiments.papers.lindner:RECOMMENDER",
    "patil-heidari": "impactbandits.experiments.papers.patil:HEIDARI",
    "patil-random": "impactbandits.experiments.papers.patil:RANDOM",
    "patil-potential": "impactbandits.experiments.papers.patil:POTENTIAL",
    "patil-lower-bound": "impactbandits.experiments.papers.patil:LOWER_BOUND",
    "ron-fig1": "impactbandits.experiments.papers.ron:FIG1",
    "ron-fig2": "impactbandits.experiments.papers.ron:FIG2",
    "cella-fig2": "impactbandits.experiments.papers.cella:FIG2",
    "cella-fig3": "impactbandits.experiments.papers.cella:FIG3",
    "tang-fig2": "impactbandits.experiments.papers.tang:FIG2",
    "tang-fig3": "impactbandits.experiments.papers.tang:FIG3",
    "metelli-synthetic": "impactbandits.experiments.papers.metelli:SYNTHETIC",
    "rotting-abrupt": "impactbandits.experiments.papers.rotting:ABRUPT",
    "rotting-smooth": "impactbandits.experiments.papers.rotting:SMOOTH",
    "piecewise-stationary": "impactbandits.experiments.papers.piecewise:FIGURE",
    "rested-benchmark": "impactbandits.experiments.papers.rested_benchmark:BENCHMARK",
    "benchmark": "impactbandits.experiments.papers.benchmark:BENCHMARK",
    "pikeburke-recovering": "impactbandits.experiments.papers.pikeburke:RECOVERING",
    "basu-blocking": "impactbandits.experiments.papers.basu:BLOCKING",
    "leqi-rebounding": "impactbandits.experiments.papers.leqi:REBOUNDING",
}


def quick_name(name: str, quick: bool, variant: str = "paper") -> str:
    """A figure's experiment name: the authors'-code variant gets the suffix ``-authors-code``
    and quick runs ``-quick`` (each a different store)."""
    return name + ("" if variant == "paper" else f"-{variant}") + ("-quick" if quick else "")


def scaled_spec(
    name: str,
    quick: bool,
    horizons: tuple[list[int], list[int]],
    seeds: tuple[int, int],
    **fields: Any,
) -> ExperimentSpec:
    """A figure's spec at full or ``--quick`` scale: ``horizons`` and ``seeds`` are
    ``(full, quick)`` pairs; quick specs get the name suffix ``-quick`` (a different store)."""
    from impactbandits.experiments.spec import ExperimentSpec

    return ExperimentSpec.create(
        name=quick_name(name, quick),
        horizons=horizons[1] if quick else horizons[0],
        seeds=seeds[1] if quick else seeds[0],
        **fields,
    )


def get_figure(name: str) -> Figure:
    if name not in FIGURES:
        where = "`impactbandits list figures` shows them all"
        raise SpecError("name", unknown_name("figure", name, FIGURES, where=where))
    module, _, attr = FIGURES[name].partition(":")
    figure = getattr(importlib.import_module(module), attr)
    if not isinstance(figure, Figure):  # pragma: no cover - registry consistency
        raise TypeError(f"{FIGURES[name]} is not a Figure")
    return figure


def load_run(run_dir: str | Path, trajectories: bool = False) -> tuple[SpecRecord, pd.DataFrame]:
    """A finished run's spec (as data, :class:`~impactbandits.experiments.spec.SpecRecord`)
    and tidy table (renderers' common first step)."""
    from impactbandits.experiments.arguments import flag_argument, run_dir_argument
    from impactbandits.experiments.store import Store
    from impactbandits.experiments.tidy import tidy_table

    run_dir = run_dir_argument(run_dir)
    flag_argument(trajectories, "trajectories")
    with Store.open_existing(run_dir) as store:
        spec = store.spec()
    return spec, tidy_table(run_dir, trajectories=trajectories)


def built_in_environment(component: ComponentSpec, field: str = "environment") -> Environment:
    """The environment a stored spec describes, for a renderer that needs more than the table
    (the curves of a rested instance): built only when it is a registered built-in naming no
    code, with its parameters validated again — a renderer never imports what a run directory
    names."""
    from impactbandits.registry import ENVIRONMENTS, build_environment, resolve, validate_params
    from impactbandits.usercode import import_paths

    if component.kind not in ENVIRONMENTS or any(import_paths(component.params)):
        raise SpecError(
            field,
            f"{component.kind!r} is not a built-in environment without code; the figure draws "
            "only the registered ones",
        )
    cls = resolve("environment", component.kind, f"{field}.kind")
    return build_environment(component.kind, validate_params(cls, component.params, field))


def save_png(
    fig: MplFigure,
    run_dir: str | Path,
    stem: str,
    output: FigureOutput | None = None,
    caption: str | None = None,
) -> Path:
    """Write ``fig`` to ``RUN_DIR/figures/paper/STEM.png`` (creating the folder), with the
    vector copy ``output`` asks for and the CSV of its lines
    (:func:`~impactbandits.experiments.figure_output.save_figure`); return the PNG's path.
    Renderers' figures live apart from the report's per-environment figures
    (``RUN_DIR/figures/``), so no label can make one overwrite the other; stems built from
    labels use :func:`~impactbandits.experiments.filenames.figure_stems`. The figure's suptitle
    is stored as the PNG's ``Title``: the report's heading for it; ``caption`` as its
    ``Description``: the report's caption for it, for a figure that is not lines with
    confidence bands (the report's default caption says so)."""
    from impactbandits.experiments.figure_output import save_figure
    from impactbandits.experiments.run_files import make_dirs

    path = make_dirs(Path(run_dir), "figures", "paper") / f"{stem}.png"  # refuses links
    title = fig.get_suptitle()
    metadata = {"Title": title} if title else {}
    if caption:
        metadata["Description"] = caption
    return save_figure(fig, path, output, metadata=metadata or None)
