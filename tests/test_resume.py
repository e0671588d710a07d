"""A killed sweep resumes: nothing finished is recomputed, nothing is duplicated."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pandas as pd

from impactbandits.experiments.tidy import tidy_table

SPEC = """
name = "killme"
seeds = 4
horizons = [200, 400, 800, 1600, 3200, 6400]
checkpoints = 10

[[environments]]
kind = "bernoulli"
means = [0.2, 0.5, 0.8]

[[policies]]
kind = "exp3"

[[policies]]
kind = "etc"

[[policies]]
kind = "ucb1"
"""


def _default_sigint() -> None:
    # A test runner started in the background by a non-interactive shell inherits SIGINT
    # ignored, and a Python child that starts with SIGINT ignored never raises
    # KeyboardInterrupt: give the CLI the default disposition, as a terminal would.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "impactbandits", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
        **kwargs,
    )


def _rows(db):
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT cell, seed, payload FROM results").fetchall()
    except sqlite3.OperationalError:
        return []


def test_sigkill_then_resume(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    run_dir = tmp_path / "run"
    db = run_dir / "results.sqlite"
    args = (
        "run",
        str(spec),
        "--backend",
        "serial",
        "--batch-size",
        "1",
        "--no-report",
        "--out",
        str(run_dir),
    )
    total = (6 + 6 + 1) * 4  # exp3 and etc are horizon-aware: one cell per horizon
    proc = _cli(*args)
    deadline = time.time() + 120
    while time.time() < deadline and len(_rows(db)) < 5:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _rows(db)
    assert 0 < len(before) < total, f"kill came too late or too early ({len(before)} rows)"

    again = _cli(*args)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert f"{total - len(before)} to run, {len(before)} already stored" in err
    after = _rows(db)
    assert len(after) == total
    assert len({(c, s) for c, s, _ in after}) == total  # no duplicates
    assert set(before) <= set(after)  # finished rows kept untouched

    clean_dir = tmp_path / "clean"
    clean = _cli("run", str(spec), "--backend", "serial", "--no-report", "--out", str(clean_dir))
    _, err = clean.communicate(timeout=300)
    assert clean.returncode == 0, err
    pd.testing.assert_frame_equal(
        tidy_table(run_dir, trajectories=True),
        tidy_table(clean_dir, trajectories=True),
        check_exact=True,
    )


def test_ctrl_c_stops_cleanly_and_keeps_finished_results(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    run_dir = tmp_path / "run"
    db = run_dir / "results.sqlite"
    for backend in ("serial", "process"):
        proc = _cli(
            "run",
            str(spec),
            "--backend",
            backend,
            "--batch-size",
            "1",
            "--no-report",
            "--out",
            str(run_dir),
            *(["--workers", "1"] if backend == "process" else []),
        )
        start = len(_rows(db))
        deadline = time.time() + 120
        while time.time() < deadline and len(_rows(db)) < start + 3:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "Traceback" not in err and "interrupted" in err
        assert len(_rows(db)) >= start + 3
    done = _cli("run", str(spec), "--backend", "serial", "--no-report", "--out", str(run_dir))
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    assert len({(c, s) for c, s, _ in _rows(db)}) == len(_rows(db)) == 13 * 4
