"""Processes and concurrency of a run: kill, terminate, and a second writer (issue 12).

The subprocess tests start ``impactbandits run`` with the process backend (2 workers,
``--batch-size 1`` so results arrive one by one), record every descendant with psutil (resource
tracker, fork server, workers) and check that none survives the runner, that the run resumes to
exactly the table of an uninterrupted run, and that a second run on the same directory is
refused in one line while the first goes on undisturbed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import psutil
import pytest

from impactbandits.errors import StoreError
from impactbandits.experiments.tidy import tidy_table
from tests.conftest import small_spec

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SPEC = """
name = "processes"
seeds = 6
horizons = [1000, 2000, 4000]
checkpoints = 5

[[environments]]
kind = "bernoulli"
means = [0.2, 0.5, 0.8]

[[policies]]
kind = "ucb1"

[[policies]]
kind = "etc"
"""
TOTAL = (1 + 3) * 6  # ucb1 is anytime (one cell), etc is horizon-aware (one cell per horizon)
#: Processes of a stopped run must be gone within this many seconds.
GONE_WITHIN = 10.0


def _command(spec: Path, run_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "impactbandits",
        "run",
        str(spec),
        "--no-report",
        "--no-progress",
        "--out",
        str(run_dir),
        *extra,
    ]


def _run_command(spec: Path, run_dir: Path) -> list[str]:
    """The command under test: process backend, 2 workers, one replication per task."""
    return _command(spec, run_dir, "--backend", "process", "--workers", "2", "--batch-size", "1")


def _start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stored(run_dir: Path) -> int:
    try:
        with contextlib.closing(sqlite3.connect(run_dir / "results.sqlite", timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
    return alive


@contextlib.contextmanager
def _reaped(processes: list[psutil.Process]) -> Iterator[None]:
    """Whatever the outcome, kill the recorded processes of the test's own run still alive."""
    try:
        yield
    finally:
        for process in _alive(processes):
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()


