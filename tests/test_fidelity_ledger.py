"""The fidelity ledger (docs/fidelity.md) covers every registered figure, leaves no difference
unexplained, and is the page its data generate (it cannot drift from docs/fidelity/*.toml)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from impactbandits.experiments.figures import FIGURES, get_figure

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ledger():
    spec = importlib.util.spec_from_file_location("ledger_build", ROOT / "docs/fidelity/build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_registered_figure_has_exactly_one_row(ledger):
    figures, _, _ = ledger.load()
    assert sorted(row["name"] for row in figures) == sorted(FIGURES)


def test_no_difference_is_left_unexplained(ledger):
    figures, _, _ = ledger.load()
    assert [r["name"] for r in figures if r["status"] == "differs-unexplained"] == []
    for row in figures:
        if row["status"] == "differs-explained":
            assert row.get("difference"), f"{row['name']}: differs-explained without a difference"


def test_authors_code_figures_name_their_option(ledger):
    """A figure offering --variant authors-code either documents its differences or was
    reproduced side by side (ron-fig2: the variant changes nothing visible there)."""
    figures, _, _ = ledger.load()
    by_name = {row["name"]: row for row in figures}
    for name in FIGURES:
        if "authors-code" in get_figure(name).variants:
            row = by_name[name]
            assert row.get("difference") or row["status"] == "reproduced", name


def test_page_is_up_to_date(ledger):
    assert ledger.main(["--check"]) == 0, "run: python docs/fidelity/build.py"


def test_schema_errors_are_one_line(ledger, tmp_path):
    (tmp_path / "demo.toml").write_text(
        '[[figure]]\nname = "x"\npaper = "p"\nclaim = "c"\nmeasured = "m"\nauthors = "a"\n'
        'status = "fine"\n'
    )
    with pytest.raises(ledger.LedgerError, match="status must be one of"):
        ledger.load(tmp_path)
