"""Every registered figure's ``--quick`` export, byte for byte, before and after a change.

    python benchmarks/byte_identity.py --baseline DIR [--figures a,b,...] [--work DIR]

``DIR`` is a checkout of the code to compare with (its ``src`` is put first on ``PYTHONPATH``;
``git worktree add DIR <commit>`` makes one). For every registered figure and every variant it
offers (``paper``, ``authors-code``, ``authors-ucb1``; a variant the figure refuses is skipped),
both codes run ``reproduce NAME --quick --variant V --no-report`` into fresh run directories with
the same interpreter, and this checkout's ``export --trajectories`` writes each result table (the
reader is the same for both, so a difference is one of the stored numbers). Prints a line per
run: rows, whether the CSVs are identical (or the first differing line), and the CPU seconds of
each side's process tree; exits 1 if any differs. Both sides use whatever compiled loops their
code finds (``IMPACTBANDITS_KERNELS`` is passed through).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
VARIANTS = ("paper", "authors-code", "authors-ucb1")


def _cli(source: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(source / "src"))
    command = [sys.executable, "-m", "impactbandits", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reproduce(source: Path, name: str, variant: str, out: Path) -> tuple[int, float, str]:
    """Exit status, CPU seconds of the run's process tree (its waited children) and stderr."""
    before = _children_cpu()
    done = _cli(source, "reproduce", name, "--quick", "--variant", variant, "--out", str(out),
                "--no-report", "--backend", "serial")  # fmt: skip
    return done.returncode, _children_cpu() - before, done.stderr.strip()


def _first_difference(a: Path, b: Path) -> str:
    with a.open() as left, b.open() as right:
        for number, (x, y) in enumerate(zip(left, right, strict=False), 1):
            if x != y:
                return f"line {number}: {x.strip()[:120]!r} != {y.strip()[:120]!r}"
    return "different lengths"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="checkout to compare with")
    parser.add_argument("--figures", help="comma-separated names (default: every figure)")
    parser.add_argument("--work", type=Path, help="where the run directories go (default: temp)")
    args = parser.parse_args(argv)
    listing = json.loads(_cli(HERE, "list", "figures", "--json").stdout)
    names = [figure["name"] for figure in listing["figures"]]
    if args.figures:
        names = [name for name in args.figures.split(",") if name]
    work = args.work or Path(tempfile.mkdtemp(prefix="impactbandits-identity-"))
    differ = 0
    started = time.time()
    print(f"baseline {args.baseline}  current {HERE}  runs in {work}")
    for name in names:
        for variant in VARIANTS:
            sides = {}
            for side, source in (("baseline", args.baseline.resolve()), ("current", HERE)):
                out = work / f"{name}-{variant}-{side}"
                status, cpu, stderr = _reproduce(source, name, variant, out)
                sides[side] = (status, cpu, stderr, out)
            if sides["current"][0] == 2 and "not available" in sides["current"][2]:
                continue  # the figure does not offer this variant
            line = f"{name:24s} {variant:13s}"
            if any(status != 0 for status, *_ in sides.values()):
                differ += 1
                errors = {side: s[2].splitlines()[-1:] for side, s in sides.items() if s[0]}
                print(f"{line} FAILED {errors}", flush=True)
                continue
            tables = {}
            for side, (_, _, _, out) in sides.items():
                table = out.with_suffix(".csv")
                exported = _cli(HERE, "export", str(out), "--trajectories", "-o", str(table))
                if exported.returncode:
                    raise SystemExit(f"export of {out} failed: {exported.stderr.strip()}")
                tables[side] = table
            digests = {side: hashlib.sha256(t.read_bytes()).hexdigest() for side, t in
                       tables.items()}  # fmt: skip
            rows = sum(1 for _ in tables["current"].open()) - 1
            cpu = f"CPU {sides['baseline'][1]:6.1f} s -> {sides['current'][1]:6.1f} s"
            if digests["baseline"] == digests["current"]:
                print(f"{line} identical  {rows:7d} rows  {cpu}", flush=True)
            else:
                differ += 1
                where = _first_difference(tables["baseline"], tables["current"])
                print(f"{line} DIFFERENT  {rows:7d} rows  {cpu}  {where}", flush=True)
    print(f"{differ} differing or failed; {time.time() - started:.0f} s wall")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