def _lock_holder(run_dir: Path) -> str:
    with contextlib.suppress(OSError):
        return (run_dir / ".lock").read_text().strip()
    return ""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """The spec file and the table of an uninterrupted run (default batches)."""
    root = tmp_path_factory.mktemp("processes")
    spec = root / "spec.toml"
    spec.write_text(SPEC)
    run_dir = root / "reference"
    done = subprocess.run(
        _command(spec, run_dir, "--workers", "2"), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return spec, tidy_table(run_dir, trajectories=True)


def _stop_and_resume(
    reference: tuple[Path, pd.DataFrame], run_dir: Path, sig: signal.Signals
) -> tuple[subprocess.Popen[str], str, int, float]:
    """Start a run, send ``sig`` once some results are stored, check that every process of the
    run is gone within GONE_WITHIN seconds, resume, and compare with the reference table.
    Returns the stopped process, its stderr, the results stored at the stop and the seconds
    until the last process was gone."""
    spec, table = reference
    runner = _start(_run_command(spec, run_dir))
    processes = [psutil.Process(runner.pid)]
    with _reaped(processes):
        _wait_for(lambda: _stored(run_dir) >= 2 or runner.poll() is not None, "2 results")
        assert runner.poll() is None, runner.communicate()
        children = processes[0].children(recursive=True)
        processes.extend(children)
        # resource tracker, fork server (Linux) and both workers
        assert len(children) >= (4 if sys.platform.startswith("linux") else 3), children
        stopped_at = time.monotonic()
        runner.send_signal(sig)
        # the pipes are released only when the runner and every process holding them are gone
        _, err = runner.communicate(timeout=GONE_WITHIN)
        _wait_for(lambda: not _alive(processes), "the run's processes to end", GONE_WITHIN)
        gone_after = time.monotonic() - stopped_at
    stored = _stored(run_dir)
    assert 0 < stored < TOTAL, f"stopped too late or too early ({stored} results)"

    resumed = subprocess.run(_run_command(spec, run_dir), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{TOTAL - stored} to run, {stored} already stored" in resumed.stderr
    pd.testing.assert_frame_equal(tidy_table(run_dir, trajectories=True), table, check_exact=True)
    return runner, err, stored, gone_after


def test_sigkill_of_the_runner_ends_every_process_and_the_run_resumes(
    reference: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    runner, _, _, gone_after = _stop_and_resume(reference, tmp_path / "run", signal.SIGKILL)
    assert runner.returncode == -signal.SIGKILL
    assert gone_after < GONE_WITHIN


def test_sigterm_stops_like_ctrl_c_with_status_143(
    reference: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    runner, err, stored, _ = _stop_and_resume(reference, run_dir, signal.SIGTERM)
    assert runner.returncode == 143, err
    assert "Traceback" not in err and "leaked" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: terminated: {stored} of {TOTAL} results are stored in {run_dir}; "
        "run the same command again to resume"
    ], err


def test_a_second_writer_is_refused_in_one_line_and_disturbs_nothing(
    reference: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    spec, table = reference
    run_dir = tmp_path / "run"
    for phase in ("new directory", "existing store"):
        start = _stored(run_dir)
        first = _start(_run_command(spec, run_dir))
        processes = [psutil.Process(first.pid)]
        with _reaped(processes):
            _wait_for(
                lambda first=first, start=start: (
                    (_lock_holder(run_dir) == str(first.pid) and _stored(run_dir) > start)
                    or first.poll() is not None
                ),
                f"the first run to lock the {phase} and store a result",
            )
            assert first.poll() is None, f"the first run never locked the {phase}"
            processes.extend(processes[0].children(recursive=True))
            # pause the first run (it holds the lock) so that it cannot finish meanwhile
            first.send_signal(signal.SIGSTOP)
            try:
                second = subprocess.run(_run_command(spec, run_dir), capture_output=True, text=True)
                assert second.returncode == 2, (phase, second.stderr)
                assert re.fullmatch(
                    rf"error: output: '{re.escape(str(run_dir))}' is in use by another run "
                    rf"\(pid {first.pid}\); [^\n]+\n",
                    second.stderr,
                ), (phase, second.stderr)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # results are missing, of course
                    tidy_table(run_dir)  # readers may read while a run writes
                if phase == "new directory":
                    first.send_signal(signal.SIGTERM)  # leaves an incomplete store for phase 2
            finally:
                first.send_signal(signal.SIGCONT)
            _, err = first.communicate(timeout=300)
            assert first.returncode == (143 if phase == "new directory" else 0), err
    pd.testing.assert_frame_equal(tidy_table(run_dir, trajectories=True), table, check_exact=True)


def test_the_lock_is_exclusive_released_on_exit_and_never_stale(tmp_path: Path) -> None:
    from impactbandits.experiments.lock import run_dir_lock

    run_dir = tmp_path / "new" / "run"
    with run_dir_lock(run_dir):
        assert (run_dir / ".lock").read_text() == f"{os.getpid()}\n"
        held = rf"^output: '{re.escape(str(run_dir))}' is in use by another run \(pid {os.getpid()}"
        with pytest.raises(StoreError, match=held), run_dir_lock(run_dir):
            pass
    with pytest.raises(RuntimeError), run_dir_lock(run_dir):
        raise RuntimeError  # released on errors too
    (run_dir / ".lock").write_text("999999999\n")  # left by a killed run
    with run_dir_lock(run_dir):
        assert (run_dir / ".lock").read_text() == f"{os.getpid()}\n"


def test_run_experiment_refuses_a_locked_directory_and_restores_signal_handlers(
    tmp_path: Path,
) -> None:
    from impactbandits.experiments.lock import run_dir_lock
    from impactbandits.experiments.runner import run_experiment

    spec = small_spec(environments=[{"kind": "bernoulli", "means": [0.3, 0.7]}], seeds=2)
    run_dir = tmp_path / "run"
    with (
        run_dir_lock(run_dir),
        pytest.raises(StoreError, match=r"^output: .* in use by another run"),
    ):
        run_experiment(spec, run_dir, backend="serial")
    assert not (run_dir / "results.sqlite").exists()

    def handler(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        summary = run_experiment(spec, run_dir, backend="serial")
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert summary.computed == summary.cells * summary.seeds

    # a library call from another thread, where Python cannot install signal handlers, works
    outcome: list[object] = []
    thread = threading.Thread(
        target=lambda: outcome.append(run_experiment(spec, tmp_path / "thread", backend="serial"))
    )
    thread.start()
    thread.join(timeout=120)
    assert outcome and signal.getsignal(signal.SIGTERM) is previous
