"""Build hooks; the project's metadata is in pyproject.toml.

Two steps setuptools does not do by itself:

* **The commit.** A wheel gets ``impactbandits/experiments/_build_info.py`` holding the git
  commit of the checkout it was built from (``+dirty`` when tracked files have uncommitted
  changes), so an installed copy says which commit it is without asking git at run time
  (``impactbandits.experiments.provenance.library_commit``). An sdist built from a checkout
  carries the same file, so a wheel built later from the sdist (no git there) keeps the commit;
  a build with neither git nor that file has no stamp. Editable installs get no stamp: they run
  from the checkout and ask its git at run time, as before.
* **CITATION.cff.** Kept at the top of the source tree (where citation tools look for it),
  copied into the package of a wheel (``impactbandits/CITATION.cff``) and into the sdist.

``LICENSE`` needs no hook: ``license-files`` in pyproject.toml puts it in both.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
PACKAGE = "impactbandits"
STAMP = Path(PACKAGE, "experiments", "_build_info.py")
CITATION = "CITATION.cff"


def checkout_commit(root: Path = ROOT) -> str | None:
    """The commit of ``root`` when it is the top of a git work tree (not a directory inside
    somebody else's repository, e.g. an unpacked sdist), ``+dirty`` with uncommitted changes
    to tracked files; ``None`` without git."""
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            return None
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    if not commit:
        return None
    return f"{commit}+dirty" if dirty else commit


def write_stamp(path: Path, commit: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '"""Written by the build (setup.py): the commit this copy was built from."""\n\n'
        f"COMMIT = {commit!r}\n",
        encoding="utf-8",
    )


class StampedBuildPy(build_py):
    """``build_py``, then the commit stamp and ``CITATION.cff`` (not for editable installs)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        built = Path(self.build_lib)
        commit = checkout_commit()
        if commit is not None:
            write_stamp(built / STAMP, commit)
        elif not (ROOT / "src" / STAMP).is_file():
            # neither git nor an sdist's stamp: drop one a former in-tree build left behind
            (built / STAMP).unlink(missing_ok=True)
        # else: the sdist's stamp is a module of the package, copied by build_py as it is
        if (ROOT / CITATION).is_file():
            self.copy_file(str(ROOT / CITATION), str(built / PACKAGE / CITATION))


class StampedSdist(sdist):
    """``sdist`` whose tree also holds the commit stamp and ``CITATION.cff``."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        commit = checkout_commit()
        if commit is not None:
            write_stamp(Path(base_dir, "src", STAMP), commit)
        if (ROOT / CITATION).is_file():
            self.copy_file(str(ROOT / CITATION), str(Path(base_dir, CITATION)))


setup(cmdclass={"build_py": StampedBuildPy, "sdist": StampedSdist})
