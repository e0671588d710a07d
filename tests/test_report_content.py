"""The report a researcher shares: run metadata, the summary's columns and numbers, bands and
legends that hide nothing. Expected values are worked by hand from the specs."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import impactbandits
from impactbandits import run_experiment
from impactbandits.experiments.plots import plot_metric_vs_horizon
from impactbandits.experiments.provenance import versions
from impactbandits.experiments.report import write_report
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.summary import format_estimate, pull_shares

THIN = "\u2009"


class _Tables(HTMLParser):
    """Every table of the page as rows of cell texts, and the definition list as a dict."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.facts: dict[str, str] = {}
        self._cell: list[str] | None = None
        self._term: str | None = None
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "dt", "dd"):
            self._cell, self._in = [], tag

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "dt" and self._cell is not None:
            self._term, self._cell = "".join(self._cell).strip(), None
        elif tag == "dd" and self._cell is not None and self._term is not None:
            self.facts[self._term] = "".join(self._cell).strip()
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _spec(seeds: int) -> ExperimentSpec:
    arms = [0.05 * i for i in range(1, 12)]  # 11 arms: the table must stay page-wide
    return ExperimentSpec.create(
        name="content",
        description="Report content test.",
        environments=[{"kind": "bernoulli", "label": "eleven arms", "means": arms}],
        policies=[{"kind": "ucb1", "label": "UCB1"}, {"kind": "round-robin", "label": "RR"}],
        horizons=[110, 220],
        seeds=seeds,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("report")
    run_experiment(_spec(3), run_dir, backend="serial")
    run_experiment(_spec(5), run_dir, backend="serial")  # resumed: a second session
    text = write_report(run_dir).read_text(encoding="utf-8")
    parser = _Tables()
    parser.feed(text)
    return text, parser


def test_run_metadata_names_versions_commit_and_sessions(page):
    text, parser = page
    facts = parser.facts
    assert facts["library"] == f"impactbandits {impactbandits.__version__}"
    for name, version in versions().items():
        if name != "impactbandits":
            assert f"{name} {version}" in facts["dependencies"]
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?|not a git checkout", facts["git commit"])
    assert "5 seeds" in facts["seeds"] and "root seed 0" in facts["seeds"]
    assert "in 2 sessions" in facts["time"]
    sessions = next(t for t in parser.tables if t[0][:3] == ["started (UTC)", "finished (UTC)",
                                                               "outcome"])  # fmt: skip
    header, *rows = sessions
    # two anytime policies: one cell each (both horizons from one run); 3 seeds, then 2 more
    assert [r[header.index("results")] for r in rows] == ["6", "4"]
    assert all(r[header.index("outcome")] == "finished" for r in rows)
    assert all(r[header.index("backend")] == "serial × 1" for r in rows)
    assert all(re.fullmatch(r"\d+\.\d s", r[header.index("CPU")]) for r in rows)
    assert "The spec" in text and html.escape('"name": "content"') in text


def test_summary_has_the_optimum_beside_every_policy(page):
    text, parser = page
    header, *rows = parser.tables[0]
    # T and the seeds are the same in every row: they move to the heading
    assert "Summary at T = 220, 5 seeds" in text
    assert header == ["environment", "policy", "reward", "optimum", "regret", "regret / T",
                      "pulls by arm (share of T)", "switches"]  # fmt: skip
    assert len(rows) == 2
    # the best fixed arm (mean 0.55) for T = 220 rounds: 0.55 · 220 = 121, beside each policy
    assert {r[header.index("optimum")] for r in rows} == {"121"}


def test_round_robin_shares_and_ordering(page):
    _, parser = page
    header, *rows = parser.tables[0]
    by_policy = {r[1]: r for r in rows}
    # round robin over 11 arms for 220 rounds: 20 pulls each, 1/11 ≈ 9% of T per arm
    shares = by_policy["RR"][header.index("pulls by arm (share of T)")]
    assert shares == "#0 9% · #1 9% · #2 9% · 8 others 73%"
    # UCB1 has lower regret than round robin: listed first, in bold (class best)
    assert [r[1] for r in rows] == ["UCB1", "RR"]


@pytest.mark.parametrize(
    ("mean", "half", "text"),
    [
        (3202.6, 4.1, f"3{THIN}202.6 ± 4.1"),
        (0.000571, 0.000588, "0.00057 ± 0.00059"),
        (12345.678, 1234.5, f"12{THIN}300 ± 1{THIN}200"),
        (159.2, 28.3, "159 ± 28"),
        (-74.2, 12.4, "-74 ± 12"),
        (42.0, None, "42"),
        (3207.13, 0.0, f"3{THIN}207"),
        (float("nan"), 1.0, ""),
        # near-deterministic rows (ron-fig1 quick, λ = 0.8, f_uni): at most six significant
        # digits of the mean, the interval below that as "< one unit"
        (2.1000000028, 0.0000000097, "2.10000 ± < 0.00001"),
        (-0.51234567891, 3e-8, "-0.512346 ± < 0.000001"),
        (123456.789, 0.004, f"123{THIN}457 ± < 1"),
        # an interval at the sixth digit: shown to that digit
        (2.1000123, 0.0000097, "2.10001 ± 0.00001"),
        # floating-point rounding (at most 1e-9 of the mean, or absolute near 0): the value alone
        (121.00000000000001, 2e-14, "121"),
        (0.0, 1e-15, "0"),
        (2.1e-05, None, "0.00002100"),  # no exponent
        # ron-fig1's regret / T: the same relative interval as its regret, the same rule
        (2.1000000028e-05, 9.7e-14, "0.0000210000 ± < 0.0000000001"),
    ],
)
def test_estimates_are_rounded_to_the_interval(mean, half, text):
    assert format_estimate(mean, half) == text


def test_pull_shares_list_the_top_arms_then_the_rest():
    assert pull_shares(np.array([1, 1, 8])) == "#2 80% · #0 10% · #1 10%"
    assert pull_shares(np.array([0, 5, 1, 1, 1, 2])) == "#1 50% · #5 20% · #2 10% · 3 others 20%"
    assert pull_shares(np.zeros(3)) == ""
    # arms another environment of the run has (NaN here) are left out, indices kept
    assert pull_shares(np.array([1.0, 3.0, np.nan, np.nan])) == "#1 75% · #0 25%"


def test_count_bands_stay_above_zero_and_legend_sits_outside():
    rows = pd.DataFrame(
        {
            "environment": "e",
            "policy": "p",
            "horizon": np.repeat([10, 20], 3),
            "time": np.repeat([10, 20], 3),
            "seed": np.tile([0, 1, 2], 2),
            "pulls_0": [0, 0, 9, 0, 1, 20],  # mean ± t-interval dips far below 0
        }
    )
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    plot_metric_vs_horizon(rows, ax, metric="pulls_0")
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() >= 0.0
    FigureCanvasAgg(fig).draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_figures_drawn_by_a_pool_equal_those_drawn_in_process(tmp_path, monkeypatch):
    # more environments than PARALLEL_FIGURES: with IMPACTBANDITS_REPORT_WORKERS = 2 the standard
    # figures come from a process pool; they must be the same files, byte for byte
    spec = ExperimentSpec.create(
        name="pool",
        environments=[
            {"kind": "bernoulli", "label": f"env {i}", "means": [0.1 * i, 0.5]} for i in range(8)
        ],
        policies=[{"kind": "ucb1"}, {"kind": "greedy"}],
        horizons=[20, 40],
        seeds=2,
        checkpoints=4,
    )
    run_experiment(spec, tmp_path, backend="serial")
    write_report(tmp_path)
    alone = {p.name: p.read_bytes() for p in (tmp_path / "figures").glob("*.png")}
    monkeypatch.setenv("IMPACTBANDITS_REPORT_WORKERS", "2")
    write_report(tmp_path)
    pooled = {p.name: p.read_bytes() for p in (tmp_path / "figures").glob("*.png")}
    assert len(alone) == 8 and pooled == alone
