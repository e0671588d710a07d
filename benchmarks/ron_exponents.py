"""Fitted regret exponents of SRUM over T ∈ [10³, 2·10⁵] for every (f, λ) of Ron et al.'s
Figure 1: slope of log(mean regret) against log T. Paper defaults from an existing full-scale
``ron-fig1`` run directory (argument), the authors'-code α (K instead of K^{2/3}) from a fresh
run with ``--variant-seeds`` repetitions.

    .venv/bin/python benchmarks/ron_exponents.py RUN_DIR [--variant-seeds 50]
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.figures import get_figure


def exponents(run_dir: str) -> dict[str, float]:
    table = tidy_table(run_dir)
    out = {}
    for env, rows in table.groupby("environment", observed=True):
        mean = rows.groupby("horizon")["regret"].mean()
        if (mean <= 0).any():
            out[str(env)] = float("nan")  # regret ≤ 0 somewhere: no power law to fit
            continue
        out[str(env)] = float(np.polyfit(np.log(mean.index), np.log(mean.to_numpy()), 1)[0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--variant-seeds", type=int, default=50)
    args = parser.parse_args()
    paper = exponents(args.run_dir)
    spec = get_figure("ron-fig1").build(False)
    variant = spec.replace(
        name="ron-fig1-authors-alpha",
        seeds=args.variant_seeds,
        policies=[{"kind": "srum", "label": "SRUM", "alpha_rule": "authors-code"}],
    )
    with tempfile.TemporaryDirectory() as out:
        run_experiment(variant, out, backend="process")
        authors = exponents(out)
    print(f"{'fairness policy':18} {'paper α':>9} {'authors α':>10}")
    for env in paper:
        print(f"{env:18} {paper[env]:9.3f} {authors[env]:10.3f}")


if __name__ == "__main__":
    main()
