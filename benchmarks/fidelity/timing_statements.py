"""The timing statements of the README, ``--help``, the Makefile and the docs, from one table.

``docs/fidelity/timings.toml`` is the table: one entry per registered figure
(``time_figures.py`` measures them at full paper scale) and ``_kernels``, the ahead-of-time
build of the compiled loops (``--kernels`` measures it: a forced build in a child process, CPU =
user + system of the child tree). :func:`statements` renders the sentences every text uses;
``--write`` puts them into the texts (each sentence replaces its earlier wording, found by its
shape) and ``tests/test_timing_statements.py`` fails while a text disagrees with the table.

    .venv/bin/python benchmarks/fidelity/timing_statements.py --kernels   # measure the build
    .venv/bin/python benchmarks/fidelity/timing_statements.py --write     # update the texts
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import resource
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIMINGS = ROOT / "docs" / "fidelity" / "timings.toml"

#: Where each statement appears (files relative to the repository).
PLACES: dict[str, tuple[str, ...]] = {
    "figures": (
        "README.md",
        "Makefile",
        "src/impactbandits/cli/__init__.py",
        "docs/getting-started.md",
    ),
    "kernels": (
        "README.md",
        "Makefile",
        "src/impactbandits/kernels/build.py",
        "docs/install.md",
    ),
    "lindner-fig1": ("README.md",),
}

#: The shape of each statement, numbers left open: how ``--write`` finds the earlier wording.
SHAPES: dict[str, str] = {
    "figures": r"[\d,]+ CPU s for all \d+ registered figures at full paper scale "
    r"\(\S+ to \S+ CPU s each\)",
    "kernels": r"about [\d,]+ CPU s to build the compiled loops",
    "lindner-fig1": r"full paper scale, [\d,.]+ CPU s",
}

#: Wordings that were there before the table and must not come back.
STALE = (
    r"about a minute",
    r"~\s?25 s",
    r"~\s?20 s",
    r"about (?:5|five) minutes on 2 cores",
    r"about 19 min",
    r"2\.5 min",
    r"full paper scale, ~15 s",
    r"under a minute",
)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def statements(timings: dict[str, dict[str, object]]) -> dict[str, str]:
    """The sentences, from the table."""
    figures = {k: v for k, v in timings.items() if not k.startswith("_")}
    cpu = [float(v["cpu_s"]) for v in figures.values()]  # type: ignore[arg-type]
    out = {
        "figures": f"{_number(sum(cpu))} CPU s for all {len(cpu)} registered figures at full "
        f"paper scale ({_number(min(cpu))} to {_number(max(cpu))} CPU s each)",
        "lindner-fig1": "full paper scale, "
        f"{_number(float(figures['lindner-fig1']['cpu_s']))} CPU s",  # type: ignore[arg-type]
    }
    if "_kernels" in timings:
        kernels = float(timings["_kernels"]["cpu_s"])  # type: ignore[arg-type]
        out["kernels"] = f"about {_number(kernels)} CPU s to build the compiled loops"
    return out


def load() -> dict[str, dict[str, object]]:
    return tomllib.loads(TIMINGS.read_text(encoding="utf-8"))


def _flatten(text: str) -> str:
    """``text`` with line breaks, Makefile ``##`` and docstring indentation joined into single
    spaces: a sentence may be wrapped anywhere."""
    return re.sub(r"\s*\n\s*(?:##\s*)?", " ", text)


def check(root: Path = ROOT) -> list[str]:
    """Disagreements between the texts and the table, one line each (none: all agree)."""
    wanted = statements(load())
    problems = []
    for key, files in PLACES.items():
        if key not in wanted:
            problems.append(f"{key}: not measured (run timing_statements.py --kernels)")
            continue
        for name in files:
            text = _flatten((root / name).read_text(encoding="utf-8"))
            if wanted[key] not in text:
                problems.append(f"{name}: does not say {wanted[key]!r}")
    for name in sorted({f for files in PLACES.values() for f in files}):
        text = _flatten((root / name).read_text(encoding="utf-8"))
        for stale in STALE:
            if re.search(stale, text):
                problems.append(f"{name}: stale timing {stale!r}")
    return problems


def write(root: Path = ROOT) -> None:
    """Replace each statement's earlier wording (found by :data:`SHAPES`, across line breaks)
    by the table's; a text where a statement's shape is missing is reported, not guessed."""
    wanted = statements(load())
    for key, files in PLACES.items():
        if key not in wanted:
            continue
        # the shape with every space allowed to be a line break (and a Makefile's "## ")
        shape = SHAPES[key].replace(" ", r"(?:\s*\n\s*(?:##\s*)?|\s)")
        for name in files:
            path = root / name
            text = path.read_text(encoding="utf-8")
            new, count = re.subn(shape, wanted[key], text)
            if count == 0:
                print(f"{name}: no statement of {key!r} to update; add: {wanted[key]}")
            path.write_text(new, encoding="utf-8")


def time_kernels() -> dict[str, object]:
    """A forced ahead-of-time build of the compiled loops: wall and CPU seconds of the child
    process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "impactbandits.kernels.build", "--force"], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "date": dt.date.today().isoformat()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", action="store_true", help="measure the kernel build")
    parser.add_argument("--write", action="store_true", help="update the texts")
    args = parser.parse_args()
    if args.kernels:
        sys.path.insert(0, str(HERE))
        from time_figures import write as write_timings

        result = time_kernels()
        write_timings({"_kernels": result})
        print(f"kernel build: wall {result['wall_s']} s, CPU {result['cpu_s']} s")
    if args.write:
        write()
    problems = check()
    print("\n".join(problems) if problems else "every timing statement agrees with the table")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
