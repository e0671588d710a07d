"""Damaged stores and full disks: one line, never a traceback; ``run`` repairs what it can.

Damage is made three ways: garbage over a page of the results table (the file's structure),
a payload cut short, and one digit of a payload changed (only the checksum can see it).
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from contextlib import closing

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.cli import cli
from impactbandits.experiments.store import STORE_FILE, DamagedStoreError, DiskFullError, Store

SPEC = """
name = "integrity"
seeds = 12
horizons = [20, 50]
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[environments]]
kind = "bernoulli"
label = "b3"
means = [0.2, 0.5, 0.6]

[[policies]]
kind = "ucb1"
"""
TOTAL = 2 * 12


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A finished run, its spec file and its table: every test damages a copy."""
    base = tmp_path_factory.mktemp("clean")
    spec = base / "spec.toml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, _run_args(spec, base / "run"))
    assert result.exit_code == 0, result.output
    return spec, base / "run", tidy_table(base / "run")


def _run_args(spec, out) -> list[str]:
    return ["run", str(spec), "--out", str(out), "--backend", "serial", "--no-report"]


def _copy(clean, tmp_path):
    target = tmp_path / "run"
    shutil.copytree(clean[1], target)
    return target


def _corrupt_page(run_dir) -> None:
    db_path = run_dir / STORE_FILE
    with closing(sqlite3.connect(db_path)) as db:
        try:
            pages = [
                p
                for (p,) in db.execute(
                    "SELECT pageno FROM dbstat WHERE name = 'results' AND pagetype = 'leaf' "
                    "ORDER BY pageno"
                )
            ]
        except sqlite3.OperationalError:
            pytest.skip("SQLite without the dbstat table")
        size = db.execute("PRAGMA page_size").fetchone()[0]
    assert len(pages) >= 3
    with open(db_path, "r+b") as file:  # the page header of a leaf in the middle
        file.seek((pages[len(pages) // 2] - 1) * size)
        file.write(b"\xff" * 64)


def _update_payload(run_dir, change) -> None:
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        rowid, payload = db.execute(
            "SELECT rowid, payload FROM results ORDER BY rowid LIMIT 1 OFFSET 7"
        ).fetchone()
        db.execute("UPDATE results SET payload = ? WHERE rowid = ?", (change(payload), rowid))
        db.commit()


def _truncate(run_dir) -> None:
    _update_payload(run_dir, lambda p: p[: len(p) // 2])


def _flip_digit(run_dir) -> None:
    def flip(payload: str | bytes) -> str | bytes:
        if isinstance(payload, bytes):  # a binary payload: the last switch count, plus or minus 1
            return payload[:-8] + bytes([payload[-8] ^ 1]) + payload[-7:]
        i = payload.index('"reward": [') + len('"reward": [')
        return payload[:i] + ("1" if payload[i] != "1" else "2") + payload[i + 1 :]

    _update_payload(run_dir, flip)


DAMAGE = {"page": _corrupt_page, "truncated": _truncate, "digit": _flip_digit}


def _one_line(result, start: str) -> str:
    message = result.stderr.strip()
    assert "\n" not in message, message
    assert message.startswith(start), message
    assert "Traceback" not in result.output
    return message


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_export_and_report_refuse_a_damaged_store_in_one_line(clean, tmp_path, damage):
    run_dir = _copy(clean, tmp_path)
    DAMAGE[damage](run_dir)
    for args in (["export", str(run_dir), "-o", str(tmp_path / "t.csv")], ["report", str(run_dir)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        message = _one_line(result, "error: run_dir: ")
        assert str(run_dir / STORE_FILE) in message and "is damaged" in message
        assert "run the command that made it" in message
        if damage != "page":
            assert f"1 of {TOTAL} stored results lost" in message


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_run_keeps_a_copy_rebuilds_and_recomputes_only_the_damage(clean, tmp_path, damage):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    DAMAGE[damage](run_dir)
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warning) == 1 and "was damaged" in warning[0], result.stderr
    copies = run_dir.glob(f"{STORE_FILE}.damaged-*")
    copies = [p for p in copies if not p.name.endswith("-wal")]  # the copy's WAL, if any
    assert len(copies) == 1 and copies[0].stat().st_size > 0
    with closing(sqlite3.connect(copies[0])) as db:  # the damaged copy is complete
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == TOTAL
    lost = int(warning[0].split("(")[1].split(" of ")[0])
    assert 1 <= lost < TOTAL  # intact results are kept, not recomputed
    assert f"{lost} results computed, {TOTAL - lost} reused" in result.stderr
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    again = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert "warning" not in again.stderr and f"0 results computed, {TOTAL} reused" in again.stderr


def test_store_without_checksums_still_opens_and_is_checked(clean, tmp_path):
    """Stores made before the checksum column: read as before, upgraded by a run."""
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        db.execute("ALTER TABLE results DROP COLUMN crc")
        db.commit()
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    _truncate(run_dir)  # without a checksum, a cut payload is still invalid JSON
    with pytest.raises(DamagedStoreError, match=f"1 of {TOTAL} stored results lost"):
        tidy_table(run_dir)
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        # old rows stay unverified (NULL); the recomputed one has its checksum
        assert db.execute("SELECT count(*), count(crc) FROM results").fetchone() == (TOTAL, 1)


def _small_disk(monkeypatch, pages: int) -> None:
    """SQLite's page limit gives SQLITE_FULL, the same error as a full disk."""
    connect = Store._connect

    def limited(db_path):
        db = connect(db_path)
        db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    monkeypatch.setattr(Store, "_connect", staticmethod(limited))


def test_disk_full_while_storing_results(clean, tmp_path, monkeypatch):
    spec_path, _, table = clean
    spec = ExperimentSpec.create(**__import__("tomllib").loads(SPEC))
    _small_disk(monkeypatch, 9)
    # before: a 46-line traceback ending in "cannot rollback - no transaction is active"
    with pytest.raises(DiskFullError) as caught:
        run_experiment(spec, tmp_path / "run", backend="serial", batch_size=4)
    message = str(caught.value)
    assert message.startswith(f"output: disk full while storing results in {tmp_path / 'run'} (")
    assert message.endswith("free space and run the same command again")
    stored = int(message.split("(")[1].split(" of ")[0])
    assert 0 < stored < TOTAL and f"({stored} of {TOTAL} stored)" in message
    with closing(
        sqlite3.connect(tmp_path / "run" / STORE_FILE)
    ) as db:  # consistent, nothing half-done
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == stored
    result = CliRunner().invoke(cli, _run_args(spec_path, tmp_path / "run"))
    assert result.exit_code == 2 and "Traceback" not in result.output
    last = result.stderr.strip().splitlines()[-1]  # after the "cells x seeds" progress line
    assert last.startswith("error: output: disk full while storing results in ")
    monkeypatch.undo()  # space freed: the same command finishes the run
    result = CliRunner().invoke(cli, _run_args(spec_path, tmp_path / "run"))
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(tidy_table(tmp_path / "run"), table)


def test_disk_full_while_creating_the_store(clean, tmp_path, monkeypatch):
    _small_disk(monkeypatch, 2)
    result = CliRunner().invoke(cli, _run_args(clean[0], tmp_path / "run"))
    assert result.exit_code == 2
    _one_line(result, "error: output: disk full while creating the store in ")
    assert not (tmp_path / "run" / STORE_FILE).exists()


def test_no_space_for_the_directory_or_the_report(clean, tmp_path, monkeypatch):
    from pathlib import Path

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "somewhere")

    with monkeypatch.context() as patch:
        patch.setattr(Path, "mkdir", no_space)
        result = CliRunner().invoke(cli, _run_args(clean[0], tmp_path / "new"))
    assert result.exit_code == 2
    _one_line(result, "error: output: disk full while creating ")
    run_dir = _copy(clean, tmp_path)
    # a figure is written through savefig, or drawn once onto an Agg canvas (layout.save_png)
    monkeypatch.setattr(Figure, "savefig", no_space)
    monkeypatch.setattr(FigureCanvasAgg, "print_png", no_space)
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 2
    _one_line(result, "error: output: disk full writing somewhere (No space left on device)")
