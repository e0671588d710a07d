"""Reading a store needs no free space, and a store cut short is rebuilt from what is left.

**A full disk.** A reader used to open the store writable and set ``journal_mode=WAL``; SQLite
then makes the WAL index ``results.sqlite-shm`` and grows it to 32 KiB by writing a byte into
each of its pages. On a full disk that write fails (``SQLITE_IOERR_SHMSIZE``, "disk I/O error")
and ``export``/``report`` of a healthy store said it was "not a results store, or is damaged
beyond repair (disk I/O error); move it away". Here SQLite's write fails the same way through a
file-size limit (``RLIMIT_FSIZE``: ``EFBIG`` instead of ``ENOSPC``, the same failed write and
the same ``SQLITE_IOERR_SHMSIZE``), and the outputs go to ``/dev/full`` (a real ``ENOSPC``);
:func:`test_a_real_full_disk` fills a 2 MiB tmpfs where mounting is permitted.

**A file cut short** (a copy that stopped, a sync cut off) used to be refused outright ("not a
results store, or is damaged beyond repair (database disk image is malformed)"): SQLite refuses
a file shorter than its header says unless ``writable_schema`` is on. Now ``run`` rebuilds it
from every row whose pages are left, and ``export``/``report`` say what is lost. Which rows are
left is worked out independently, from the intact store's page map (``dbstat``).
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from collections import defaultdict
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits import ExperimentSpec, tidy_table
from impactbandits.cli import cli
from impactbandits.experiments.cells import expand
from impactbandits.experiments.report import write_report
from impactbandits.experiments.store import STORE_FILE, Store

from .test_store_integrity import SPEC as INTEGRITY_SPEC
from .test_store_integrity import _run_args

#: The small run of the integrity tests (24 rows).
SMALL = INTEGRITY_SPEC

#: 3 environments × 2 policies × 50 seeds = 300 rows; the 10-arm payloads (6 KB) need overflow
#: pages, the others (3 KB) do not.
BIG = """
name = "truncation"
seeds = 50
horizons = [30, 2000]
checkpoints = 50

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[environments]]
kind = "bernoulli"
label = "b3"
means = [0.2, 0.5, 0.6]

[[environments]]
kind = "bernoulli"
label = "b10"
means = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55]

[[policies]]
kind = "ucb1"

[[policies]]
kind = "epsilon-greedy"
"""
BIG_ROWS = 300

#: Below the 32 KiB SQLite writes into a new ``-shm`` file.
FILE_SIZE_LIMIT = 16 * 1024


def _make(base: Path, text: str) -> tuple[Path, Path, pd.DataFrame]:
    spec = base / "spec.toml"
    spec.write_text(text)
    result = CliRunner().invoke(cli, _run_args(spec, base / "run"))
    assert result.exit_code == 0, result.output
    return spec, base / "run", tidy_table(base / "run")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A finished small run (24 rows), its spec file, table and report figures' names."""
    base = tmp_path_factory.mktemp("small")
    spec, run_dir, table = _make(base, SMALL)
    drawn = base / "drawn"
    shutil.copytree(run_dir, drawn)
    write_report(drawn)  # also builds matplotlib's font cache before any limit is set
    figures = sorted(p.name for p in (drawn / "figures").glob("*.png"))
    assert figures
    return spec, run_dir, table, figures


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A finished run of 300 rows, its spec file, table, rows and page map."""
    spec, run_dir, table = _make(tmp_path_factory.mktemp("big"), BIG)
    db_path = run_dir / STORE_FILE
    with closing(sqlite3.connect(db_path)) as db:
        rows = {
            int(rowid): (str(cell), int(seed), bytes(payload), float(seconds))
            for rowid, cell, seed, payload, seconds in db.execute(
                "SELECT rowid, cell, seed, payload, seconds FROM results"
            )
        }
        page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
        roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master"))
        overflow = db.execute(
            "SELECT count(*) FROM dbstat WHERE name = 'results' AND pagetype = 'overflow'"
        ).fetchone()[0]
    assert len(rows) == BIG_ROWS and sorted(rows) == list(range(1, BIG_ROWS + 1))
    assert 0 < overflow < BIG_ROWS  # some payloads spill into overflow pages, some do not
    return spec, run_dir, table, rows, _pages_of_rows(db_path), page_size, roots


def _pages_of_rows(db_path: Path) -> dict[int, set[int]]:
    """rowid → the pages SQLite reads for that row: the b-tree pages from the root to its leaf
    and its overflow pages (``dbstat`` lists leaves in key order; rowids run 1, 2, ...)."""
    with closing(sqlite3.connect(db_path)) as db:
        pages = db.execute(
            "SELECT path, pageno, pagetype, ncell FROM dbstat WHERE name = 'results' ORDER BY path"
        ).fetchall()
    page_at = {path: pageno for path, pageno, _, _ in pages}
    overflow: dict[tuple[str, int], set[int]] = defaultdict(set)
    for path, pageno, kind, _ in pages:
        if kind == "overflow":  # "/0c8/001+000000": cell 1 of leaf "/0c8/", overflow page 0
            leaf, _, rest = path.rpartition("/")
            overflow[(leaf + "/", int(rest.split("+")[0], 16))].add(pageno)
    found: dict[int, set[int]] = {}
    for path, pageno, kind, ncell in pages:
        if kind != "leaf":
            continue
        branch = {page_at[path[: i + 1]] for i, char in enumerate(path) if char == "/"}
        for cell in range(ncell):
            found[len(found) + 1] = branch | {pageno} | overflow[(path, cell)]
    return found


def _readable(big, size: int) -> tuple[set[int], set[int]]:
    """Rows (rowids) all of whose pages are whole in the first ``size`` bytes, and rows that
    also touch the last, partial page (whether SQLite can read those depends on where in the
    page they lie: rows cut off fail their checksum)."""
    pages, page_size = big[4], big[5]
    whole = size // page_size
    partial = whole + 1 if size % page_size else whole
    must = {rowid for rowid, needed in pages.items() if max(needed) <= whole}
    maybe = {rowid for rowid, needed in pages.items() if max(needed) <= partial} - must
    return must, maybe


def _only_the_phase_line(stderr: str) -> bool:
    """No warning and no error: only the export's one progress line (stderr is not a TTY)."""
    return re.fullmatch(r"export: in \d+\.\d s\n", stderr) is not None


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(run_dir, target)
    return target


