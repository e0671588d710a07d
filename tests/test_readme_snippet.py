"""The README's plotting snippet saves a figure a reader can use: its legend inside the saved
image (not cut off at its right edge) and, the spec's horizons being log-spaced, a log x axis.

The snippet runs as written, in-process, in a fresh directory whose ``runs/two-arms`` the
command line makes from the README's own ``my-experiment.toml`` with 2 seeds instead of 30
(``tests/test_readme.py`` runs every block at full size; this checks the figure itself).
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from .test_readme import FENCE, README

RUN_DIR = "runs/two-arms"


def _block(lang: str, contains: str) -> str:
    found = [
        body
        for block_lang, body in FENCE.findall(README.read_text(encoding="utf-8"))
        if block_lang == lang and contains in body
    ]
    assert len(found) == 1, f"{len(found)} {lang} blocks of README.md contain {contains!r}"
    return found[0]


def test_the_snippet_reads_the_run_of_the_readme_spec():
    snippet = _block("python", ".savefig(")
    spec = _block("toml", "# my-experiment.toml")
    assert f'tidy_table("{RUN_DIR}")' in snippet
    assert f"run my-experiment.toml --out {RUN_DIR}" in README.read_text(encoding="utf-8")
    assert re.search(r'spacing\s*=\s*"log"', spec)  # why the axis must be logarithmic


def test_the_saved_figure_shows_its_legend_on_a_log_axis(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.image
    import matplotlib.pyplot as plt

    (tmp_path / "my-experiment.toml").write_text(_block("toml", "# my-experiment.toml"))
    command = [sys.executable, "-m", "impactbandits", "run", "my-experiment.toml"]
    options = ["--out", RUN_DIR, "--seeds", "2", "--backend", "serial"]
    done = subprocess.run(
        command + options, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]

    snippet = _block("python", ".savefig(")
    saved = re.search(r'\.savefig\(\s*"([^"]+)"', snippet)
    assert saved is not None
    (tmp_path / "snippet.py").write_text(snippet, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    plt.close("all")
    try:
        runpy.run_path("snippet.py", run_name="__main__")
        assert plt.get_fignums(), "the snippet made no figure"
        fig = plt.gcf()
        renderer = fig.canvas.get_renderer()
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends, "no legend"
        for legend in legends:
            box = legend.get_window_extent(renderer)
            assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
            assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1, (box, fig.bbox)
            labels = {text.get_text() for text in legend.get_texts()}
            assert labels == {"ucb1", "exp3", "exp3-fixed"}  # the spec's policies
        assert all(ax.get_xscale() == "log" for ax in fig.axes if ax.get_legend() is not None)
        # the saved image is that figure, whole
        height, width = matplotlib.image.imread(Path(saved.group(1))).shape[:2]
        assert (width, height) == (round(fig.bbox.width), round(fig.bbox.height))
    finally:
        plt.close("all")
