"""A fixed layout for the library's figures, computed from the text they hold without drawing.

The figures are one row of panels (``fig.subplots(1, n)``), each with an optional legend to its
right (:func:`~impactbandits.experiments.plots.outside_legend`), titles above and a suptitle.
matplotlib's constrained layout places them exactly but measures every tick label by drawing the
figure once more before it is saved: half of the time a figure took. :func:`fix_layout` places
the panels instead from an estimate of each text's size (characters × a character width of the
default font, lines × its line height), which needs no renderer: margins are a little wider than
the exact ones, never narrower (the estimate takes the widest characters of DejaVu Sans, the
default font, for digits and letters alike). Figures it cannot read (several rows, colour bars,
a legend of the figure) keep the layout they were given. :func:`save_png` writes a figure laid
out so with one drawing (``savefig`` draws a figure that has or had a layout engine twice).
"""

from __future__ import annotations

import re
from typing import Any

import matplotlib as mpl
from matplotlib.font_manager import FontProperties
from matplotlib.layout_engine import ConstrainedLayoutEngine

__all__ = ["PANEL", "arrange", "fix_layout", "save_png"]

#: A panel's size in inches (width, height): two side by side fill a two-column paper's text
#: width at about their own size.
PANEL = (3.6, 2.8)

#: A character's width in em: DejaVu Sans digits are 0.636 em wide, most letters less.
CHAR_EM = 0.64
#: A text line's height in em (matplotlib's default line spacing is 1.2).
LINE_EM = 1.25
#: Space around the figure's edge and between neighbouring elements, in points.
PAD = 4.0
#: Tick length plus the padding between tick and label, in points.
TICK = 3.5 + 3.5


def _points(size: Any) -> float:
    """A font size (``"small"``, 10, …) in points."""
    return float(FontProperties(size=size).get_size_in_points())


def _plain(text: str) -> str:
    """``text`` without mathtext markup: ``$\\mathdefault{10^{3}}$`` → ``10^3``."""
    text = re.sub(r"\\[a-zA-Z]+", "", text)
    return text.replace("$", "").replace("{", "").replace("}", "")


def _width(text: str, size: float) -> float:
    """Estimated width in points of the widest line of ``text`` at ``size`` points."""
    lines = _plain(text).split("\n")
    return max(len(line) for line in lines) * CHAR_EM * size


def _height(text: str, size: float) -> float:
    """Estimated height in points of ``text`` (its lines) at ``size`` points; 0 if empty."""
    return 0.0 if not text else (text.count("\n") + 1) * LINE_EM * size


def _tick_labels(axis: Any) -> list[str]:
    """The major tick labels ``axis`` will draw (empty if its labels are hidden)."""
    params = axis.get_tick_params(which="major")
    shown = params.get("label1On", params.get("labelleft", params.get("labelbottom", True)))
    if not shown:
        return []
    locs = [v for v in axis.get_majorticklocs() if _inside(axis, v)]
    return [str(label) for label in axis.get_major_formatter().format_ticks(locs)]


def _inside(axis: Any, value: float) -> bool:
    low, high = sorted(axis.get_view_interval())
    return bool(low <= value <= high)


def _outside_legend(ax: Any) -> Any:
    """The legend of ``ax`` placed right of it (anchored past x = 1 in axes coordinates)."""
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return None
    anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    return legend if anchor.x0 >= 1.0 else None


def _legend_width(legend: Any) -> float:
    """Estimated width in points of a legend: its widest label, the handle and the pads."""
    size = legend.prop.get_size_in_points()
    texts = [t.get_text() for t in legend.get_texts()]
    title = legend.get_title().get_text()
    widest = max([_width(t, size) for t in texts] + [_width(title, size)], default=0.0)
    ncols = max(1, int(getattr(legend, "_ncols", 1)))
    handle = (legend.handlelength + legend.handletextpad) * size
    columns = ncols * (widest + handle) + (ncols - 1) * legend.columnspacing * size
    return columns + 2 * (legend.borderpad + legend.borderaxespad) * size + 0.01 * 72


