"""Damage the result checksums do not see (issue 41, item 2): the cell table, the stored spec,
the run history and repeated rows.

A result row's checksum covers its cell key, seed and numbers, not what they are shown under.
Before, relabelling ``cells.policy`` (epsilon-greedy -> ucb1) made ``export`` and ``report``
show epsilon-greedy's numbers as a second ``ucb1`` and ``run`` reuse every result under the
wrong label; a changed grid or spec gave other horizons or seeds; a results table rebuilt
without its primary key, holding rows twice, gave more rows than were run; and a malformed run
history was an internal error in ``report``. Now readers refuse each with one line (exit status
2) and ``run`` keeps a copy and rebuilds the store, recomputing nothing that was intact. The
expected tables are those of the undamaged store, read before the damage.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits import tidy_table
from impactbandits.cli import cli
from impactbandits.experiments.store import STORE_FILE, DamagedStoreError
from impactbandits.experiments.store_facts import meta_checksum

SPEC = """
name = "facts"
seeds = 5
horizons = [20, 50]
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[policies]]
kind = "ucb1"

[[policies]]
kind = "epsilon-greedy"
"""
#: 1 environment x 2 anytime policies x 5 seeds
TOTAL = 10


def _run_args(spec: Path, out: Path) -> list[str]:
    return ["run", str(spec), "--out", str(out), "--backend", "serial", "--no-report"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A finished run, its spec file and its table: every test damages a copy."""
    base = tmp_path_factory.mktemp("facts")
    spec = base / "spec.toml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(cli, _run_args(spec, base / "run"))
    assert result.exit_code == 0, result.output
    table = tidy_table(base / "run")
    assert len(table) == TOTAL * 2 and set(table["policy"]) == {"ucb1", "epsilon-greedy"}
    return spec, base / "run", table


def _copy(clean, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(clean[1], target)
    return target


def _sql(run_dir: Path, *statements: str, params: tuple = ()) -> None:
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        for statement in statements:
            db.execute(statement, params if "?" in statement else ())
        db.commit()


def _relabel(run_dir: Path) -> None:
    _sql(run_dir, "UPDATE cells SET policy = 'ucb1' WHERE policy = 'epsilon-greedy'")


def _regrid(run_dir: Path) -> None:
    """Another cell parameter: the horizons the checkpoints are read as."""
    _sql(run_dir, "UPDATE cells SET grid = '[20, 60]' WHERE policy = 'ucb1'")


def _respec(run_dir: Path) -> None:
    """The spec: fewer seeds (the report would show 2 of the 5 runs as all of them)."""
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        spec = json.loads(db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0])
        spec["seeds"] = 2
        db.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (json.dumps(spec),))
        db.commit()


def _repeat(run_dir: Path) -> None:
    """The results table rebuilt without its primary key, holding 4 rows twice."""
    _sql(
        run_dir,
        "CREATE TABLE copy AS SELECT * FROM results",
        "INSERT INTO copy SELECT * FROM results WHERE seed < 2",
        "DROP TABLE results",
        "ALTER TABLE copy RENAME TO results",
    )


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "relabelled policy": (_relabel, "of its cell table fails its checksum"),
    "changed grid": (_regrid, "of its cell table fails its checksum"),
    "changed spec": (_respec, "its spec fails its checksum"),
    "repeated rows": (_repeat, "4 stored results repeat an earlier one"),
}


def _one_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: run_dir: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_readers_refuse_damage_the_result_checksums_miss(clean, tmp_path, damage):
    run_dir = _copy(clean, tmp_path)
    make, phrase = DAMAGE[damage]
    make(run_dir)
    for args in (["export", str(run_dir), "-o", str(tmp_path / "t.csv")], ["report", str(run_dir)]):
        message = _one_error(CliRunner().invoke(cli, args))
        assert f"{str(run_dir / STORE_FILE)!r} is damaged (" in message, message
        assert phrase in message, message
        assert "run the command that made it (run or reproduce) again" in message
    assert not (tmp_path / "t.csv").exists() and not (run_dir / "report.html").exists()
    with pytest.raises(DamagedStoreError, match=phrase):
        tidy_table(run_dir)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_run_rebuilds_the_store_and_recomputes_nothing_intact(clean, tmp_path, damage):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    DAMAGE[damage][0](run_dir)
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warning) == 1 and "was damaged" in warning[0], result.stderr
    assert DAMAGE[damage][1] in warning[0]
    assert f"0 results computed, {TOTAL} reused" in result.stderr
    copies = [p for p in run_dir.glob(f"{STORE_FILE}.damaged-*") if not p.name.endswith("-wal")]
    assert len(copies) == 1  # nothing stored is lost: the damaged file is kept as it was
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == TOTAL
        # the primary key is back: a later run cannot store a row twice
        assert db.execute("SELECT count(*) FROM pragma_index_list('results')").fetchone()[0] == 1
    again = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert "warning" not in again.stderr and f"0 results computed, {TOTAL} reused" in again.stderr