def _files(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run directory with its bytes (figures aside, and the run lock, which
    holds the pid of the last run)."""
    return {
        p.name: p.read_bytes()
        for p in sorted(run_dir.iterdir())
        if p.is_file() and p.name != ".lock"
    }


def _one_line(stderr: str, start: str) -> str:
    message = stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(start), message
    return message


# -- a full disk -------------------------------------------------------------------------------
def _without_room(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``impactbandits ARGS`` in a process that cannot grow any file past FILE_SIZE_LIMIT: to
    SQLite, growing the ``-shm`` file fails as on a full disk."""
    code = (
        "import resource, runpy, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_SIZE_LIMIT}, {FILE_SIZE_LIMIT}))\n"
        "sys.argv = ['impactbandits', *sys.argv[1:]]\n"
        "runpy.run_module('impactbandits', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


def test_the_limit_fails_sqlite_as_a_full_disk_does(small, tmp_path):
    """The mechanism itself: a writable connection (what readers used) cannot start."""
    run_dir = _copy(small[1], tmp_path)
    code = (
        "import resource, sqlite3, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_SIZE_LIMIT}, {FILE_SIZE_LIMIT}))\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "try:\n"
        "    db.execute('PRAGMA journal_mode=WAL')\n"
        "except sqlite3.OperationalError as exc:\n"
        "    print(exc.sqlite_errorname, exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(run_dir / STORE_FILE)], capture_output=True, text=True
    )
    assert out.stdout.strip() == "SQLITE_IOERR_SHMSIZE disk I/O error", out.stdout + out.stderr


def test_export_of_a_healthy_store_needs_no_space(small, tmp_path):
    _, clean, table, _ = small
    run_dir = _copy(clean, tmp_path)
    before = _files(run_dir)
    # before: "error: run_dir: '.../results.sqlite' is not a results store, or is damaged
    # beyond repair (disk I/O error); move it away or choose another directory"
    done = _without_room("export", run_dir, "-o", "/dev/stdout")
    assert done.returncode == 0 and _only_the_phase_line(done.stderr), done.stderr
    assert done.stdout == table.to_csv(index=False) + "/dev/stdout\n"
    assert _files(run_dir) == before  # byte for byte, and no -wal/-shm left behind


@pytest.mark.parametrize("command", ["export", "report", "run"])
def test_writing_on_a_full_disk_is_one_line_and_changes_nothing(small, tmp_path, command):
    spec, clean, _, _ = small
    run_dir = _copy(clean, tmp_path)
    if command == "report":
        # the figures used to be links to /dev/full here; a link in a run directory is now
        # replaced, never written through, so the first figure meets the file-size limit
        (run_dir / "figures").mkdir()
    before = _files(run_dir)
    args = {
        "export": ["export", run_dir, "-o", "/dev/full"],
        "report": ["report", run_dir],
        "run": _run_args(spec, run_dir),
    }[command]
    done = _without_room(*args)
    assert done.returncode == 2, done.stderr
    if command == "report":
        figure = re.escape(str(run_dir / "figures"))
        message = _one_line(done.stderr, "error: output: cannot write ")
        assert re.fullmatch(
            rf"error: output: cannot write '{figure}/b[23]\.png' \(File too large\)", message
        )
        assert sorted((run_dir / "figures").iterdir()) == []  # no partial file left
    else:
        message = _one_line(done.stderr, "error: output: disk full")
        assert message.endswith("free space and run the same command again")
    if command == "run":
        assert f"while opening the store {str(run_dir / STORE_FILE)!r}" in message
    assert _files(run_dir) == before


def test_a_wal_holding_results_is_read_without_space(small, tmp_path):
    """A killed run's WAL holds results and no ``-shm`` is left: SQLite reads the WAL into
    private memory (``readonly_shm``); reading the database file alone would miss them."""
    _, clean, table, _ = small
    run_dir = _copy(clean, tmp_path)
    db_path = run_dir / STORE_FILE
    with closing(sqlite3.connect(db_path)) as db:  # the file holds seeds 0-5 ...
        db.execute("CREATE TABLE held AS SELECT * FROM results WHERE seed >= 6")
        db.execute("DELETE FROM results WHERE seed >= 6")
        db.commit()
    code = (  # ... and a run killed before its checkpoint wrote the rest into the WAL
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA wal_autocheckpoint=0')\n"
        "db.execute('INSERT INTO results SELECT * FROM held')\n"
        "db.execute('DROP TABLE held')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db_path)], check=True)
    wal, shm = db_path.with_name(STORE_FILE + "-wal"), db_path.with_name(STORE_FILE + "-shm")
    assert wal.stat().st_size > 0
    shm.unlink()
    data, log = db_path.read_bytes(), wal.read_bytes()
    done = _without_room("export", run_dir, "-o", "/dev/stdout")
    assert done.returncode == 0 and _only_the_phase_line(done.stderr), done.stderr
    assert done.stdout == table.to_csv(index=False) + "/dev/stdout\n"
    assert db_path.read_bytes() == data and wal.read_bytes() == log


def test_a_store_in_a_read_only_directory_is_read(small, tmp_path):
    """No ``-wal``/``-shm`` can be made at all (``SQLITE_CANTOPEN``): with no WAL to read,
    the database file is read alone (``immutable``). Root is made subject to the directory's
    permissions with ``setpriv`` (without CAP_DAC_OVERRIDE)."""
    _, clean, table, _ = small
    run_dir = _copy(clean, tmp_path)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root ignores directory permissions, and setpriv is not there")
        caps = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]
    before = _files(run_dir)
    run_dir.chmod(0o555)
    try:
        probe = subprocess.run([*prefix, "touch", str(run_dir / "probe")], capture_output=True)
        if probe.returncode == 0:
            pytest.skip("the directory stays writable (permissions are not enforced here)")
        # before: "... is not a results store, or is damaged beyond repair (attempt to write
        # a readonly database); move it away or choose another directory"
        export = ["export", str(run_dir), "-o", "/dev/stdout"]
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "impactbandits", *export],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        run_dir.chmod(0o755)
    assert done.returncode == 0 and _only_the_phase_line(done.stderr), done.stderr
    assert done.stdout == table.to_csv(index=False) + "/dev/stdout\n"
    assert _files(run_dir) == before


def _mount_tmpfs(path: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(path)], capture_output=True
    )
    return done.returncode == 0


