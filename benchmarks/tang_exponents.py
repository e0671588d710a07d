"""Fitted regret exponents over T ∈ [10³, 10⁵] for Tang et al.'s setting (K = 2, interior
optimum): AD-UCB (γ = 0), the phased HD-UCB (γ = 0.2, 0.6) and UCB1 over the base arms
(one-hot meta-arms; Lemma 3.1 predicts linear regret).

Instances: ``impactbandits.experiments.papers.tang.EXPONENT_INSTANCES`` (``figures``, ``sharp``,
``peaked``, ``plateau``; see their documentation). Prints the least-squares slope of
log(mean regret) on log T and the local slopes between consecutive horizons.

    .venv/bin/python benchmarks/tang_exponents.py [--seeds 5] [--instance plateau peaked ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.experiments.papers.tang import EXPONENT_INSTANCES

HORIZONS = [1_000, 3_000, 10_000, 30_000, 100_000]
GAMMAS = (0.0, 0.2, 0.6)


def exponents(instance: str, seeds: int) -> None:
    params = EXPONENT_INSTANCES[instance]
    envs = [{"kind": "impact", "label": f"γ={g}", "gamma": g, **params} for g in GAMMAS]
    spec = ExperimentSpec.create(
        name=f"tang-exponents-{instance}",
        environments=envs,
        horizons=HORIZONS,
        seeds=seeds,
        checkpoints=5,
        policies=[
            {"kind": "ad-ucb", "label": "AD-UCB", "environments": ["γ=0.0"]},
            {"kind": "hd-ucb", "label": "HD-UCB", "environments": ["γ=0.2", "γ=0.6"]},
            {"kind": "one-hot", "label": "UCB1 (base arms)", "base": "ucb1"},
        ],
    )
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run_experiment(spec, out, backend="process")
        seconds = time.perf_counter() - start
        table = tidy_table(out)
    print(f"\ninstance {instance!r} {params}, {seeds} seeds ({seconds:.0f} s)")
    print(f"{'environment':10} {'policy':18} {'exponent':>8}  local slopes / mean regret")
    for (env, policy), rows in table.groupby(["environment", "policy"], observed=True):
        mean = rows.groupby("horizon")["regret"].mean()
        x = np.log(mean.index.to_numpy(dtype=float))
        y = np.log(np.maximum(mean.to_numpy(), 1e-9))
        slope = np.polyfit(x, y, 1)[0]
        local = np.round(np.diff(y) / np.diff(x), 2).tolist()
        print(f"{env!s:10} {policy!s:18} {slope:8.3f}  {local} {np.round(mean, 1).tolist()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--instance", nargs="+", choices=sorted(EXPONENT_INSTANCES), default=["plateau", "peaked"]
    )
    args = parser.parse_args()
    for instance in args.instance:
        exponents(instance, args.seeds)


if __name__ == "__main__":
    main()
