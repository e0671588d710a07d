"""Every code block of README.md runs as written, in order, as a new user would run them.

The blocks run in a fresh directory whose ``.venv`` is a symlink to the interpreter's virtual
environment (so ``.venv/bin/impactbandits`` is the command the README names):

* ``sh`` blocks: each command line runs with ``bash`` and must exit 0. The ``make demo`` /
  ``make test`` block is the one exception: CI runs ``make test`` itself, and ``make demo``
  is ``reproduce lindner-fig1 --quick`` (the next block runs that command). A command that
  enters the benchmark at its full scale (minutes of CPU: ``impactbandits benchmark`` without
  ``--quick``) runs in :func:`test_readme_long_commands_run_as_written`, marked ``slow``; its
  ``--quick`` twin runs here;
* ``toml`` and ``python`` blocks whose first line is ``# NAME.toml`` / ``# NAME.py`` are
  written to that file (a spec, a module);
* other ``python`` blocks are saved as a script and run with ``python script.py`` (with the
  directory on ``PYTHONPATH``, as a user running it from there would have), and must exit 0;
* ``text`` blocks are output or diagrams and are not run.

A block of any other language fails the test: every block must say what it is.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
FILE_HEADER = re.compile(r"#\s*([\w.-]+\.(?:toml|py))\s*$")
#: Per command; the slowest of the fast test (full-scale lindner-fig1) takes about 20 CPU s.
TIMEOUT = 600
#: Per command of the slow test (the benchmark at full scale, a pure-Python policy).
LONG_TIMEOUT = 3600


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(README.read_text(encoding="utf-8"))]


def _venv() -> Path:
    """The virtual environment running the tests (``make test`` uses the project's .venv)."""
    return Path(sys.prefix)


def is_long(line: str) -> bool:
    """A command of the README that takes minutes of CPU: the benchmark at its full scale."""
    return "impactbandits benchmark" in line and "--quick" not in line


def _run(
    command: list[str], cwd: Path, what: str, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


def test_every_block_declares_its_language():
    langs = {lang for lang, _ in blocks()}
    assert langs <= {"sh", "toml", "python", "text"}, langs


def test_readme_runs_as_written(tmp_path):
    (tmp_path / ".venv").symlink_to(_venv(), target_is_directory=True)
    scripts = 0
    for index, (lang, body) in enumerate(blocks()):
        first = body.splitlines()[0] if body.strip() else ""
        header = FILE_HEADER.fullmatch(first.strip())
        if lang in ("toml", "python") and header:
            (tmp_path / header.group(1)).write_text(body, encoding="utf-8")
        elif lang == "python":
            scripts += 1
            script = tmp_path / f"readme_snippet_{index}.py"
            script.write_text(body, encoding="utf-8")
            _run([str(tmp_path / ".venv/bin/python"), script.name], tmp_path, f"block {index}")
        elif lang == "sh":
            for line in body.splitlines():
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if line.startswith("make ") or is_long(line):
                    continue  # see the module docstring
                _run(["bash", "-c", line], tmp_path, f"block {index}: {line}")
    assert scripts >= 3
    # what the blocks promise exists
    assert (tmp_path / "runs/two-arms/report.html").is_file()
    assert (tmp_path / "runs/two-arms/results.parquet").is_file()
    assert (tmp_path / "runs/my-policy/results.sqlite").is_file()
    assert (tmp_path / "regret.png").stat().st_size > 0
    assert list(tmp_path.glob("runs/benchmark-quick-entry-*/entry.md"))  # your policy's ranks
    _check_column_list(tmp_path / "runs/two-arms/results.parquet")


def test_some_commands_are_long_and_have_a_quick_twin():
    """The slow test has something to run, and the fast one runs the same thing quickly."""
    lines = [line for lang, body in blocks() if lang == "sh" for line in body.splitlines()]
    long = [line for line in lines if is_long(line)]
    assert long
    for line in long:
        command = line.split("#")[0].strip()
        assert any(other.startswith(f"{command} --quick") for other in lines), line


@pytest.mark.slow
def test_readme_long_commands_run_as_written(tmp_path):
    (tmp_path / ".venv").symlink_to(_venv(), target_is_directory=True)
    for lang, body in blocks():
        header = FILE_HEADER.fullmatch((body.splitlines() or [""])[0].strip())
        if lang in ("toml", "python") and header:
            (tmp_path / header.group(1)).write_text(body, encoding="utf-8")
    for lang, body in blocks():
        for line in body.splitlines() if lang == "sh" else ():
            if is_long(line):
                _run(["bash", "-c", line], tmp_path, line, timeout=LONG_TIMEOUT)
    entries = list(tmp_path.glob("runs/benchmark-entry-*/entry.md"))
    assert entries and "UCBTuned" in entries[0].read_text(encoding="utf-8")


def _check_column_list(parquet: Path) -> None:
    """The README's column list is the exported table's, in order."""
    import pandas as pd

    text = " ".join(README.read_text(encoding="utf-8").split())
    start = text.index("The columns, in this order: `")
    listed = text[start:].split("`")[1]
    base = [name.strip() for name in listed.split(",")]
    columns = list(pd.read_parquet(parquet).columns)
    assert columns[: len(base)] == base
    described = re.compile(r"pulls_\d+|phase_switches|phase_\w+|realised_regret|competitive_ratio")
    rest = columns[len(base) :]
    assert all(described.fullmatch(c) for c in rest), rest
    # my-experiment.toml: at most 10 arms, no phases, no extra metrics, an oracle everywhere
    pulls = [f"pulls_{arm}" for arm in range(10)]
    assert rest == ["phase_switches", *pulls, "realised_regret", "competitive_ratio"]


@pytest.mark.parametrize("name", ["my-experiment.toml", "my-policy.toml"])
def test_spec_blocks_are_complete_specs(name, tmp_path):
    """The TOML blocks parse as complete specs on their own (a fragment would not)."""
    from impactbandits.experiments.spec import load_spec

    body = next(b for lang, b in blocks() if lang == "toml" and b.startswith(f"# {name}"))
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        policy = next(b for lang, b in blocks() if lang == "python" and b.startswith("# mypol"))
        (tmp_path / "mypolicies.py").write_text(policy, encoding="utf-8")
        assert load_spec(path).seeds > 0
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mypolicies", None)
