"""A report that goes into a paper: vector figures, the data of every line as CSV, a grid of
legible panels with one legend, a style hook, captions, the machine, BibTeX and a banner on
reduced (--quick) runs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from impactbandits import run_experiment
from impactbandits.citations import FIGURE_PAPERS, PAPERS, figure_bibtex, library_bibtex
from impactbandits.errors import SpecError
from impactbandits.experiments.figure_data import figure_data
from impactbandits.experiments.figure_output import FigureOutput, save_figure
from impactbandits.experiments.figures import FIGURES
from impactbandits.experiments.layout import PANEL, arrange
from impactbandits.experiments.provenance import Session
from impactbandits.experiments.report import figure_of, maths_html, write_report

from .conftest import small_spec

ROOT = Path(__file__).resolve().parents[1]


def _panels(count: int, same_legend: bool = True) -> Figure:
    fig = Figure(layout="constrained")
    axes = fig.subplots(1, count, sharey=True)
    for i, ax in enumerate(np.atleast_1d(axes)):
        for policy in ("A", "B"):
            ax.plot([1, 2, 3], [i, i + 1, i + 3], label=policy if same_legend else f"{policy}{i}")
        ax.set_title(f"panel {i}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("five panels")
    return fig


def test_a_row_of_five_panels_becomes_a_grid_with_one_legend():
    fig = arrange(_panels(5))
    positions = {ax.get_subplotspec().rowspan.start for ax in fig.get_axes()}
    assert positions == {0, 1}  # two rows (3 + 2) instead of a 5-panel strip
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in fig.get_axes())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["A", "B"]
    width, height = fig.get_size_inches()
    assert width == pytest.approx(3 * PANEL[0]) and height > 2 * PANEL[1]
    # the first panel of the second row shows the shared y axis' tick labels again
    first_of_row_2 = fig.get_axes()[3]
    assert first_of_row_2.yaxis.get_tick_params(which="major")["labelleft"]


def test_legends_that_differ_stay_with_their_panels():
    fig = arrange(_panels(2, same_legend=False))
    assert not fig.legends and all(ax.get_legend() for ax in fig.get_axes())


@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_vector_output_beside_the_png_with_the_lines_as_csv(tmp_path, fmt):
    fig = _panels(2)
    path = save_figure(fig, tmp_path / "f.png", FigureOutput(format=fmt))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    vector = tmp_path / f"f.{fmt}"
    if fmt == "pdf":
        assert vector.read_bytes()[:5] == b"%PDF-"
    else:
        root = ET.parse(vector).getroot()
        assert root.tag.endswith("svg")
        # text stays text (svg.fonttype none): the titles are searchable in the file
        assert "panel 1" in vector.read_text(encoding="utf-8")
    data = pd.read_csv(tmp_path / "f.csv")
    assert sorted(data["panel"].unique()) == ["panel 0", "panel 1"]
    assert data[(data["panel"] == "panel 1") & (data["series"] == "B")]["y"].tolist() == [1, 2, 4]


def test_png_only_by_default(tmp_path):
    save_figure(_panels(1), tmp_path / "f.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv", "f.png"]


def test_figure_data_reads_each_line_and_its_band():
    fig = Figure()
    ax = fig.subplots()
    xs = np.array([1.0, 2.0, 4.0])
    (line,) = ax.plot(xs, [1.0, 2.0, 3.0], label="p")
    ax.fill_between(xs, [0.5, 1.5, 2.0], [1.5, 2.5, 4.0], color=line.get_color(), alpha=0.2)
    ax.plot(xs, [9.0, 9.0, 9.0], "k--", label="_hidden")
    ax.plot(xs, [3.0, 3.0, 3.0], label="no band")
    data = figure_data(fig)
    p = data[data["series"] == "p"]
    assert p["band_low"].tolist() == [0.5, 1.5, 2.0]
    assert p["band_high"].tolist() == [1.5, 2.5, 4.0]
    assert data[data["series"] == "no band"]["band_low"].isna().all()
    assert "_hidden" not in set(data["series"])


def test_style_hook_applies_a_user_style_file_over_the_house_style(tmp_path):
    style = tmp_path / "thick.mplstyle"
    style.write_text("lines.linewidth: 7\n", encoding="utf-8")
    with FigureOutput(style=str(style)).drawing():
        fig = Figure()
        (line,) = fig.subplots().plot([0, 1], [0, 1])
    assert line.get_linewidth() == 7
    with FigureOutput().drawing():
        fig = Figure()
        (line,) = fig.subplots().plot([0, 1], [0, 1])
    assert line.get_linewidth() == 1.4  # the house style's


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"format": "jpg"}, "figure_format"),
        ({"style": "no-such-style"}, "figure_style"),
        ({"style": "missing.mplstyle"}, "figure_style"),
        ({"dpi": 5}, "dpi"),
    ],
)
def test_bad_figure_options_are_one_line_errors(fields, field):
    with pytest.raises(SpecError) as error:
        FigureOutput(**fields)
    assert error.value.field == field and "\n" not in str(error.value)


def test_maths_in_text_is_rendered():
    assert maths_html("err = Kγ^{s_{a}}(L + 1)") == "err = Kγ<sup>s<sub>a</sub></sup>(L + 1)"
    assert maths_html("T^{2/3}, f_uni, a<b") == "T<sup>2/3</sup>, f_uni, a&lt;b"


def test_every_registered_figure_names_its_papers():
    assert set(FIGURE_PAPERS) == set(FIGURES)
    assert all(key in PAPERS for keys in FIGURE_PAPERS.values() for key in keys)
    for key, entry in PAPERS.items():
        assert re.match(rf"@\w+\{{{key},\n", entry), key
        assert entry.count("{") == entry.count("}"), key
    assert figure_bibtex("tang-fig2") == [PAPERS["tang2021"]]


def test_library_bibtex_matches_citation_cff():
    import impactbandits

    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    version = re.search(r"^version: (\S+)", cff, re.M).group(1)
    title = re.search(r'^title: "(.+)"', cff, re.M).group(1)
    entry = library_bibtex()
    assert version == impactbandits.__version__ and f"version {version}" in entry
    assert title in entry


def test_figure_of_reads_the_name_only():
    assert figure_of("lindner-fig1-quick") == "lindner-fig1"
    assert figure_of("lindner-fig1-authors-code-quick") == "lindner-fig1"
    assert figure_of("ron-fig1-authors-ucb1") == "ron-fig1"
    assert figure_of("my-own-experiment") is None


def test_an_old_session_record_does_not_claim_this_machine():
    old = {
        "started": "s", "finished": "f", "wall_seconds": 1.0, "cpu_seconds": 1.0,
        "backend": "serial", "workers": 1, "computed": 1, "outcome": "finished",
    }  # fmt: skip
    assert Session.from_json(old).machine == {}


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("quick")
    spec = small_spec(name="lindner-fig1-quick", horizons=[20, 60], seeds=3)
    run_experiment(spec, run_dir, backend="serial")
    saved: list[Path] = []
    output = FigureOutput(format="svg", on_saved=saved.append)
    page = write_report(run_dir, output=output).read_text(encoding="utf-8")
    return run_dir, page, saved


def test_quick_runs_carry_a_banner_and_the_paper_bibtex(quick_report):
    _, page, _ = quick_report
    assert "class='banner'" in page and "Reduced grid (--quick)" in page
    assert "@inproceedings{lindner2021," in page and "@misc{impactbandits," in page


def test_figures_have_captions_linking_their_data_and_vector_files(quick_report):
    run_dir, page, saved = quick_report
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    assert len(captions) == 2 == len(saved)  # two environments; progress told of each
    for caption in captions:
        assert "3 seeds" in caption and "95% Student-t" in caption
        links = re.findall(r"href='([^']+)'", caption)
        assert {Path(link).suffix for link in links} == {".csv", ".svg"}
        assert all((run_dir / link).is_file() for link in links)


def test_the_run_section_names_the_machine_and_what_cpu_counts(quick_report):
    _, page, _ = quick_report
    assert re.search(r"<dt>machine</dt><dd>[^<]+; \d+ logical, \d+ usable cores; ", page)
    assert "not the interpreter&#x27;s start-up" in page


def test_a_full_scale_run_has_no_banner(tmp_path):
    run_experiment(small_spec(horizons=[20], seeds=2), tmp_path, backend="serial")
    page = write_report(tmp_path).read_text(encoding="utf-8")
    assert "class='banner'" not in page
    assert "@misc{impactbandits," in page and "@inproceedings" not in page


@pytest.mark.parametrize("page", ["README.md", "docs/citing.md"])
def test_the_pages_print_the_same_library_entry_as_the_reports(page):
    assert library_bibtex() in (ROOT / page).read_text(encoding="utf-8")


def test_legends_whose_colours_differ_are_not_merged():
    # the same policy drawn in another colour in the second panel (matplotlib's colour cycle
    # restarts per panel): one legend would mislabel a line
    fig = Figure(layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot([1, 2], [1, 2], label="A")
    left.plot([1, 2], [2, 3], label="B")
    right.plot([1, 2], [2, 3], label="B")  # B in the first colour here, the second on the left
    for ax in (left, right):
        ax.legend()
    arrange(fig)
    assert not fig.legends and left.get_legend() and right.get_legend()
