"""Fitted regret exponents over T ∈ [10³, 10⁵] for Tang et al.'s setting (K = 2, interior
optimum): AD-UCB (γ = 0), the phased HD-UCB (γ = 0.2, 0.6) and UCB1 over the base arms
(one-hot meta-arms; Lemma 3.1 predicts linear regret).

Instances: ``impactbandits.experiments.papers.tang.EXPONENT_INSTANCES`` (``figures``, ``sharp``,
``peaked``, ``plateau``; see their documentation). Prints the least-squares slope of
log(mean regret) on log T and the local slopes between consecutive horizons.

    .venv/bin/python benchmarks/tang_exponents.py [--seeds 5] [--instance plateau peaked ...]

``--ad-vs-cucb T1,T2,...`` instead compares AD-UCB with CUCB at γ = 0 (Figure 2a's claim that
AD-UCB wins) on the given instances and horizons: mean final regret ± 95% CI of each policy
(with EXP3 over the base arms and over the meta-arms), and the paired difference AD-UCB − CUCB
per seed with its 95% CI (the policies see common random numbers, so pairing removes the
instance noise). Seeds are the experiment's 0 … n−1 of root seed 0.

    .venv/bin/python benchmarks/tang_exponents.py --ad-vs-cucb 1250,5000,20000 --seeds 10 \
        --instance figures

``--k-trend T`` runs Figure 3's HD-UCB on police(K), K = 2 … 5, γ = 0.2, horizon T, with the
theory's ε and with 1/ε = 20 (Figure 3's default) and 1/ε = 4K (at K = 5 the same run as
1/ε = 20, listed once), and prints the final regret (mean ± sd over seeds) and the local slope
over the last doubling of rounds.

    .venv/bin/python benchmarks/tang_exponents.py --k-trend 5000 --seeds 6
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


def ad_vs_cucb(instances: list[str], horizons: list[int], seeds: int) -> None:
    envs = [
        {"kind": "impact", "label": name, "gamma": 0.0, **EXPONENT_INSTANCES[name]}
        for name in instances
    ]
    spec = ExperimentSpec.create(
        name="tang-ad-vs-cucb",
        environments=envs,
        horizons=horizons,
        seeds=seeds,
        checkpoints=10,
        policies=[
            {"kind": "ad-ucb", "label": "AD-UCB"},
            {"kind": "cucb", "label": "CUCB"},
            {"kind": "exp3-meta", "label": "mEXP3"},
            {"kind": "one-hot", "label": "EXP3", "base": "exp3"},
        ],
    )
    with tempfile.TemporaryDirectory() as out:
        cpu = time.process_time()
        run_experiment(spec, out, backend="serial")
        cpu = time.process_time() - cpu
        table = tidy_table(out)
    print(f"\nAD-UCB vs CUCB, γ = 0, {seeds} seeds ({cpu:.0f} CPU s); mean ± 95% CI")
    final = table[table["time"] == table["horizon"]]
    for (env, horizon), rows in final.groupby(["environment", "horizon"], observed=True):
        wide = rows.pivot_table(index="seed", columns="policy", values="regret", observed=True)
        half = 1.96 / np.sqrt(len(wide))
        cells = [f"{p} {wide[p].mean():.1f}±{half * wide[p].std():.1f}" for p in wide]
        diff = wide["AD-UCB"] - wide["CUCB"]
        lo, hi = diff.mean() - half * diff.std(), diff.mean() + half * diff.std()
        cells.append(f"AD-UCB − CUCB {diff.mean():+.1f} [{lo:+.1f}, {hi:+.1f}]")
        print(f"{env} T={horizon}: " + " | ".join(cells))


def k_trend(horizon: int, seeds: int) -> None:
    from impactbandits.experiments.papers.tang import FIG3_RESOLUTION, local_slope, police

    ks = (2, 3, 4, 5)
    envs = [{"kind": "impact", "label": f"K={k}", "gamma": 0.2, **police(k)} for k in ks]
    policies: list[dict] = [
        {"kind": "hd-ucb", "label": "theory ε"},
        {"kind": "hd-ucb", "label": f"1/ε = {FIG3_RESOLUTION}", "resolution": FIG3_RESOLUTION},
    ]
    policies += [
        {"kind": "hd-ucb", "label": "1/ε = 4K", "resolution": 4 * k, "environments": [f"K={k}"]}
        for k in ks
    ]
    spec = ExperimentSpec.create(
        name="tang-k-trend",
        environments=envs,
        horizons=[horizon],
        seeds=seeds,
        checkpoints=64,
        policies=policies,
    )
    with tempfile.TemporaryDirectory() as out:
        cpu = time.process_time()
        run_experiment(spec, out, backend="serial")
        cpu = time.process_time() - cpu
        table = tidy_table(out, trajectories=True)
    print(f"\nHD-UCB on police(K), γ = 0.2, T = {horizon}, {seeds} seeds ({cpu:.0f} CPU s)")
    for (policy, env), rows in table.groupby(["policy", "environment"], observed=True):
        final = rows[rows["time"] == rows["time"].max()]["regret"]
        slope = local_slope(rows)
        print(
            f"{policy!s:10} {env!s:5} {final.mean():8.1f} ± {final.std():6.1f}  slope {slope:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--instance", nargs="+", choices=sorted(EXPONENT_INSTANCES), default=["plateau", "peaked"]
    )
    parser.add_argument("--ad-vs-cucb", metavar="T1,T2,...", default=None)
    parser.add_argument("--k-trend", metavar="T", type=int, default=None)
    args = parser.parse_args()
    if args.k_trend:
        k_trend(args.k_trend, args.seeds)
        return
    if args.ad_vs_cucb:
        horizons = [int(t) for t in args.ad_vs_cucb.split(",")]
        ad_vs_cucb(args.instance, horizons, args.seeds)
        return
    for instance in args.instance:
        exponents(instance, args.seeds)


if __name__ == "__main__":
    main()
