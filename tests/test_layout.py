"""The fixed layout of a row of panels (experiments.layout): nothing is clipped or overlaps.

Checked by drawing the figure after :func:`fix_layout` and measuring every text's real extent
with the Agg renderer: the estimate the layout made without drawing must leave room for all of
them. These checks fail when the estimate is too tight (e.g. with ``CHAR_EM`` set to 0.3)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from impactbandits.experiments.layout import fix_layout, save_png
from impactbandits.experiments.plots import outside_legend, readable_ticks

LABELS = ["SPO", "one-step-optimistic", "D-UCB ξ = 0.6", "WWWWMMMM"]


def _figure(panels: int, legends: bool, suptitle: str, log_y: bool = False) -> Figure:
    fig = Figure(figsize=(5 * panels, 3.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, panels))
    x = np.linspace(1, 200_000, 50)
    for i, ax in enumerate(axes):
        for j, label in enumerate(LABELS[: 2 + i]):
            ax.plot(x, (j + 1) * 12345.678 * np.sqrt(x), label=label)
        ax.set_xlabel("horizon T")
        ax.set_ylabel("cumulative regret\n(mean over seeds)" if i == 0 else "regret")
        ax.set_title(f"panel {i}: a long title with γ = 0.{i}")
        if log_y:
            ax.set_yscale("log")
        readable_ticks(ax, "x")
        if legends:
            outside_legend(ax)
    fig.suptitle(suptitle)
    return fig


def _drawn(fig: Figure) -> list[Bbox]:
    """Each panel's extent as drawn: the axes with every text matplotlib drew for it (tick
    labels, labels, title, legend), measured by the Agg renderer after drawing."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    return [ax.get_tightbbox(renderer) for ax in fig.get_axes()]


@pytest.mark.parametrize("panels", [1, 2, 3])
@pytest.mark.parametrize("legends", [True, False])
@pytest.mark.parametrize("log_y", [False, True])
def test_every_text_stays_inside_the_figure_and_panels_do_not_overlap(
    panels: int, legends: bool, log_y: bool
) -> None:
    fig = _figure(panels, legends, "figure title\nsecond line of the title", log_y)
    assert fix_layout(fig)
    boxes = _drawn(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for box in boxes:
        assert box.x0 >= -0.5 and box.y0 >= -0.5, box
        assert box.x1 <= width + 0.5 and box.y1 <= height + 0.5, box
    for i, box in enumerate(boxes):
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other), (box, other)
    suptitle = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
    assert suptitle.y1 <= height + 0.5
    for box in boxes:  # titles below the suptitle
        assert box.y1 <= suptitle.y0 + 0.5, (box, suptitle)


def test_figures_it_cannot_read_keep_their_layout() -> None:
    fig = Figure(layout="constrained")
    fig.subplots(2, 2)
    assert not fix_layout(fig)
    assert fig.get_layout_engine() is not None
    fig = Figure()  # no layout engine: nothing to replace
    fig.subplots(1, 2)
    assert not fix_layout(fig)


def test_save_png_writes_one_drawing_of_the_fixed_layout(tmp_path) -> None:
    fig = _figure(2, True, "title")
    draws = []
    original = fig.draw

    def counting(renderer):  # type: ignore[no-untyped-def]
        draws.append(renderer)
        return original(renderer)

    fig.draw = counting  # type: ignore[method-assign]
    save_png(fig, tmp_path / "a.png", metadata={"Title": "title"})
    assert len(draws) == 1
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
