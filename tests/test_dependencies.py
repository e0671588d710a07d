"""numba is a dependency of the package (a plain ``pip install`` brings the compiled loops); the
``fast`` extra stays, empty, so that ``pip install 'impactbandits[fast]'`` as earlier versions
said keeps working; the Makefile installs the package itself, and only ``make test`` (and what
needs it) builds the loops ahead of time: ``make demo`` lets numba's JIT compile on first use."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_numba_is_a_dependency_and_fast_an_empty_alias():
    project = _project()
    names = [re.split(r"[<>=!~ \[]", d)[0] for d in project["dependencies"]]
    assert "numba" in names
    extras = project["optional-dependencies"]
    assert extras["fast"] == []
    assert not any("fast" in d or "numba" in d for deps in extras.values() for d in deps)


def _dry_run(target: str) -> str:
    """The commands ``make -n TARGET`` would run in a fresh clone (nothing installed)."""
    return subprocess.run(
        ["make", "-n", "--always-make", target, "VENV=/nonexistent-venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_make_demo_installs_the_package_and_builds_no_kernels():
    commands = _dry_run("demo")
    assert "pip install" in commands and "[fast]" not in commands
    assert "impactbandits.kernels.build" not in commands
    assert "reproduce lindner-fig1 --quick" in commands
    assert "still installing" in commands and "still reproducing" in commands  # heartbeats


def test_make_test_and_make_kernels_build_the_kernels_ahead_of_time():
    for target in ("test", "kernels"):
        assert "-m impactbandits.kernels.build" in _dry_run(target), target