@pytest.fixture
def full_disk(tmp_path):
    """A 2 MiB tmpfs (skipped where mounting is not permitted), unmounted afterwards."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk):
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            gc.collect()  # connections kept alive by a failed test's traceback
            if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(disk)], check=True)  # detach it anyway


def _fill(disk: Path) -> None:
    with open(disk / "fill", "wb") as file:
        try:
            while True:
                file.write(b"\0" * 65536)
                file.flush()
        except OSError:
            pass
    stat = os.statvfs(disk)
    assert stat.f_bavail == 0


def test_a_real_full_disk(small, full_disk, tmp_path):
    spec, clean, table, _ = small
    run_dir = full_disk / "run"
    shutil.copytree(clean, run_dir)
    before = _files(run_dir)
    _fill(full_disk)
    runner = CliRunner()
    for args, start in (
        (["export", str(run_dir)], "error: output: disk full"),
        (["report", str(run_dir)], "error: output: disk full"),
        (_run_args(spec, run_dir), "error: output: disk full while opening the store"),
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        _one_line(result.stderr, start)
    elsewhere = tmp_path / "table.csv"  # reading needs no space
    result = runner.invoke(cli, ["export", str(run_dir), "-o", str(elsewhere)])
    assert result.exit_code == 0, result.output
    assert elsewhere.read_text() == table.to_csv(index=False)
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    after = _files(run_dir)
    after.pop("results.csv", None)  # export's own output, cut off by the full disk
    assert after == before


def test_checks_keep_the_writers_locks(small, tmp_path):
    """Checking and scanning a store open for a run never drop its locks: if they did (a
    descriptor of the file opened and closed outside SQLite), another process's connection
    would take it for gone on closing and delete the WAL it is writing."""
    spec = ExperimentSpec.create(**tomllib.loads(SMALL))
    run_dir = _copy(small[1], tmp_path)
    wal = run_dir / (STORE_FILE + "-wal")
    probe = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "db.execute('SELECT count(*) FROM results').fetchone()\n"
        "db.close()\n"
    )
    with Store.create(run_dir, spec, expand(spec)) as store:
        store.check()
        store._damaged()  # the full scan
        subprocess.run([sys.executable, "-c", probe, str(run_dir / STORE_FILE)], check=True)
        assert wal.exists()
        store.append_session({"probe": True})
        with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:  # a new reader sees it
            (sessions,) = db.execute("SELECT value FROM meta WHERE key = 'sessions'").fetchone()
        assert "probe" in sessions


# -- a file cut short ----------------------------------------------------------------------------
def _cut(big, tmp_path: Path, size: int) -> Path:
    run_dir = _copy(big[1], tmp_path)
    with open(run_dir / STORE_FILE, "r+b") as file:
        file.truncate(size)
    return run_dir


CUTS = {  # name: size of what is left, from (file size, page size, root pages)
    "half": lambda size, page, roots: size // 2,
    "three quarters": lambda size, page, roots: size * 3 // 4,
    "a quarter": lambda size, page, roots: size // 4,
    "page-aligned third": lambda size, page, roots: size // 3 // page * page,
    "the results root only": lambda size, page, roots: roots["results"] * page,
    "just after page 1": lambda size, page, roots: page + 100,
}


def _size(big, cut: str) -> int:
    return CUTS[cut]((big[1] / STORE_FILE).stat().st_size, big[5], big[6])


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_export_and_report_say_what_of_a_cut_store_is_lost(big, tmp_path, cut):
    size = _size(big, cut)
    run_dir = _cut(big, tmp_path, size)
    before = _files(run_dir)
    must, maybe = _readable(big, size)
    total = (big[1] / STORE_FILE).stat().st_size
    for args in (["export", str(run_dir), "-o", str(tmp_path / "t.csv")], ["report", str(run_dir)]):
        # before: "... is not a results store, or is damaged beyond repair (database disk
        # image is malformed); move it away or choose another directory"
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        message = _one_line(result.stderr, f"error: run_dir: {str(run_dir / STORE_FILE)!r} ")
        assert f"is damaged (the file is cut short: {size:,} of its {total:,} bytes are left" in (
            message
        )
        assert "run the command that made it (run or reproduce) again" in message
        if " stored results lost" in message:
            lost = int(message.split("; ")[-2].split(" of ")[0].rsplit(" ", 1)[-1])
            assert f"{lost} of {BIG_ROWS} stored results lost" in message
            assert len(must) <= BIG_ROWS - lost <= len(must | maybe), message
        elif must:
            readable = int(message.split("bytes are left; ")[1].split(" stored results")[0])
            assert len(must) <= readable <= len(must | maybe), message
        else:
            assert "no stored result can be read" in message
        if cut == "just after page 1":
            assert "its metadata, run history and cell table are lost" in message
    assert _files(run_dir) == before
    assert not (run_dir / "figures").exists()


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_run_rebuilds_a_cut_store_from_every_readable_row(big, tmp_path, cut):
    spec, _, table, rows = big[:4]
    size = _size(big, cut)
    run_dir = _cut(big, tmp_path, size)
    left = (run_dir / STORE_FILE).read_bytes()
    must, maybe = _readable(big, size)
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warning) == 1 and "was damaged (the file is cut short: " in warning[0], warning
    kept = int(warning[0].split("rebuilt it from the ")[1].split(" intact")[0])
    assert len(must) <= kept <= len(must | maybe), warning[0]
    assert f"{BIG_ROWS - kept} results computed, {kept} reused" in result.stderr
    copies = [p for p in run_dir.glob(f"{STORE_FILE}.damaged-*") if "-wal" not in p.name]
    assert len(copies) == 1 and copies[0].read_bytes() == left  # the damaged file, as it was
    # the rows kept are copied first (rowids 1..kept, in their old order): exactly the rows
    # whose pages are left, byte for byte, with their old timings (so not recomputed)
    by_key = {(cell, seed): rowid for rowid, (cell, seed, _, _) in rows.items()}
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        copied = db.execute(
            "SELECT rowid, cell, seed, payload, seconds FROM results WHERE rowid <= ? "
            "ORDER BY rowid",
            (kept,),
        ).fetchall()
    old = [by_key[(cell, seed)] for _, cell, seed, _, _ in copied]
    assert old == sorted(old) and must <= set(old) <= must | maybe
    for (_, cell, seed, payload, seconds), rowid in zip(copied, old, strict=True):
        assert (cell, seed, bytes(payload), seconds) == rows[rowid]
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    again = CliRunner().invoke(cli, _run_args(spec, run_dir))
    assert again.exit_code == 0 and "warning" not in again.stderr, again.output
    assert f"0 results computed, {BIG_ROWS} reused" in again.stderr


@pytest.mark.parametrize("size", [50, 2000])
def test_a_store_cut_within_its_first_page_is_refused_in_one_line(big, tmp_path, size):
    run_dir = _cut(big, tmp_path, size)
    before = _files(run_dir)
    for args, field in (
        (["export", str(run_dir)], "run_dir"),
        (["report", str(run_dir)], "run_dir"),
        (_run_args(big[0], run_dir), "output"),
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        message = _one_line(result.stderr.splitlines()[-1], f"error: {field}: ")
        assert "is damaged beyond repair: the file is cut short" in message
        assert "before the end of its first page" in message and "move it away" in message
        assert _files(run_dir) == before


def _garble_page(run_dir: Path, page: int, page_size: int) -> None:
    with open(run_dir / STORE_FILE, "r+b") as file:
        file.seek((page - 1) * page_size)
        file.write(b"\xff" * page_size)


def test_a_store_whose_metadata_is_lost_is_rebuilt_for_its_own_cells_only(big, tmp_path):
    spec, clean, table, _, _, page_size, roots = big
    run_dir = _copy(clean, tmp_path / "same")
    _garble_page(run_dir, roots["meta"], page_size)
    result = CliRunner().invoke(cli, ["export", str(run_dir)])
    assert result.exit_code == 2
    message = _one_line(result.stderr, "error: run_dir: ")
    assert "its metadata and run history are lost; its 300 stored results are intact" in message
    result = CliRunner().invoke(cli, _run_args(spec, run_dir))  # the same spec: rebuilt
    assert result.exit_code == 0, result.output
    assert "its metadata and run history are lost" in result.stderr
    assert f"0 results computed, {BIG_ROWS} reused" in result.stderr
    pd.testing.assert_frame_equal(tidy_table(run_dir), table)
    # another experiment's spec (other means: other cells) must not take the store over
    other_spec = tmp_path / "other.toml"
    other_spec.write_text(BIG.replace("means = [0.3, 0.7]", "means = [0.4, 0.7]"))
    other = _copy(clean, tmp_path / "other")
    _garble_page(other, roots["meta"], page_size)
    before = _files(other)
    result = CliRunner().invoke(cli, _run_args(other_spec, other))
    assert result.exit_code == 2, result.output
    message = _one_line(result.stderr.splitlines()[-1], "error: output: ")
    assert "its metadata is lost, and it names 2 cells this spec does not have" in message
    assert "another experiment's store" in message
    assert _files(other) == before
