"""How figures are written: the PNG the report shows, a vector copy for a paper, the data behind
every line as CSV, and the style they are drawn in.

Every figure — a paper renderer's (:func:`~impactbandits.experiments.figures.save_png`) or the
report's standard one — goes through :func:`save_figure`, which writes ``STEM.png`` (the
report's image), ``STEM.pdf`` or ``STEM.svg`` when :attr:`FigureOutput.format` asks for one,
and ``STEM.csv``: the points of every labelled line with its confidence band
(:func:`~impactbandits.experiments.figure_data.figure_data`), read off the drawn figure so that
the numbers are those of the picture. Before writing, a row of three or more panels is laid out
as a grid and equal legends become one (:func:`~impactbandits.experiments.layout.arrange`).

Figures are drawn inside :meth:`FigureOutput.drawing`: the library's style (:data:`HOUSE_STYLE`:
font sizes for panels of :data:`~impactbandits.experiments.layout.PANEL` inches, which a
two-column paper prints at about their size), then the user's
``style`` — a Matplotlib style name (``"seaborn-v0_8-paper"``) or a ``.mplstyle`` file, which is
a list of settings, never code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impactbandits.errors import SpecError

__all__ = ["FIGURE_FORMATS", "HOUSE_STYLE", "FigureOutput", "save_figure"]

#: File formats of ``--figure-format``: the report always shows a PNG; ``pdf`` and ``svg`` are
#: written beside it.
FIGURE_FORMATS = ("png", "pdf", "svg")

#: The library's Matplotlib settings for figures that go into a paper: text sized for panels of
#: about 3.6 × 2.8 inches, fonts embedded as text in vector files (searchable, editable).
HOUSE_STYLE: dict[str, Any] = {
    "font.size": 9.0,
    "axes.titlesize": 9.0,
    "axes.labelsize": 9.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "legend.fontsize": 8.0,
    "figure.titlesize": 10.0,
    "lines.linewidth": 1.4,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
}


@dataclass(frozen=True)
class FigureOutput:
    """How the figures of a report are written.

    ``format``: ``"png"`` (only the PNG), ``"pdf"`` or ``"svg"`` (that file too, beside each
    PNG); ``style``: a Matplotlib style name or a ``.mplstyle`` file applied over
    :data:`HOUSE_STYLE`; ``dpi``: the PNG's resolution; ``on_saved``: called with each PNG's
    path once its files are written (a progress display)."""

    format: str = "png"
    style: str | None = None
    dpi: int = 150
    on_saved: Callable[[Path], None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.format not in FIGURE_FORMATS:
            raise SpecError(
                "figure_format",
                f"{self.format!r} is not a figure format; allowed: {', '.join(FIGURE_FORMATS)}",
            )
        if (
            not isinstance(self.dpi, int)
            or isinstance(self.dpi, bool)
            or not 20 <= self.dpi <= 1200
        ):
            raise SpecError("dpi", f"{self.dpi!r} is not allowed; a whole number 20 to 1200")
        if self.style is not None:
            _check_style(self.style)

    @contextlib.contextmanager
    def drawing(self) -> Iterator[None]:
        """Matplotlib's settings while figures are drawn: :data:`HOUSE_STYLE`, then
        :attr:`style` (restored afterwards)."""
        import matplotlib.style

        styles: list[Any] = [HOUSE_STYLE] + ([self.style] if self.style else [])
        with matplotlib.style.context(styles):
            yield


def _check_style(style: str) -> None:
    """A style name Matplotlib knows or an existing ``.mplstyle`` file; else a one-line error."""
    import matplotlib.style

    if style in matplotlib.style.available or style in ("default", "classic"):
        return
    path = Path(style)
    if path.suffix == ".mplstyle" and path.is_file():
        try:
            import matplotlib

            matplotlib.rc_params_from_file(str(path), use_default_template=False)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise SpecError("figure_style", f"cannot read {style!r} ({exc})") from None
        return
    known = ", ".join(sorted(matplotlib.style.available)[:6])
    raise SpecError(
        "figure_style",
        f"{style!r} is neither a Matplotlib style (e.g. {known}, …) nor a .mplstyle file",
    )


def save_figure(
    fig: Any, path: Path, output: FigureOutput | None = None, metadata: dict[str, str] | None = None
) -> Path:
    """Write ``fig`` as ``path`` (a ``.png``), its vector copy when ``output`` asks for one and
    ``path.with_suffix(".csv")`` (the data of its lines); return ``path``. Each file is written
    without following a link at its name
    (:func:`~impactbandits.experiments.run_files.write_file`); the folder is the caller's to
    check (:func:`~impactbandits.experiments.run_files.make_dirs`)."""
    from impactbandits.experiments import layout
    from impactbandits.experiments.figure_data import figure_data
    from impactbandits.experiments.run_files import write_file

    output = output or FigureOutput()
    layout.arrange(fig)
    write_file(path, lambda temp: layout.save_png(fig, temp, dpi=output.dpi, metadata=metadata))
    if output.format != "png":
        vector_meta = {"Title": metadata["Title"]} if metadata and "Title" in metadata else None
        write_file(
            path.with_suffix(f".{output.format}"),
            lambda temp: fig.savefig(temp, format=output.format, metadata=vector_meta),
        )
    data = figure_data(fig)
    if not data.empty:
        write_file(path.with_suffix(".csv"), lambda temp: data.to_csv(temp, index=False))
    if output.on_saved is not None:
        output.on_saved(path)
    return path
