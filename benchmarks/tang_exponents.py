"""Fitted regret exponents over T ∈ [10³, 10⁵] for Tang et al.'s setting (police model, K = 2,
interior optimum): AD-UCB (γ = 0), the phased HD-UCB (γ = 0.2, 0.6) and UCB1 over the base arms
(one-hot meta-arms; Lemma 3.1 predicts linear regret).

Instances: ``sharp`` (default) high = (0.9, 0.9), low = (0.1, 0.1), p* = (1/2, 1/2);
``flat`` high = (0.9, 0.8), low = (0.3, 0.4), p* ≈ (0.45, 0.55) — the figures' instance, much
flatter around its optimum.

    .venv/bin/python benchmarks/tang_exponents.py [--seeds 3] [--instance sharp|flat]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from impactbandits import ExperimentSpec, run_experiment, tidy_table

HORIZONS = [1_000, 3_000, 10_000, 30_000, 100_000]
INSTANCES = {
    "sharp": {"kind": "impact", "high": [0.9, 0.9], "low": [0.1, 0.1]},
    "flat": {"kind": "impact", "high": [0.9, 0.8], "low": [0.3, 0.4]},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--instance", choices=sorted(INSTANCES), default="sharp")
    args = parser.parse_args()
    instance = INSTANCES[args.instance]
    envs = [{**instance, "label": f"γ={g}", "gamma": g} for g in (0.0, 0.2, 0.6)]
    spec = ExperimentSpec.create(
        name="tang-exponents",
        environments=envs,
        horizons=HORIZONS,
        seeds=args.seeds,
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
    print(f"{'environment':10} {'policy':18} {'exponent':>9}   mean regret at T = {HORIZONS}")
    for (env, policy), rows in table.groupby(["environment", "policy"], observed=True):
        mean = rows.groupby("horizon")["regret"].mean()
        slope = np.polyfit(np.log(mean.index), np.log(np.maximum(mean.to_numpy(), 1e-9)), 1)[0]
        print(f"{env!s:10} {policy!s:18} {slope:9.3f}   {np.round(mean.to_numpy(), 1).tolist()}")
    print(f"({seconds:.0f} s)")


if __name__ == "__main__":
    main()
