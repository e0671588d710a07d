"""A received run directory may hold links: nothing a command writes goes through them (issue 41,
item 1).

Before, with ``report.html -> ../victim.txt`` and ``figures -> ../victimdir`` in a run directory,
``impactbandits report DIR`` exited 0, wrote its HTML over the outside file and its figures into
the outside folder; ``run``, ``reproduce`` and ``benchmark`` did the same when they drew their
report, ``benchmark`` wrote its tables through links, ``export`` wrote through a link at its
temporary name, the lock file was truncated through a link and SQLite opened (or created) a store
file that was a link. Each test plants links to files and folders outside the run directory
and checks that the outside is untouched, and that the command either wrote real files in the
run directory or refused with one ``error:`` line and exit status 2.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from impactbandits.cli import cli
from impactbandits.experiments.store import STORE_FILE

SPEC = """
name = "links"
horizons = [20]
seeds = 2
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[policies]]
kind = "ucb1"
"""

VICTIM = b"an outside file nobody asked to change\n"


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


class Outside:
    """Files and a folder outside the run directory, to check that they stay as they are."""

    def __init__(self, base: Path) -> None:
        self.base = base / "outside"
        self.base.mkdir()
        self.file = self.base / "victim.txt"
        self.file.write_bytes(VICTIM)
        self.folder = self.base / "victimdir"
        self.folder.mkdir()
        (self.folder / "keep.txt").write_bytes(VICTIM)
        self.missing = self.base / "not-there.sqlite"

    def snapshot(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.base)): p.read_bytes()
            for p in self.base.rglob("*")
            if p.is_file()
        }

    def untouched(self, before: dict[str, bytes]) -> None:
        assert self.snapshot() == before
        assert sorted(p.name for p in self.folder.iterdir()) == ["keep.txt"]
        assert not self.missing.exists()


def link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.symlink_to(target)


def refused(result, *names: str) -> str:
    """Exit status 2, a single ``error:`` line (the last one; progress lines may precede it)
    naming the output field and each of ``names``."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.stderr.strip().splitlines()[-1] == errors[0], result.stderr
    for name in names:
        assert name in errors[0], errors[0]
    return errors[0]


def trapped_run_dir(tmp_path: Path) -> tuple[Outside, dict[str, bytes], Path]:
    """An empty run directory whose ``report.html`` and ``figures`` are links out of it: the
    outside places, their snapshot before anything runs, and the directory."""
    outside = Outside(tmp_path)
    before = outside.snapshot()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    link(run_dir / "report.html", outside.file)
    link(run_dir / "figures", outside.folder)
    return outside, before, run_dir


def real_file(path: Path) -> None:
    assert path.is_file() and not path.is_symlink(), path


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def finished(spec_file, tmp_path) -> Path:
    """A finished run without its report."""
    run_dir = tmp_path / "run"
    result = invoke("run", spec_file, "--out", run_dir, "--backend", "serial", "--no-report")
    assert result.exit_code == 0, result.output
    return run_dir


# -- report ------------------------------------------------------------------------------------
def test_report_refuses_a_figures_link_and_replaces_a_file_link(finished, tmp_path):
    outside = Outside(tmp_path)
    before = outside.snapshot()
    link(finished / "report.html", outside.file)
    link(finished / "figures", outside.folder)
    message = refused(invoke("report", finished), str(finished / "figures"), "symbolic link")
    assert message.startswith("error: output: ")
    outside.untouched(before)
    # a real figures folder holding links: each file replaces its link
    (finished / "figures").unlink()
    (finished / "figures").mkdir()
    for name in ("b2.png", "b2.csv"):
        link(finished / "figures" / name, outside.file)
    result = invoke("report", finished, "--figure-format", "svg")
    assert result.exit_code == 0, result.output
    outside.untouched(before)
    for name in ("report.html", "figures/b2.png", "figures/b2.csv", "figures/b2.svg"):
        real_file(finished / name)
    assert (finished / "report.html").read_text().startswith("<!doctype html>")
    assert not [p for p in finished.rglob("*.partial")]


def test_readers_refuse_a_store_that_is_a_link(finished, tmp_path):
    outside = Outside(tmp_path)
    store = outside.base / "copy.sqlite"
    shutil.copyfile(finished / STORE_FILE, store)
    before = outside.snapshot()
    (finished / STORE_FILE).unlink()
    link(finished / STORE_FILE, store)
    for args in (["report", finished], ["export", finished, "-o", tmp_path / "t.csv"]):
        message = refused(invoke(*args), str(finished / STORE_FILE), "symbolic link")
        assert message.startswith("error: run_dir: ")
    outside.untouched(before)
    assert not (outside.base / "copy.sqlite-wal").exists()
    assert not (outside.base / "copy.sqlite-shm").exists()


def test_readers_refuse_a_wal_index_that_is_a_link(finished, tmp_path):
    outside = Outside(tmp_path)
    before = outside.snapshot()
    link(finished / (STORE_FILE + "-shm"), outside.file)  # SQLite would write its index there
    refused(invoke("report", finished), str(finished / (STORE_FILE + "-shm")))
    outside.untouched(before)


# -- export ------------------------------------------------------------------------------------
def test_export_writes_no_file_through_a_link(finished, tmp_path):
    outside = Outside(tmp_path)
    before = outside.snapshot()
    link(finished / "results.csv", outside.file)
    link(finished / ".results.csv.partial", outside.file)  # the temporary name export used
    result = invoke("export", finished)
    assert result.exit_code == 0, result.output
    outside.untouched(before)
    real_file(finished / "results.csv")
    assert (finished / "results.csv").read_text().startswith("experiment,")
    link(finished / "results.parquet", outside.file)
    assert invoke("export", finished, "--format", "parquet").exit_code == 0
    outside.untouched(before)
    real_file(finished / "results.parquet")


