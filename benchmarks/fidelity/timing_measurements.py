"""The measurements behind the timing statements (``timing_statements.py``): commands a reader
would type, timed from outside into ``docs/fidelity/timings.toml`` as ``_NAME`` entries.

Each command runs with ``bash -c`` from a fresh folder holding ``.venv`` (a link to this
interpreter's environment) and the files the README and the fast-policy how-to name (their
``# NAME.toml`` / ``# NAME.py`` blocks), or from the repository's root; wall seconds, CPU
seconds of the whole process tree (exact: ``benchmarks/tree_measure.py``), peak RSS and the
1-minute load average at the start go into its entry with the command and the date.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class Measurement:
    """A command timed from outside; its entry in the table is ``_NAME``."""

    command: str
    """As a reader types it (``bash -c``), from :attr:`where`."""
    what: str
    where: str = "scratch"
    """``"scratch"``: a fresh folder holding ``.venv`` (a link to this interpreter's
    environment) and the files the README and the fast-policy how-to name (``# NAME.toml``
    blocks); ``"repository"``: the repository's root; ``"clone"``: a fresh ``git clone`` of the
    repository (its committed state) in the scratch folder, with no ``.venv`` of its own yet."""
    warm_up: bool = False
    """Run the command once, unmeasured, first (numba's JIT cache, the page cache)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables; ``{scratch}`` is replaced by the folder."""
    outputs: Mapping[str, str] = field(default_factory=dict)
    """Numbers the command prints itself: key → pattern with one group, read from stdout."""


#: Pages whose ``# NAME.ext`` blocks are written into the scratch folder.
FILE_PAGES = ("README.md", "docs/how-to/fast-policy.md")

MEASUREMENTS: dict[str, Measurement] = {
    "kernels": Measurement(
        ".venv/bin/python -m impactbandits.kernels.build --force",
        "the ahead-of-time build of every compiled loop",
        where="repository",
    ),
    "make-demo": Measurement(
        "make demo",
        "the first command on a fresh clone: .venv, pip's install (downloads included), "
        "lindner-fig1 --quick with numba's JIT compiling the loops it needs",
        where="clone",
    ),
    "lindner-fig1-quick": Measurement(
        ".venv/bin/impactbandits reproduce lindner-fig1 --quick --out runs/fig1-quick",
        "the README's first quick reproduction",
    ),
    "lindner-fig1-numpy": Measurement(
        "IMPACTBANDITS_KERNELS=0 .venv/bin/impactbandits reproduce lindner-fig1 --out runs/fig1",
        "full-scale lindner-fig1 without the compiled loops",
    ),
    "lindner-fig1-dask": Measurement(
        ".venv/bin/impactbandits reproduce lindner-fig1 --backend dask --out runs/fig1",
        "full-scale lindner-fig1 on a local Dask cluster",
    ),
    "readme-two-arms": Measurement(
        ".venv/bin/impactbandits run my-experiment.toml --out runs/two-arms",
        "the README's own experiment",
    ),
    "readme-my-policy": Measurement(
        "PYTHONPATH=. .venv/bin/impactbandits run my-policy.toml --out runs/my-policy",
        "the README's own policy",
    ),
    "readme-benchmark-quick": Measurement(
        "PYTHONPATH=. .venv/bin/impactbandits benchmark --policy mypolicies:UCBTuned"
        " --param c=0.5 --quick",
        "the README's own policy in the quick benchmark",
    ),
    "startup-aot": Measurement(
        "IMPACTBANDITS_KERNELS=aot .venv/bin/impactbandits run my-experiment.toml --seeds 2"
        " --backend serial --no-report --out runs/startup",
        "a small serial run whose loops come from the module built ahead of time",
        warm_up=True,
    ),
    "startup-jit": Measurement(
        "IMPACTBANDITS_KERNELS=jit .venv/bin/impactbandits run my-experiment.toml --seeds 2"
        " --backend serial --no-report --out runs/startup",
        "the same run on numba's JIT, its loops already in numba's disk cache",
        warm_up=True,
        env={"NUMBA_CACHE_DIR": "{scratch}/numba-cache"},
    ),
    "startup-jit-cold": Measurement(
        "IMPACTBANDITS_KERNELS=jit .venv/bin/impactbandits run my-experiment.toml --seeds 2"
        " --backend serial --no-report --out runs/startup",
        "the same run on numba's JIT with an empty disk cache (every loop compiled)",
        env={"NUMBA_CACHE_DIR": "{scratch}/numba-cache"},
    ),
    "fast-policy": Measurement(
        ".venv/bin/python fast_policy.py",
        "the fast-policy how-to's example, its compiled step compiled first",
        env={"NUMBA_CACHE_DIR": "{scratch}/numba-cache"},
        outputs={
            "compiled_cpu_s": r"compiled: .*?([\d.]+) CPU s",
            "readable_cpu_s": r"readable: .*?([\d.]+) CPU s",
        },
    ),
    "glr-klucb": Measurement(
        ".venv/bin/impactbandits run glr-klucb-cost.toml --no-report --out runs/glr",
        "GLR-klUCB on one 3-arm Bernoulli bandit, T = 10,000, 30 seeds (no compiled step)",
    ),
    "validate-actions": Measurement(
        ".venv/bin/python benchmarks/bench_validate_actions.py --repeat 7",
        "validating a user policy's actions every round against round 1 only (its own CPU "
        "seconds, medians of 7, one replication and two arms)",
        where="repository",
        outputs={
            "horizon": r"T = (\d+)",
            "ucb1_first_s": r"ucb1 +1 +2 +([\d.]+)",
            "ucb1_every_s": r"ucb1 +1 +2 +[\d.]+ +([\d.]+)",
            "greedy_first_s": r"greedy +1 +2 +([\d.]+)",
            "greedy_every_s": r"greedy +1 +2 +[\d.]+ +([\d.]+)",
        },
    ),
    "test-slow": Measurement(
        ".venv/bin/python -m pytest -q -p no:cacheprovider -m slow",
        "the tests marked slow",
        where="repository",
    ),
}

#: Specs only a measurement needs (written into the scratch folder).
SPECS = {
    "glr-klucb-cost.toml": """\
name = "glr-klucb-cost"
seeds = 30
horizons = [10000]

[[environments]]
kind = "bernoulli"
means = [0.3, 0.5, 0.7]

[[policies]]
kind = "glr-klucb"
""",
}

FILE_BLOCK = re.compile(r"^```(?:toml|python)\n# ([\w.-]+\.(?:toml|py))\n(.*?)^```", re.S | re.M)


def _scratch(root: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="impactbandits-timing-"))
    (folder / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    for page in FILE_PAGES:
        for name, body in FILE_BLOCK.findall((root / page).read_text(encoding="utf-8")):
            (folder / name).write_text(f"# {name}\n{body}", encoding="utf-8")
    for name, body in SPECS.items():
        (folder / name).write_text(body, encoding="utf-8")
    return folder


def measure(name: str, root: Path = ROOT) -> dict[str, object]:
    """Run the measurement ``name`` and return its table entry."""
    sys.path.insert(0, str(HERE.parent))
    from tree_measure import run_tree

    spec = MEASUREMENTS[name]
    scratch = _scratch(root)
    try:
        where = {"scratch": scratch, "repository": root, "clone": scratch / "clone"}[spec.where]
        if spec.where == "clone":
            subprocess.run(["git", "clone", "-q", str(root), str(where)], check=True)
        env = {k: v.replace("{scratch}", str(scratch)) for k, v in spec.env.items()}
        prefix = "".join(f"{k}={v} " for k, v in env.items())
        command = ["bash", "-c", prefix + spec.command]
        for _ in range(2 if spec.warm_up else 1):
            if spec.where == "scratch":
                shutil.rmtree(where / "runs", ignore_errors=True)  # computed anew each time
            measured = run_tree(command, cwd=where)
            if measured.code != 0:
                tail = " | ".join(measured.stderr.strip().splitlines()[-3:])
                raise SystemExit(f"error: {name}: exit {measured.code}: {tail}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    entry: dict[str, object] = {
        "command": spec.command,
        "where": spec.where,
        "wall_s": round(measured.wall, 1),
        "cpu_s": round(measured.cpu, 2 if measured.cpu < 10 else 1),
        "peak_rss_mb": round(measured.rss_tree_mb),
        "load": round(measured.load[0], 1),
        "date": dt.date.today().isoformat(),
    }
    if env:
        entry["env"] = " ".join(
            f"{k}={v.replace(str(scratch), '<scratch>')}" for k, v in env.items()
        )
    for key, pattern in spec.outputs.items():
        found = re.search(pattern, measured.stdout)
        if found is None:
            raise SystemExit(f"error: {name}: no {key} in its output: {measured.stdout[-300:]}")
        entry[key] = float(found.group(1))
    return entry
