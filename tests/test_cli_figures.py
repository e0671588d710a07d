"""The CLI's figure options and the progress of its phases after the simulation: the report
figure by figure, an export; one line per phase when stderr is not a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from impactbandits.cli import cli

SPEC = """
name = "figs"
horizons = [20, 60]
seeds = 2
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "easy σ"
means = [0.3, 0.7]

[[environments]]
kind = "bernoulli"
label = "hard"
means = [0.45, 0.55]

[[policies]]
kind = "ucb1"
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_run_with_pdf_figures_and_a_report_progress_line(spec_file, tmp_path):
    out = tmp_path / "run"
    result = invoke("run", str(spec_file), "--out", str(out), "--backend", "serial",
                    "--figure-format", "pdf")  # fmt: skip
    assert result.exit_code == 0, result.output
    # not a terminal: one line for the report phase, counting the figures it drew
    assert re.search(r"^report: 2 figures in \d+\.\d s$", result.stderr, re.M), result.stderr
    names = sorted(p.name for p in (out / "figures").iterdir())
    # ASCII names without hashes (no collision): σ spelled out
    assert names == ["easy-sigma.csv", "easy-sigma.pdf", "easy-sigma.png",
                     "hard.csv", "hard.pdf", "hard.png"]  # fmt: skip
    assert (out / "figures" / "hard.pdf").read_bytes()[:5] == b"%PDF-"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "href='figures/hard.pdf'" in page and "href='figures/hard.csv'" in page


def test_report_redraws_as_svg_and_export_reports_its_phase(spec_file, tmp_path):
    out = tmp_path / "run"
    assert invoke("run", str(spec_file), "--out", str(out), "--backend", "serial",
                  "--no-report").exit_code == 0  # fmt: skip
    result = invoke("report", str(out), "--figure-format", "svg")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out / "report.html")
    assert (out / "figures" / "hard.svg").is_file()
    exported = invoke("export", str(out), "-o", str(tmp_path / "t.csv"))
    assert exported.exit_code == 0
    assert re.search(r"^export: in \d+\.\d s$", exported.stderr, re.M), exported.stderr
    quiet = invoke("-q", "report", str(out))
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_a_style_file_is_applied_and_a_bad_one_refused_before_running(spec_file, tmp_path):
    style = tmp_path / "big.mplstyle"
    style.write_text("figure.dpi: 72\nfont.size: 14\n", encoding="utf-8")
    out = tmp_path / "run"
    ok = invoke("run", str(spec_file), "--out", str(out), "--backend", "serial",
                "--figure-style", str(style))  # fmt: skip
    assert ok.exit_code == 0, ok.output
    bad = invoke("run", str(spec_file), "--out", str(tmp_path / "never"), "--backend", "serial",
                 "--figure-style", "no-such-style")  # fmt: skip
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: figure_style: ") and bad.stderr.count("\n") == 1
    assert not (tmp_path / "never").exists()  # refused before anything ran


def test_an_unknown_format_is_a_usage_error(spec_file, tmp_path):
    result = invoke("run", str(spec_file), "--figure-format", "jpg")
    assert result.exit_code == 2 and "jpg" in result.stderr