# -- run ---------------------------------------------------------------------------------------
def test_run_writes_its_report_without_following_links(spec_file, tmp_path):
    outside, before, run_dir = trapped_run_dir(tmp_path)
    result = invoke("run", spec_file, "--out", run_dir, "--backend", "serial")
    refused(result, str(run_dir / "figures"))
    outside.untouched(before)
    assert "2 results computed" in result.stderr  # the results are stored: only drawing stops
    (run_dir / "figures").unlink()
    result = invoke("run", spec_file, "--out", run_dir, "--backend", "serial")
    assert result.exit_code == 0, result.output
    assert "0 results computed, 2 reused" in result.stderr
    outside.untouched(before)
    real_file(run_dir / "report.html")
    real_file(run_dir / "figures" / "b2.png")


@pytest.mark.parametrize("name", [STORE_FILE, STORE_FILE + "-wal", ".lock"])
def test_run_refuses_a_store_or_lock_that_is_a_link(spec_file, tmp_path, name):
    outside = Outside(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # the store: to a file that does not exist (SQLite would create it); the others: a file
    link(run_dir / name, outside.missing if name == STORE_FILE else outside.file)
    before = outside.snapshot()
    result = invoke("run", spec_file, "--out", run_dir, "--backend", "serial")
    refused(result, str(run_dir / name), "symbolic link")
    outside.untouched(before)
    assert not any((outside.base / f"not-there.sqlite{s}").exists() for s in ("-wal", "-shm"))


def test_run_refuses_a_store_linked_to_another_copy(spec_file, finished, tmp_path):
    outside = Outside(tmp_path)
    store = outside.base / "copy.sqlite"
    shutil.copyfile(finished / STORE_FILE, store)
    before = outside.snapshot()
    run_dir = tmp_path / "received"
    run_dir.mkdir()
    link(run_dir / STORE_FILE, store)
    refused(invoke("run", spec_file, "--out", run_dir, "--backend", "serial"), STORE_FILE)
    outside.untouched(before)


# -- reproduce ---------------------------------------------------------------------------------
def test_reproduce_writes_nothing_through_links(tmp_path):
    outside, before, run_dir = trapped_run_dir(tmp_path)
    args = ["reproduce", "demo-stationary", "--quick", "--seeds", "1", "--backend", "serial"]
    refused(invoke(*args, "--out", run_dir), str(run_dir / "figures"))
    outside.untouched(before)
    (run_dir / "figures").unlink()
    (run_dir / "figures").mkdir()
    for png in ("bernoulli-10.png", "bernoulli-10.csv"):
        link(run_dir / "figures" / png, outside.file)
    result = invoke(*args, "--out", run_dir)
    assert result.exit_code == 0, result.output
    outside.untouched(before)
    real_file(run_dir / "report.html")
    real_file(run_dir / "figures" / "bernoulli-10.png")
    link(run_dir / STORE_FILE, outside.missing)
    refused(invoke(*args, "--out", run_dir), str(run_dir / STORE_FILE))
    outside.untouched(before)


# -- benchmark ---------------------------------------------------------------------------------
BENCH = ["benchmark", "--quick", "--setting", "stationary", "--seeds", "1", "--backend", "serial"]


def test_benchmark_writes_its_tables_and_heat_maps_without_following_links(tmp_path):
    outside = Outside(tmp_path)
    before = outside.snapshot()
    run_dir = tmp_path / "bench"
    run_dir.mkdir()
    for name in ("leaderboard.csv", "ranks.csv", "pairs.csv", "leaderboard.md", "report.html"):
        link(run_dir / name, outside.file)
    (run_dir / "figures").mkdir()
    link(run_dir / "figures" / "paper", outside.folder)  # where the rank heat maps go
    refused(invoke(*BENCH, "--out", run_dir), str(run_dir / "figures" / "paper"))
    outside.untouched(before)
    (run_dir / "figures" / "paper").unlink()
    result = invoke(*BENCH, "--out", run_dir)
    assert result.exit_code == 0, result.output
    outside.untouched(before)
    for name in ("leaderboard.csv", "ranks.csv", "pairs.csv", "leaderboard.md", "report.html"):
        real_file(run_dir / name)
    assert sorted(p.name for p in (run_dir / "figures" / "paper").iterdir()) == [
        "ranks-T1000.png",
        "ranks-T300.png",
    ]


USER_MODULE = '''
from impactbandits.policies.classic import UCB1


class LinkedUCB(UCB1):
    """UCB1 under another name."""
'''


def test_a_benchmark_entry_writes_its_files_without_following_links(tmp_path, monkeypatch):
    (tmp_path / "linkmod.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    outside = Outside(tmp_path)
    before = outside.snapshot()
    run_dir = tmp_path / "entry"
    run_dir.mkdir()
    for name in ("leaderboard.csv", "entry.csv", "entry.md"):
        link(run_dir / name, outside.file)
    args = ["benchmark", "--quick", "--setting", "stationary", "--policy", "linkmod:LinkedUCB"]
    result = invoke(*args, "--out", run_dir, "--backend", "serial")
    assert result.exit_code == 0, result.output
    outside.untouched(before)
    for name in ("leaderboard.csv", "entry.csv", "entry.md"):
        real_file(run_dir / name)
    assert "LinkedUCB" in (run_dir / "entry.md").read_text()