def _row(fig: Any) -> list[Any] | None:
    """The figure's axes as one row of one grid, left to right; ``None`` for anything else."""
    axes = fig.get_axes()
    if not axes or fig.legends:
        return None
    specs = [ax.get_subplotspec() for ax in axes]
    if any(spec is None for spec in specs):
        return None  # a colour bar or an inset
    grid = specs[0].get_gridspec()
    if grid.nrows != 1 or any(spec.get_gridspec() is not grid for spec in specs):
        return None
    if any(spec.colspan.stop - spec.colspan.start != 1 for spec in specs):
        return None
    columns = [spec.colspan.start for spec in specs]
    if sorted(columns) != list(range(grid.ncols)):
        return None
    return [ax for _, ax in sorted(zip(columns, axes, strict=True), key=lambda pair: pair[0])]


def fix_layout(fig: Any) -> bool:
    """Replace ``fig``'s constrained layout by fixed panel positions (module docstring);
    ``True`` if it did. The panels keep equal widths; each gets room for its y tick labels and
    label on the left and its outside legend on the right."""
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        return False
    row = _row(fig)
    if row is None:
        return False
    tick = _points(mpl.rcParams["ytick.labelsize"])
    label = _points(mpl.rcParams["axes.labelsize"])
    width, height = (float(v) * 72 for v in fig.get_size_inches())
    lefts, rights, tops, bottoms = [], [], [], []
    for ax in row:
        ticks = _tick_labels(ax.yaxis)
        left = PAD + max((_width(t, tick) for t in ticks), default=0.0)
        left += TICK if ticks else 0.0
        left += _height(ax.get_ylabel(), label)
        lefts.append(left)
        xticks = _tick_labels(ax.xaxis)
        # the last x tick label may stand half out of the axes, under the legend
        overhang = max((_width(t, tick) for t in xticks), default=0.0) / 2
        legend = _outside_legend(ax)
        rights.append(PAD + max(_legend_width(legend) if legend is not None else 0.0, overhang))
        title = max((ax.get_title(loc) for loc in ("left", "center", "right")), key=len)
        tops.append(_height(title, _points(mpl.rcParams["axes.titlesize"])) + PAD)
        bottom = PAD + (_height("0", tick) + TICK if xticks else 0.0)
        bottoms.append(bottom + _height(ax.get_xlabel(), label))
    suptitle = fig.get_suptitle()
    top = PAD + max(tops)
    if suptitle:
        size = fig._suptitle.get_fontsize()  # matplotlib keeps it there
        top += _height(suptitle, size) + PAD
    bottom = max(bottoms) + PAD
    panel = (width - sum(lefts) - sum(rights)) / len(row)
    tall = height - top - bottom
    if panel < 0.25 * width / len(row) or tall < 0.3 * height:
        return False  # too much text for the estimate to be safe: keep matplotlib's layout
    x = 0.0
    for ax, left, right in zip(row, lefts, rights, strict=True):
        x += left
        ax.set_position([x / width, bottom / height, panel / width, tall / height])
        x += panel + right
        # titles stay where they are (no tick labels above the axes): matplotlib would measure
        # the x axis of every panel at every drawing to lift them over such labels
        if getattr(ax, "_autotitlepos", None) is True:
            ax._autotitlepos = False  # as rcParams["axes.titley"] = 1 would
    fig.set_layout_engine("none")
    return True


def save_png(fig: Any, path: Any, dpi: int = 100, metadata: dict[str, str] | None = None) -> None:
    """Write ``fig`` as a PNG at ``dpi``: laid out by :func:`fix_layout` and drawn once when it
    can be, else through ``savefig`` (matplotlib's layout). A PNG whatever the name ends with
    (figures are written to a temporary name first:
    :func:`~impactbandits.experiments.run_files.write_file`)."""
    if not fix_layout(fig):
        fig.savefig(path, dpi=dpi, metadata=metadata, format="png")
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_dpi(dpi)
    canvas: Any = FigureCanvasAgg(fig)  # matplotlib's print_png is untyped
    canvas.print_png(path, metadata=metadata)


