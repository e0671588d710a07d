"""Binary result payloads: bit-exact round trips, old JSON stores still read (and migrate),
damaged blobs caught by their checksum, and the streaming tidy table."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.cli import cli
from impactbandits.experiments import worker
from impactbandits.experiments.cells import Task, expand
from impactbandits.experiments.payload import decode, decode_json, encode
from impactbandits.experiments.report import longest_cells, write_report
from impactbandits.experiments.store import STORE_FILE, DamagedStoreError, Store
from impactbandits.experiments.store_repair import row_checksum
from impactbandits.experiments.tidy import read_table
from impactbandits.registry import build_environment

OLD_STORE = Path(__file__).parent / "data" / "old_json_store"
"""A store written with JSON payloads (before the binary format) by ``make_fixture.py``, with
its tidy tables as that version made them (``tidy*.parquet``, ``tidy*.csv``)."""

SPEC = dict(
    name="binary",
    environments=[
        {
            "kind": "opportunity",
            "label": "opp",
            "means": [0.2, 0.5, 0.9],
            "fairness": "linear",
            "transfer_cost": 0.6,
        },
        {"kind": "bernoulli", "label": "b2", "means": [0.3, 0.7]},
    ],
    policies=[{"kind": "srum", "environments": ["opp"]}, {"kind": "ucb1"}],
    horizons=[40, 90],
    seeds=4,
    checkpoints=6,
)


def _old_copy(tmp_path: Path) -> Path:
    run_dir = tmp_path / "old"
    run_dir.mkdir()
    shutil.copy(OLD_STORE / STORE_FILE, run_dir / STORE_FILE)
    return run_dir


def _reference(trajectories: bool) -> pd.DataFrame:
    name = "tidy_trajectories" if trajectories else "tidy"
    return pd.read_parquet(OLD_STORE / f"{name}.parquet")


def _payload_types(run_dir: Path) -> dict[str, int]:
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        query = "SELECT typeof(payload), count(*) FROM results GROUP BY 1"
        return dict(db.execute(query).fetchall())


# -- the format ---------------------------------------------------------------------------------


def test_encode_decode_is_bit_exact_for_awkward_values():
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.7976931348623157e308, 0.1])
    payload = {
        "times": np.array([1, 2, 3, 4, 5, 6, 7, 8], dtype=np.int64),
        "reward": specials,
        "expected": specials[::-1].copy(),
        "optimum": None,
        "pulls": np.arange(24, dtype=np.int64).reshape(8, 3) * (2**62 // 24),
        "switches": np.array([0, 0, 1, 1, 2, 3, 5, 8]),
        "phases": None,
        "phase_switches": None,
        "extras": {"α utility": -specials, "mass": np.linspace(0, 1, 8, dtype=np.float32)},
        "phase_names": [],
        "regret_on": None,
        "realised_on": "α utility",
    }
    blob = encode(payload)
    assert blob == encode(payload)  # deterministic
    back = decode(blob)
    for name in ("times", "reward", "expected", "pulls", "switches"):
        assert back[name].dtype == payload[name].dtype and back[name].shape == payload[name].shape
        assert back[name].tobytes() == payload[name].tobytes()
        assert not back[name].flags.writeable  # a view of the blob
    assert back["optimum"] is None and back["phases"] is None
    for name, values in payload["extras"].items():
        assert back["extras"][name].dtype == values.dtype
        assert back["extras"][name].tobytes() == values.tobytes()
    assert back["realised_on"] == "α utility" and back["phase_names"] == []
    for bad in (blob[:-1], blob + b"\x00", blob[:20], b"{}", b"IBR\x00\x09\x00" + blob[6:]):
        with pytest.raises(ValueError):
            decode(bad)


def test_stored_payloads_are_the_simulated_trajectories_bit_for_bit(tmp_path, monkeypatch):
    """Through the worker, the store's BLOB column and the reader: every array equals the
    in-memory trajectory (and the oracle values and summary metrics) byte for byte."""
    captured = []

    def capture(*args, **kwargs):
        trajectory = simulate(*args, **kwargs)
        captured.append(trajectory)
        return trajectory

    simulate = worker.simulate
    monkeypatch.setattr(worker, "simulate", capture)
    spec = ExperimentSpec.create(**SPEC)
    cells = expand(spec)
    with Store.create(tmp_path, spec, cells) as store:
        for cell in cells:
            task = Task(cell, (0, 1, 2))
            records = worker.run_task(task)
            assert all(isinstance(r.payload, bytes) for r in records)
            store.add(records)
            trajectory = captured[-1]
            times = np.asarray(cell.checkpoints, dtype=np.int64)
            optimum = worker._optimum(task, times)
            env = build_environment(cell.environment.kind, cell.environment.params)
            extras = env.summary_metrics(trajectory)
            stored = {seed: p for key, seed, p in store.results(cells={cell.key})}
            assert sorted(stored) == [0, 1, 2]
            for i, seed in enumerate(task.replications):
                p = stored[seed]
                expected = {
                    "times": times,
                    "reward": trajectory.reward[i],
                    "expected": trajectory.expected[i],
                    "pulls": trajectory.pulls[i],
                    "switches": trajectory.switches[i],
                    "optimum": None if optimum is None else optimum[i],
                    "phases": None if trajectory.phases is None else trajectory.phases[i],
                    "phase_switches": None
                    if trajectory.phase_switches is None
                    else trajectory.phase_switches[i],
                    **{
                        f"extra:{k}": np.asarray(v, float)[i] if np.ndim(v) == 2 else v
                        for k, v in extras.items()
                    },
                }
                for name, value in expected.items():
                    got = p["extras"][name[6:]] if name.startswith("extra:") else p[name]
                    if value is None:
                        assert got is None, name
                        continue
                    value = np.asarray(value)
                    assert got.dtype == value.dtype and got.shape == value.shape, name
                    assert got.tobytes() == value.tobytes(), (cell.key, seed, name)
                assert p["phase_names"] == list(_phases(cell))
    assert _payload_types(tmp_path) == {"blob": 3 * len(cells)}
    assert any(c.policy.kind == "srum" for c in cells)  # phases and extras were covered


def _phases(cell) -> tuple[str, ...]:
    from impactbandits.registry import build_policy

    return tuple(build_policy(cell.policy.kind, cell.policy.params).phases)


# -- old stores ---------------------------------------------------------------------------------


@pytest.mark.parametrize("trajectories", [False, True])
def test_old_json_store_gives_the_table_it_gave(tmp_path, trajectories):
    run_dir = _old_copy(tmp_path)
    assert _payload_types(run_dir) == {"text": 18}
    table = tidy_table(run_dir, trajectories=trajectories)
    pd.testing.assert_frame_equal(table, _reference(trajectories), check_exact=True)
    name = "tidy_trajectories" if trajectories else "tidy"
    csv = table.to_csv(index=False, float_format="%.17g")
    assert csv == (OLD_STORE / f"{name}.csv").read_text()


def test_mixed_and_migrated_stores_give_the_same_table(tmp_path):
    run_dir = _old_copy(tmp_path)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:  # seed 1 as a newer run wrote it
        rows = db.execute("SELECT rowid, cell, seed, payload FROM results WHERE seed = 1")
        for rowid, cell, seed, text in rows.fetchall():
            blob = encode(decode_json(text))
            db.execute(
                "UPDATE results SET payload = ?, crc = ? WHERE rowid = ?",
                (blob, row_checksum(cell, seed, blob), rowid),
            )
        db.commit()
    assert _payload_types(run_dir) == {"text": 12, "blob": 6}
    for trajectories in (False, True):
        table = tidy_table(run_dir, trajectories=trajectories)
        pd.testing.assert_frame_equal(table, _reference(trajectories), check_exact=True)
    with Store.open_existing(run_dir) as store:
        assert store.migrate(batch=5) == 12
        assert store.migrate() == 0
    assert _payload_types(run_dir) == {"blob": 18}
    for trajectories in (False, True):
        table = tidy_table(run_dir, trajectories=trajectories)
        pd.testing.assert_frame_equal(table, _reference(trajectories), check_exact=True)


def test_migrate_refuses_a_damaged_json_row(tmp_path):
    run_dir = _old_copy(tmp_path)
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        db.execute("UPDATE results SET payload = substr(payload, 1, 50) WHERE rowid = 3")
        db.commit()
    with Store.open_existing(run_dir) as store, pytest.raises(DamagedStoreError):
        store.migrate()


# -- damage -------------------------------------------------------------------------------------


def _flip_bit(run_dir: Path, rowid: int = 5) -> None:
    """One bit of one stored reward value: the blob still decodes, only the checksum sees it."""
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        (blob,) = db.execute("SELECT payload FROM results WHERE rowid = ?", (rowid,)).fetchone()
        decode(blob)
        end = 12 + int.from_bytes(blob[8:12], "little")
        offsets = {name: offset for name, _, _, offset in json.loads(blob[12:end])["arrays"]}
        i = (end + 7) // 8 * 8 + offsets["reward"] + 3  # a byte of the first reward value
        changed = blob[:i] + bytes([blob[i] ^ 0x10]) + blob[i + 1 :]
        decode(changed)
        db.execute("UPDATE results SET payload = ? WHERE rowid = ?", (changed, rowid))
        db.commit()


def test_a_damaged_blob_is_caught_and_recomputed(tmp_path):
    spec = ExperimentSpec.create(**SPEC)
    run_dir = tmp_path / "run"
    run_experiment(spec, run_dir, backend="serial")
    total = len(expand(spec)) * spec.seeds
    table = tidy_table(run_dir, trajectories=True)
    _flip_bit(run_dir)
    with pytest.raises(DamagedStoreError, match=f"1 of {total} stored results lost"):
        tidy_table(run_dir)
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 2 and "is damaged" in result.stderr
    with pytest.warns(UserWarning, match="was damaged"):
        run_experiment(spec, run_dir, backend="serial")
    assert _payload_types(run_dir) == {"blob": total}
    pd.testing.assert_frame_equal(tidy_table(run_dir, trajectories=True), table, check_exact=True)


# -- the streaming table and the report ---------------------------------------------------------


def test_table_grows_when_its_size_was_underestimated(tmp_path, monkeypatch):
    run_dir = _old_copy(tmp_path)
    samples = Store.samples
    # every cell claims one result and no readable sample: the columns must grow while read
    monkeypatch.setattr(
        Store, "samples", lambda self, seeds=None: dict.fromkeys(samples(self, seeds), (1, None))
    )
    for trajectories in (False, True):
        table = tidy_table(run_dir, trajectories=trajectories)
        pd.testing.assert_frame_equal(table, _reference(trajectories), check_exact=True)


def test_report_reads_only_the_trajectories_it_draws(tmp_path):
    run_dir = _old_copy(tmp_path)
    with Store.open_existing(run_dir) as store:
        spec = store.spec()
        full = read_table(store, spec, trajectories=True)
        cells = longest_cells(store, spec.seeds)
        some = read_table(store, spec, trajectories=True, cells=cells)
    longest = full["run_horizon"] == full.groupby(["environment", "policy"], observed=True)[
        "run_horizon"
    ].transform("max")
    pd.testing.assert_frame_equal(
        some, full[longest].reset_index(drop=True), check_exact=True, check_categorical=False
    )
    assert len(some) < len(full)
    assert write_report(run_dir).is_file()


def test_a_format_1_store_is_read_but_not_resumed(tmp_path):
    """A store made by the library before the Philox noise (format 1: tests/data/format1_store,
    see its make_fixture.py) opens for the table, and a run into it is refused in one line that
    names the cause."""
    from impactbandits import ExperimentSpec, run_experiment, tidy_table
    from impactbandits.errors import StoreError
    from impactbandits.experiments.store import Store

    run_dir = tmp_path / "old"
    shutil.copytree(OLD_STORE.parent / "format1_store", run_dir)
    assert len(tidy_table(run_dir)) > 0
    with Store.open_existing(run_dir) as store:
        spec = ExperimentSpec.create(**store.spec().to_dict())  # the stored spec, run on purpose
    with pytest.raises(StoreError, match=r"older version \(store format 1"):
        run_experiment(spec, run_dir, backend="serial")
