"""The data of a drawn figure as a table: what a reader re-plots, or checks a number against.

:func:`figure_data` reads the figure itself — every labelled line of every panel, and the
confidence band drawn with it — so the CSV beside a figure
(:func:`~impactbandits.experiments.figure_output.save_figure`) holds exactly the plotted points,
whichever renderer drew them. A band is a ``fill_between`` polygon of the line's colour over the
line's x values (how :mod:`~impactbandits.experiments.plots` draws them); other fills
(shaded regions, bars, heat maps) are not read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb

__all__ = ["COLUMNS", "figure_data"]

#: Columns of :func:`figure_data`: the panel (its title, or "panel N"), the line's label, its
#: points, and the band around it (empty where the line has none).
COLUMNS = ("panel", "series", "x", "y", "band_low", "band_high")


def _band(ax: Any, colour: tuple[float, float, float], xs: np.ndarray) -> tuple[Any, Any] | None:
    """``(low, high)`` of a ``fill_between`` band of ``colour`` over exactly ``xs``, if any."""
    n = len(xs)
    for collection in ax.collections:
        faces = collection.get_facecolor()
        if len(faces) != 1 or not np.allclose(faces[0][:3], colour):
            continue
        for path in collection.get_paths():
            vertices = path.vertices
            if len(vertices) < 2 * n + 2:
                continue
            # fill_between's polygon: a start point, (x, low) forward, an end point, then
            # (x, high) backward
            forward = vertices[1 : n + 1]
            backward = vertices[n + 2 : 2 * n + 2][::-1]
            if np.array_equal(forward[:, 0], xs) and np.array_equal(backward[:, 0], xs):
                return forward[:, 1], backward[:, 1]
    return None


def figure_data(fig: Any) -> pd.DataFrame:
    """One row per point of every labelled line of ``fig`` (columns :data:`COLUMNS`); lines
    whose label starts with ``_`` (Matplotlib's unlabelled ones) are left out."""
    frames = []
    for number, ax in enumerate(fig.get_axes(), start=1):
        title = ax.get_title() or ax.get_title("left") or f"panel {number}"
        for line in ax.get_lines():
            label = str(line.get_label())
            if label.startswith("_"):
                continue
            xs = np.asarray(line.get_xdata(), dtype=float)
            ys = np.asarray(line.get_ydata(), dtype=float)
            if xs.shape != ys.shape or xs.ndim != 1:
                continue
            band = _band(ax, to_rgb(line.get_color()), xs)
            low, high = band if band is not None else (np.full_like(xs, np.nan),) * 2
            frames.append(
                pd.DataFrame(
                    {
                        "panel": title,
                        "series": label,
                        "x": xs,
                        "y": ys,
                        "band_low": low,
                        "band_high": high,
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)