def test_rows_stored_twice_with_different_numbers_are_recomputed(clean, tmp_path):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    _repeat(run_dir)
    # one copy of (ucb1's cell, seed 0) holds seed 1's numbers, with a checksum that matches
    from impactbandits.experiments.store_repair import row_checksum

    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        rowid, cell = db.execute(
            "SELECT max(rowid), cell FROM results WHERE seed = 0 GROUP BY cell LIMIT 1"
        ).fetchone()
        (other,) = db.execute(
            "SELECT payload FROM results WHERE cell = ? AND seed = 1", (cell,)
        ).fetchone()
        db.execute(
            "UPDATE results SET payload = ?, crc = ? WHERE rowid = ?",
            (other, row_checksum(cell, 0, other), rowid),
        )
        db.commit()
    message = _one_error(CliRunner().invoke(cli, ["export", str(run_dir)]))
    assert "1 (cell, seed) pairs are stored with different numbers" in message
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    assert f"1 results computed, {TOTAL - 1} reused" in result.stderr  # which copy is right?
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)


def test_a_results_table_without_its_key_is_read_and_rebuilt_by_a_run(clean, tmp_path):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    _sql(
        run_dir,
        "CREATE TABLE copy AS SELECT * FROM results",
        "DROP TABLE results",
        "ALTER TABLE copy RENAME TO results",
    )
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)  # nothing is wrong yet
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    assert "its results table lost the primary key" in result.stderr
    assert f"0 results computed, {TOTAL} reused" in result.stderr
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)


@pytest.mark.parametrize(
    "history",
    [
        '[{"started": 1}]',  # a session without its fields
        '{"sessions": []}',  # not a list
        "[{]",  # not JSON
        '[{"started": "a", "finished": "b", "wall_seconds": "slow", "cpu_seconds": 1, '
        '"backend": "serial", "workers": 1, "computed": 2, "outcome": "finished"}]',
    ],
)
def test_a_malformed_run_history_is_one_line_in_report(clean, tmp_path, history):
    run_dir = _copy(clean, tmp_path)
    # with a checksum that matches: not damaged, malformed as written (a crafted store)
    _sql(
        run_dir,
        "UPDATE meta SET value = ?, crc = ? WHERE key = 'sessions'",
        params=(history, meta_checksum("sessions", history)),
    )
    message = _one_error(CliRunner().invoke(cli, ["report", str(run_dir)]))
    assert "its run history is not a list of sessions" in message


def test_a_damaged_run_history_is_one_line_in_report(clean, tmp_path):
    run_dir = _copy(clean, tmp_path)
    _sql(run_dir, "UPDATE meta SET value = '[{]' WHERE key = 'sessions'")
    message = _one_error(CliRunner().invoke(cli, ["report", str(run_dir)]))
    assert "its run history fails its checksum" in message
    spec, _, table = clean
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0 and "was damaged" in result.stderr, result.output
    assert CliRunner().invoke(cli, ["report", str(run_dir)]).exit_code == 0
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)


# -- stores written before these checksums -------------------------------------------------------
def _without_checksums(run_dir: Path) -> None:
    _sql(run_dir, "ALTER TABLE cells DROP COLUMN crc", "ALTER TABLE meta DROP COLUMN crc")


def test_an_older_store_opens_and_a_run_gives_it_checksums(clean, tmp_path):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    _without_checksums(run_dir)
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    assert CliRunner().invoke(cli, ["report", str(run_dir)]).exit_code == 0
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0 and "warning" not in result.stderr, result.output
    assert f"0 results computed, {TOTAL} reused" in result.stderr
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        for table_name in ("meta", "cells"):
            nulls = db.execute(f"SELECT count(*) FROM {table_name} WHERE crc IS NULL").fetchone()
            assert nulls == (0,), table_name
    _relabel(run_dir)  # now covered by the checksums it was given
    message = _one_error(CliRunner().invoke(cli, ["export", str(run_dir)]))
    assert "of its cell table fails its checksum" in message


def test_an_older_store_relabelled_is_refused_by_readers_and_rebuilt_by_a_run(clean, tmp_path):
    spec, _, table = clean
    run_dir = _copy(clean, tmp_path)
    _without_checksums(run_dir)
    _relabel(run_dir)  # the label column no longer matches the cell's policy spec
    message = _one_error(CliRunner().invoke(cli, ["export", str(run_dir)]))
    assert "of its cell table disagrees with the cell's definition" in message
    # relabelled throughout (the policy's spec too): readers cannot tell; the run can
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        (text,) = db.execute(
            "SELECT policy_spec FROM cells WHERE policy_spec LIKE '%epsilon%'"
        ).fetchone()
        relabelled = json.dumps({**json.loads(text), "label": "ucb1"})
        db.execute("UPDATE cells SET policy_spec = ? WHERE policy_spec = ?", (relabelled, text))
        db.commit()
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    assert "its cell table differs from the spec's cells" in result.stderr
    assert f"0 results computed, {TOTAL} reused" in result.stderr
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
