"""Audit of the change of common-noise scheme (store format 1 → 2): same distribution?

One command::

    .venv/bin/python benchmarks/fidelity/noise_change.py [--old REV] [--seeds 10]
        [--figures lindner-fig1 ...] [--out runs/noise-change]

runs each figure at quick scale twice — with the library as of git revision ``REV`` (default
``baed0ba``, the last commit with per-(replication, arm) PCG64 blocks; checked out in a git
worktree and put first on ``PYTHONPATH``) and with this tree — and compares, for every
(environment, policy, horizon) cell, the final ``reward`` and ``regret`` across seeds with
Welch's t-test (the longest horizon of each (environment, policy) only: shorter ones share
its noise). The two schemes draw different numbers from the same distributions, so about 1 %
of the p-values should fall below 0.01 (cells where both runs are identical — noise-free
environments — are counted apart; reward and regret of one cell are correlated, so the
expected count is a guide, not a test). A scheme that changed a distribution would show as a
pile-up of small p-values on the affected cells; ``comparison.csv`` in each figure's folder
lists every cell.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NOISY = [
    "demo-stationary",
    "lindner-fig1",
    "lindner-gaussian",
    "lindner-single-peaked",
    "lindner-increasing",
    "lindner-fico",
    "lindner-recommender",
    "ron-fig1",
    "cella-fig2",
    "tang-fig2",
]
KEYS = ["environment", "policy", "horizon"]


def worktree(rev: str) -> Path:
    path = ROOT / "runs" / f"src-{rev}"
    if not path.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), rev],
            check=True,
            capture_output=True,
        )
    return path


def reproduce(name: str, out: Path, seeds: int, src: Path | None) -> pd.DataFrame:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src / "src")
    cli = [sys.executable, "-m", "impactbandits.cli"]
    if not (out / "results.csv").exists():
        subprocess.run(
            [*cli, "reproduce", name, "--quick", "--seeds", str(seeds), "--out", str(out)],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        subprocess.run([*cli, "export", str(out)], check=True, env=env, stdout=subprocess.DEVNULL)
    table = pd.read_csv(out / "results.csv")
    # the longest horizon of each (environment, policy) at its end: shorter horizons of the
    # same seed share their noise with it, so they would add correlated, not new, tests
    last = table.groupby(["environment", "policy"])["horizon"].transform("max")
    table = table[(table["horizon"] == last) & (table["time"] == last)]
    return table


def compare(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for key, a in old.groupby(KEYS):
        b = new.set_index(KEYS).loc[key]
        for metric in ("reward", "regret"):
            x, y = a[metric].to_numpy(float), b[metric].to_numpy(float)
            same = np.array_equal(x, y)
            p = (
                1.0
                if same or (x.std() == 0 and y.std() == 0)
                else stats.ttest_ind(x, y, equal_var=False).pvalue
            )
            rows.append((*key, metric, x.mean(), y.mean(), same, p))
    return pd.DataFrame(rows, columns=[*KEYS, "metric", "old", "new", "identical", "p"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="baed0ba")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--figures", nargs="*", default=NOISY)
    parser.add_argument("--out", default=str(ROOT / "runs" / "noise-change"))
    args = parser.parse_args()
    src = worktree(args.old)
    print(f"old: {args.old} (store format 1); new: this tree; quick scale, {args.seeds} seeds")
    print(
        f"{'figure':22} {'cells':>6} {'identical':>9} {'compared':>8} "
        f"{'p<0.01':>7} {'p<0.05':>7} {'min p':>8}"
    )
    for name in args.figures:
        base = Path(args.out) / name
        old = reproduce(name, base / "old", args.seeds, src)
        new = reproduce(name, base / "new", args.seeds, None)
        table = compare(old, new)
        table.to_csv(base / "comparison.csv", index=False)
        tested = table[~table["identical"] & (table["p"] < 1.0)]
        print(
            f"{name:22} {len(table):6d} {int(table['identical'].sum()):9d} {len(tested):8d} "
            f"{int((tested['p'] < 0.01).sum()):7d} {int((tested['p'] < 0.05).sum()):7d} "
            f"{tested['p'].min() if len(tested) else float('nan'):8.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
