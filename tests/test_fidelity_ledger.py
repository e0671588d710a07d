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


def test_every_status_comes_from_the_checks_with_its_evidence(ledger):
    """The page's statuses are the claims module's vocabulary; a figure not reproduced under
    its defaults shows the failing checks' numbers."""
    from impactbandits.experiments.claims import STATUSES

    assert ledger.STATUSES == STATUSES
    figures, _, _ = ledger.load()
    for row in figures:
        assert row["status"] in STATUSES, row["name"]
        if row["status"] in ("not-reproduced", "reproduced-with-option"):
            failing = [c for c in row["_claims"]["claim"] if c.get("passed") is False]
            assert failing and all(c["measured"].strip() for c in failing), row["name"]


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
    (tmp_path / "demo.toml").write_text('[[figure]]\nname = "x"\npaper = "p"\nauthors = "a"\n')
    with pytest.raises(ledger.LedgerError, match=r"x: no verdicts in claims\.toml"):
        ledger.load(tmp_path)
    (tmp_path / "claims.toml").write_text(
        '[figure."x"]\nstatus = "fine"\nstore_format = 2\nlibrary = "0"\ndate = "d"\n'
    )
    with pytest.raises(ledger.LedgerError, match="status must be one of"):
        ledger.load(tmp_path)
    (tmp_path / "demo.toml").write_text('[[figure]]\nname = "x"\npaper = "p"\n')
    with pytest.raises(ledger.LedgerError, match="'x': authors missing"):
        ledger.load(tmp_path)


def _claims_file():
    import tomllib

    return tomllib.loads((ROOT / "docs/fidelity/claims.toml").read_text()).get("figure", {})


def test_every_figure_has_claims_and_their_verdicts():
    """Every registered figure states its paper's claims, and make ledger evaluated them."""
    assert [name for name in FIGURES if not get_figure(name).claims] == []
    assert set(_claims_file()) == set(FIGURES)


def test_the_verdicts_are_of_the_current_figure_definitions():
    """Verdicts computed from another figure definition, store format or library version are
    stale: run make ledger (without running anything at full scale, this compares the store
    keys the verdicts came from with the figures' keys now)."""
    import impactbandits
    from impactbandits.experiments.spec import STORE_FORMAT

    for name, entry in _claims_file().items():
        figure = get_figure(name)
        assert entry["store_format"] == STORE_FORMAT, name
        assert entry["library"] == impactbandits.__version__, name
        variants = {c.variant for c in figure.claims if c.check is not None}
        assert set(entry.get("runs", {})) == variants, name
        for variant, source in entry.get("runs", {}).items():
            spec = figure.spec(False, variant)
            assert source["store_key"] == spec.store_key(), f"{name} ({variant}): make ledger"
            assert source["seeds"] == spec.seeds, f"{name} ({variant}): make ledger"
        recorded = [(c["text"], c["variant"], c["option"]) for c in entry["claim"]]
        assert recorded == [(c.text, c.variant, c.option) for c in figure.claims], name


def test_a_generated_figure_types_no_status_by_hand(ledger, tmp_path):
    (tmp_path / "demo.toml").write_text(
        '[[figure]]\nname = "x"\npaper = "p"\nauthors = "a"\nstatus = "reproduced"\n'
    )
    (tmp_path / "claims.toml").write_text(
        '[figure."x"]\nstatus = "reproduced"\nstore_format = 2\nlibrary = "0"\ndate = "d"\n'
        'runs."paper".store_key = "k"\nruns."paper".seeds = 1\n'
    )
    with pytest.raises(ledger.LedgerError, match="typed by hand"):
        ledger.load(tmp_path)


def test_ron_panels_are_what_the_reader_reads_off_the_authors_images(capsys):
    """PAPER_PANELS (ron-fig1's claim) equals the output of benchmarks/fidelity/ron_panels.py
    on the authors' images, where their checkout exists (authors_env.sh ron)."""
    src = ROOT / "benchmarks/fidelity/.authors/ron/src/resources"
    if not src.is_dir():
        pytest.skip("authors' checkout not set up (benchmarks/fidelity/authors_env.sh ron)")
    import math
    import runpy

    from impactbandits.experiments.papers.ron_claims import PAPER_PANELS

    module = runpy.run_path(str(ROOT / "benchmarks/fidelity/ron_panels.py"))
    for lam in ("0.0", "0.4", "0.8"):
        read = module["read_panel"](src / f"lam_{lam}.jpg")
        for name, values in read.items():
            stored = PAPER_PANELS[(float(lam) if lam != "0.0" else 0, name)]
            for got, want in zip(values, stored, strict=True):
                assert (math.isnan(got) and math.isnan(want)) or round(got, 3) == want
