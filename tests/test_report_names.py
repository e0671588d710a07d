"""Figure file names: unique and stable per label, so no figure silently replaces another."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import pytest

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.experiments.filenames import figure_stem, figure_stems
from impactbandits.experiments.report import write_report
from impactbandits.experiments.rested_figures import render_rested


def _spec(labels: list[str]) -> ExperimentSpec:
    return ExperimentSpec.create(
        name="names",
        environments=[
            {"kind": "bernoulli", "label": label, "means": [0.3 + 0.1 * i, 0.7]}
            for i, label in enumerate(labels)
        ],
        policies=[{"kind": "ucb1"}],
        horizons=[20, 50],
        seeds=2,
        checkpoints=4,
    )


def test_labels_differing_in_punctuation_get_two_figures(tmp_path):
    # before: both labels became figures/a-b.png; the report showed one figure twice
    run_experiment(_spec(["a b", "a-b"]), tmp_path, backend="serial")
    text = write_report(tmp_path).read_text(encoding="utf-8")
    sources = re.findall(r"<img src='([^']+)'", text)
    assert len(sources) == 2 and len(set(sources)) == 2, sources
    for source in sources:
        assert (tmp_path / source).is_file()
    # the two labels share the slug a-b: each gets a hash of its exact label
    assert all(re.fullmatch(r"figures/a-b--[0-9a-f]{10}\.png", s) for s in sources), sources
    assert "<h3>a b</h3>" in text and "<h3>a-b</h3>" in text


def test_figure_stem_is_an_ascii_slug_without_hash():
    assert figure_stem("easy") == "easy"
    assert figure_stem("random-10") == "random-10"
    assert figure_stem("inc_1") == "inc_1"
    # the name the issue found unusable in LaTeX: lindner-fig1-quick-instance-3-σ-0-05.719338dd70
    assert figure_stem("instance 3, σ = 0.05") == "instance-3-sigma-0-05"
    assert figure_stem("λ = 0.8, f_uni") == "lambda-0-8-f_uni"
    assert figure_stem("café ≤ 3") == "cafe-le-3"
    assert figure_stem("con") == "con-figure"  # a reserved Windows device name
    assert figure_stem("") == figure_stem(" ") == "figure"
    # a lone label keeps its slug inside a set too (no hash where nothing collides)
    assert figure_stems(["a b", "easy"]) == {"a b": "a-b", "easy": "easy"}
    # colliding labels: slug, "--" and a hash of the exact label, the same in every run
    assert figure_stems(["a b", "a-b"])["a b"] == "a-b--c8687a08aa"


def test_figure_stems_are_ascii_and_unique_for_any_labels():
    labels = [
        "a b",
        "a-b",
        "a_b",
        "A-B",
        "a--b",
        "a/b",
        "a.b",
        "a b ",
        "σ",
        "Σ",
        "",
        " ",
        "con",
        "x" * 65,
        "x" * 64,
        "instance 3, σ = 0.05",
        "instance 3, σ = 0.1",
    ]
    stems = figure_stems(labels)
    assert len({s.casefold() for s in stems.values()}) == len(labels)  # case-insensitive too
    for stem in stems.values():
        assert re.fullmatch(r"[a-z0-9_-]{1,64}", stem), stem
    # a plain slug never contains "--", so it cannot meet a hashed one
    assert all("--" not in figure_stem(label) for label in labels)


def test_figure_stems_refuse_a_collision(monkeypatch):
    import impactbandits.experiments.filenames as filenames

    monkeypatch.setattr(filenames, "figure_stem", lambda label: "same")
    monkeypatch.setattr(filenames, "_HASH_DIGITS", 0)  # every hash collides
    with pytest.raises(ValueError, match="share the file"):
        filenames.figure_stems(["a", "b"])


def test_rested_renderer_names_are_unique_and_apart_from_the_report(tmp_path):
    run_experiment(_spec(["a b", "a-b", "a_b"]), tmp_path, backend="serial")
    paths = render_rested(tmp_path, pulls_panel=False)
    assert len(set(paths)) == 3 and all(p.is_file() for p in paths)
    assert all(p.parent == tmp_path / "figures" / "paper" for p in paths)
    report = write_report(tmp_path, extra_figures=paths)
    text = report.read_text(encoding="utf-8")
    sources = re.findall(r"<img src='([^']+)'", text)
    # the renderer's figures replace the standard ones: each figure once, none duplicated
    assert sorted(sources) == sorted(p.relative_to(tmp_path).as_posix() for p in paths)
    assert not list((tmp_path / "figures").glob("*.png"))
    # headings are the figures' own titles (their suptitles), not file names
    assert "<h3>names: a b</h3>" in text and "<h3>names: a-b</h3>" in text
