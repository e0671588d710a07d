"""The package as a user gets it: the wheel built from this source tree, installed with its
dependencies into a new virtual environment, run from an unrelated directory.

The wheel is built from a copy of the files a build reads (pyproject.toml, setup.py, README.md,
LICENSE, CITATION.cff and ``src/``, without caches and compiled kernels), made a git repository
of its own so that the commit the build stamps is known; building in the checkout itself would
write into it and could pick up stale modules from an earlier build in its ``build/``. ``pip
wheel`` builds it with build isolation and the new environment gets the dependencies from the
package index (both need it, as CI has). Nothing here touches the environment running the tests.

One build and install for the module, then each check: 30 to 40 s in all with a warm pip
cache on two busy cores (build and install 12 s, each quick reproduction 12 s). The cheap
checks at the end keep the citation metadata in step with the package's version.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import impactbandits

ROOT = Path(__file__).resolve().parents[1]
#: What a build of the wheel reads besides ``src/``.
BUILD_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "CITATION.cff")
#: Not part of the source (see .gitignore): caches and the kernels built ahead of time.
NOT_SOURCE = shutil.ignore_patterns(
    "__pycache__", "*.egg-info", "*.so", "*.nbi", "*.nbc", "_aot.json"
)
#: Per subprocess: a cold pip cache downloads ~150 MB of dependencies.
STEP_TIMEOUT = 900
FIGURES = ("lindner-fig1", "lindner-fico")

pytestmark = pytest.mark.timeout(1800)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{' '.join(command)} failed ({proc.returncode}):\n"
        f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


def _git(repo: Path, *args: str) -> str:
    return _run(
        [
            "git",
            "-c", "user.email=test@example.invalid",
            "-c", "user.name=test",
            "-c", "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
    ).strip()  # fmt: skip


def _user_env(venv: Path) -> dict[str, str]:
    """The environment of a user of the new venv: its ``bin`` first, nothing pointing at this
    source tree or the test environment. Python writes the bytecode of what it imports (the
    install skipped compiling every module of every dependency, most of which no run imports)."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["MPLBACKEND"] = "Agg"
    return env


class Installed:
    def __init__(self, wheel: Path, commit: str, venv: Path, elsewhere: Path) -> None:
        self.wheel, self.commit, self.venv, self.elsewhere = wheel, commit, venv, elsewhere

    def run(self, *args: str) -> str:
        return _run(list(args), cwd=self.elsewhere, env=_user_env(self.venv))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel-install")
    source = base / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=NOT_SOURCE)
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, source / name)
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "-m", "the tree under test")
    commit = _git(source, "rev-parse", "HEAD")

    dist = base / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(source)], base)
    (wheel,) = dist.glob("impactbandits-*.whl")

    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    python = venv / "bin" / "python"
    install = ["install", "--quiet", "--only-binary=:all:", "--no-compile", str(wheel)]
    _run([*pip, "--python", str(python), *install], base)

    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return Installed(wheel, commit, venv, elsewhere)


def test_the_wheel_ships_licence_citation_and_commit(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        dist_info = f"impactbandits-{impactbandits.__version__}.dist-info"
        assert f"{dist_info}/licenses/LICENSE" in names
        assert "impactbandits/CITATION.cff" in names
        assert wheel.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert wheel.read("impactbandits/CITATION.cff") == (ROOT / "CITATION.cff").read_bytes()
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
        stamp = wheel.read("impactbandits/experiments/_build_info.py").decode()
    assert f"Version: {impactbandits.__version__}\n" in metadata
    assert "License-Expression: MIT\n" in metadata
    assert "Author: The impactbandits developers\n" in metadata
    assert f"COMMIT = {installed.commit!r}" in stamp


def test_the_installed_copy_reports_its_version_and_commit(installed: Installed) -> None:
    where = installed.run(
        "python",
        "-c",
        "import impactbandits; from impactbandits.experiments.provenance import library_commit;"
        " print(impactbandits.__file__); print(library_commit())",
    ).splitlines()
    assert Path(where[0]).is_relative_to(installed.venv), where  # not this source tree
    assert where[1] == installed.commit
    version = installed.run("impactbandits", "--version")
    assert impactbandits.__version__ in version


@pytest.mark.parametrize("figure", FIGURES)
def test_reproduce_runs_from_the_installed_wheel(installed: Installed, figure: str) -> None:
    out = installed.elsewhere / figure
    installed.run("impactbandits", "reproduce", figure, "--quick", "--out", str(out))
    report = out / "report.html"
    assert report.is_file()
    assert installed.commit in report.read_text(encoding="utf-8")  # the build's stamp


# -- the citation metadata follows the version ----------------------------------------------------


def _bibtex_version(text: str) -> str | None:
    match = re.search(r"note\s*=\s*\{Python library, version ([^}]+)\}", text)
    return match.group(1) if match else None


def test_the_citation_metadata_matches_the_package() -> None:
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M)
    assert re.search(rf"^version: {re.escape(impactbandits.__version__)}$", cff, re.M)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert re.search(rf"^license: {re.escape(project['license'])}$", cff, re.M)
    assert "version" in project.get("dynamic", []), "the version is written in __init__.py only"
    for page in (ROOT / "README.md", ROOT / "docs" / "citing.md"):
        assert _bibtex_version(page.read_text(encoding="utf-8")) == impactbandits.__version__, page


def test_the_stamp_is_read_where_the_build_put_it(tmp_path: Path, monkeypatch) -> None:
    from impactbandits.experiments.provenance import build_commit

    (tmp_path / "stamp_under_test.py").write_text("COMMIT = 'abc123+dirty'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert build_commit("stamp_under_test") == "abc123+dirty"
    assert build_commit("no_such_stamp_module") is None
    assert build_commit() is None  # this source tree is never stamped
