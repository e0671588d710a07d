"""Closing the local Dask cluster after a sweep: the workers exit on their own (none is killed
for taking more than distributed's 4 s), and nothing of distributed's shutdown reaches stderr
("Worker process still alive after 4.0 seconds, killing").

Each run is the command line in a fresh interpreter, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

SPEC = """
name = "tiny"
horizons = [50]
seeds = 4
[[environments]]
kind = "bernoulli"
means = [0.2, 0.8]
[[policies]]
kind = "ucb1"
"""

#: A Dask worker preload whose teardown (part of the worker's close) outlasts distributed's own
#: 4 s wait: a worker that is slow to exit, as on a busy machine. It leaves a file when done.
SLOW_EXIT = """
import os
import time
from pathlib import Path


def dask_teardown(worker):
    time.sleep(6)
    Path(os.environ["IMPACTBANDITS_TEST_MARKERS"], str(os.getpid())).touch()
"""


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC, encoding="utf-8")
    args = ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", "dask", "--workers", "2"]
    return subprocess.run(
        [sys.executable, "-m", "impactbandits", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


def _clean(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    assert "still alive" not in result.stderr, result.stderr
    assert not [line for line in result.stderr.splitlines() if "distributed." in line]
    assert "4 results computed" in result.stderr


def test_a_tiny_dask_sweep_closes_quietly(tmp_path):
    _clean(_run(tmp_path))


def test_slow_workers_are_waited_for_not_killed(tmp_path):
    (tmp_path / "slow_exit.py").write_text(SLOW_EXIT, encoding="utf-8")
    markers = tmp_path / "markers"
    markers.mkdir()
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    result = _run(
        tmp_path,
        PYTHONPATH=path,
        DASK_DISTRIBUTED__WORKER__PRELOAD='["slow_exit"]',
        IMPACTBANDITS_TEST_MARKERS=str(markers),
    )
    _clean(result)
    # both workers finished their teardown: neither was killed after 4 s
    assert len(list(markers.iterdir())) == 2, result.stderr