def _grid_shape(count: int) -> tuple[int, int]:
    """(rows, columns) for ``count`` panels: one row up to three, two columns for four, rows
    of three beyond."""
    columns = count if count <= 3 else (2 if count == 4 else 3)
    return -(-count // columns), columns


def _look(handle: Any) -> tuple[Any, ...]:
    """How a legend entry is drawn: colour, line style and marker of a line; face and edge
    colour of anything else."""
    from matplotlib.colors import to_rgba

    if hasattr(handle, "get_linestyle") and hasattr(handle, "get_marker"):
        return (to_rgba(handle.get_color()), handle.get_linestyle(), handle.get_marker())
    face = handle.get_facecolor() if hasattr(handle, "get_facecolor") else None
    return (repr(face), repr(getattr(handle, "get_edgecolor", lambda: None)()))


def _merge_legends(fig: Any, axes: list[Any], columns: int) -> bool:
    """Replace the legends of ``axes`` that list the same entries (those of the fullest legend,
    or a part of them) by one legend of the figure below the panels; ``True`` if it did. Other
    legends (a panel of arms beside panels of policies) stay where they are."""
    legends = [(ax, ax.get_legend()) for ax in axes if ax.get_legend() is not None]
    if len(legends) < 2:
        return False
    labelled = [(ax, legend, [t.get_text() for t in legend.get_texts()]) for ax, legend in legends]
    fullest = max(labelled, key=lambda item: len(item[2]))
    handles, labels = fullest[0].get_legend_handles_labels()
    looks = {label: _look(handle) for handle, label in zip(handles, labels, strict=True)}

    def drawn_alike(ax: Any) -> bool:
        """Every entry of ``ax``'s legend looks as the fullest legend draws it (the same
        colour, line style and marker): one legend can then stand for both panels."""
        own = ax.get_legend_handles_labels()
        return all(looks.get(label) == _look(h) for h, label in zip(*own, strict=True))

    same = [item for item in labelled if set(item[2]) <= set(fullest[2]) and drawn_alike(item[0])]
    if len(same) < 2:
        return False
    for _, legend, _ in same:
        legend.remove()
    fig.legend(
        handles, labels, loc="outside lower center", ncols=max(1, min(len(labels), 2 * columns)),
        frameon=False,
    )  # fmt: skip
    return True


def arrange(fig: Any) -> Any:
    """Lay out a figure of one row of panels (:func:`_row`) so that each stays legible at
    :data:`PANEL` size: more than three panels become a grid (:func:`_grid_shape`), the figure
    is resized to its panels, and legends listing the same entries become one legend below
    them. Shared y axes show their tick labels in the first column. Figures of another shape
    are left as they are."""
    row = _row(fig)
    if row is None:
        return fig
    rows, columns = _grid_shape(len(row))
    if rows > 1:
        from matplotlib.gridspec import GridSpec

        grid = GridSpec(rows, columns, figure=fig)
        shared_label = row[0].get_ylabel()
        for index, ax in enumerate(row):
            ax.set_subplotspec(grid[index // columns, index % columns])
            if index % columns == 0 and index:
                shared = row[0].get_shared_y_axes().joined(row[0], ax)
                if shared:
                    ax.tick_params(axis="y", which="both", labelleft=True)
                    if not ax.get_ylabel():
                        ax.set_ylabel(shared_label)
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        fig.set_layout_engine("constrained")
    merged = _merge_legends(fig, row, columns)
    width, height = PANEL
    outside = any(_outside_legend(ax) is not None for ax in row)
    extra_width = 1.6 if outside else 0.0  # room for a legend right of a panel
    legend_rows = 0
    if merged:
        legend = fig.legends[-1]
        entries = len(legend.get_texts())
        legend_rows = -(-entries // max(1, min(entries, 2 * columns)))
    title = fig.get_suptitle()
    title_lines = title.count("\n") + 1 if title else 0
    fig.set_size_inches(
        columns * (width + extra_width),
        rows * height + 0.22 * title_lines + (0.2 * legend_rows + 0.15 if merged else 0.0),
    )
    return fig
