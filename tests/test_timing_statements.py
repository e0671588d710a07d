"""The timing statements of the README, ``--help``, the Makefile and the docs come from one
measured table (``docs/fidelity/timings.toml``): each text says what the table says."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
import timing_statements  # noqa: E402 - benchmarks/ is not a package


def test_every_text_agrees_with_the_table():
    assert timing_statements.check() == []


def test_the_statements_are_the_table_s_numbers():
    table = timing_statements.load()
    figures = {k: v for k, v in table.items() if not k.startswith("_")}
    text = timing_statements.statements(table)
    total = sum(float(v["cpu_s"]) for v in figures.values())
    assert text["figures"].startswith(f"{total:,.0f} CPU s for all {len(figures)} registered")
    assert f"{float(table['_kernels']['cpu_s']):,.0f} CPU s" in text["kernels"]


def test_a_stale_or_missing_statement_is_found(tmp_path):
    for files in timing_statements.PLACES.values():
        for name in files:
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, target)
    readme = tmp_path / "README.md"
    text = readme.read_text(encoding="utf-8")
    wanted = timing_statements.statements(timing_statements.load())["kernels"]
    readme.write_text(text.replace(wanted, "about a minute"), encoding="utf-8")
    problems = timing_statements.check(tmp_path)
    assert any("README.md: does not say" in p for p in problems)
    assert any("README.md: stale timing" in p for p in problems)
