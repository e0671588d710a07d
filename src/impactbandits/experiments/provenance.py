"""What produced a run: library and dependency versions, the library's git commit, and one
record per ``run`` session (start, end, wall and CPU seconds, backend, workers).

The commit (:func:`library_commit`) is the library checkout's own when the library runs from its
git checkout (an editable install: :func:`git_commit` asks git), else the one the build stamped
into an installed copy (:func:`build_commit`: setup.py writes ``_build_info.py`` into the wheel,
and into an sdist for the wheels built from it), else unknown.

The runner appends a :class:`Session` to the store's ``meta`` table (key ``"sessions"``, a JSON
list) after every call that touched the store, finished or interrupted; the report shows them.
CPU seconds are the main process's plus what the workers (process backend or Dask cluster)
report for the tasks they ran; their start-up and idle time is not included.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import importlib.metadata
import json
import os
import platform
import resource
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEPENDENCIES",
    "Session",
    "SessionClock",
    "build_commit",
    "git_commit",
    "library_commit",
    "versions",
]

#: The module the build writes into an installed copy (absent from a source checkout).
BUILD_INFO = "impactbandits.experiments._build_info"

#: Packages whose versions are recorded (those installed).
DEPENDENCIES = (
    "impactbandits",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "pydantic",
    "numba",
    "dask",
    "distributed",
)


def versions() -> dict[str, str]:
    """Python and the installed :data:`DEPENDENCIES`: name → version."""
    out = {"python": platform.python_version()}
    for name in DEPENDENCIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _checkout_root(source: Path) -> Path | None:
    """The library's own source checkout holding the package directory ``source``: its
    parent is ``src/`` of a project whose ``pyproject.toml`` names ``impactbandits`` and that
    has a ``.git``; ``None`` for an installed copy (``site-packages/impactbandits``), even one
    inside somebody else's git work tree (``myproj/.venv/...``)."""
    root = source.parent.parent
    if source.parent.name != "src" or not (root / ".git").exists():
        return None
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return root if project.get("project", {}).get("name") == "impactbandits" else None


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=True
    ).stdout.strip()


def git_commit(source: Path | None = None) -> str | None:
    """The commit of the library's source checkout (``+dirty`` with uncommitted changes), or
    ``None`` for an installed copy or without git. ``source``: the package directory (default:
    this package's)."""
    source = (source or Path(__file__).parent.parent).resolve()
    root = _checkout_root(source)
    if root is None:
        return None
    try:
        if Path(_git(root, "rev-parse", "--show-toplevel")).resolve() != root.resolve():
            return None  # the .git found belongs to another work tree
        commit = _git(root, "rev-parse", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit or None


def build_commit(module: str = BUILD_INFO) -> str | None:
    """The commit the build stamped into this installed copy (``+dirty`` if it was built from
    uncommitted changes), or ``None``: a source checkout or editable install (never stamped),
    or a copy built without git from a tree that had no stamp."""
    try:
        info = importlib.import_module(module)
    except ImportError:
        return None
    commit = getattr(info, "COMMIT", None)
    return commit if isinstance(commit, str) and commit else None


def library_commit() -> str | None:
    """The library's commit: its checkout's, read from git, when it runs from its own source
    checkout (:func:`git_commit`; editable installs, so edits since the install count), else
    the build's stamp (:func:`build_commit`), else ``None``. For an installed copy git is never
    run: :func:`git_commit` recognises one from its path alone."""
    return git_commit() or build_commit()


def _cpu_model() -> str:
    """The processor's model name (Linux: ``/proc/cpuinfo``), else what :mod:`platform`
    knows, else ``"unknown"``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict[str, str]:
    """The machine a session ran on: CPU model, logical cores (all, and those this process may
    use), operating system and architecture."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count() or '?'} logical, {usable or '?'} usable",
        "os": platform.platform(terse=True),
        "arch": platform.machine(),
    }


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Session:
    """One call of the runner on a run directory."""

    started: str
    """Start, ISO 8601 UTC."""
    finished: str
    wall_seconds: float
    cpu_seconds: float
    """Main process plus the workers' task CPU (not their start-up), from the runner's start
    to its end: without the interpreter's start-up before it and the report after it."""
    backend: str
    workers: int
    computed: int
    """Results stored by this session."""
    outcome: str
    """``"finished"``, ``"interrupted"`` or ``"failed"``."""
    host: str = field(default_factory=platform.node)
    versions: dict[str, str] = field(default_factory=versions)
    commit: str | None = field(default_factory=library_commit)
    machine: dict[str, str] = field(default_factory=machine)
    """:func:`machine` (empty in stores written before it was recorded)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        names = {f.name for f in dataclasses.fields(cls)}
        # a store written before the machine was recorded: say so, never this machine's
        fields = {"machine": {}} | {k: v for k, v in data.items() if k in names}
        return cls(**fields)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class SessionClock:
    """Measures one session: create it when the session starts, :meth:`stop` at the end."""

    def __init__(self, backend: str, workers: int) -> None:
        self.backend, self.workers = backend, workers
        self._started = _now()
        self._wall = time.perf_counter()
        self._cpu = _cpu_seconds()
        self._workers = 0.0

    def add_task_cpu(self, seconds: float, in_main: bool) -> None:
        """Count the CPU seconds workers report for their tasks (not those run in this
        process, which its own clock counts)."""
        if not in_main:
            self._workers += seconds

    def stop(self, computed: int, outcome: str) -> Session:
        return Session(
            started=self._started,
            finished=_now(),
            wall_seconds=round(time.perf_counter() - self._wall, 3),
            cpu_seconds=round(_cpu_seconds() - self._cpu + self._workers, 3),
            backend=self.backend,
            workers=self.workers,
            computed=computed,
            outcome=outcome,
        )


def sessions_from_meta(raw: str | None) -> list[Session]:
    """The sessions stored under the ``meta`` key ``"sessions"`` (none for older stores)."""
    if not raw:
        return []
    return [Session.from_json(item) for item in json.loads(raw)]
