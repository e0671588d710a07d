"""Side by side: Ron, Ben-Porat & Shalit's own SRUM code against ours (ron-fig1, ron-fig2).

One command::

    .venv/bin/python benchmarks/fidelity/ron.py [--seeds 30] [--horizons 1000 10000]
        [--lambdas 0 0.4 0.8] [--fairness uniform linear softmax]

sets up the authors' environment (``bash benchmarks/fidelity/authors_env.sh ron``: their
repository tomron/CSRviaMAB@cb90260, unpatched), runs their ``BlackBoxAlgorithm.runSimulation``
with their ``ucb1`` there (this file, ``--worker`` mode, as a subprocess of their venv python;
the global NumPy seed is set to the seed before each run — their Bernoulli arms draw from
``scipy.stats.bernoulli.rvs``), and runs our SRUM in this venv — the paper default and
``variant = "authors-code"`` (SRUM and environment) — on the same instances: K = 6,
μ_i = 0.2 + 0.15(i − 1), λ ∈ {0, 0.4, 0.8}, f ∈ {f_uni, f_lin, f_sft (c = 1)}.

It prints, per (λ, f, T): mean ± 95% CI (Student t) of the average utility U/T over seeds, the
5/50/95% quantiles over seeds, the difference of means and Welch's t-test p-value, for

* table 1: our ``authors-code`` variant against their code, both scored as their code scores
  (penalty λ·max(0, T f(μ̂)_i − N_i) at the final μ̂, not floored);
* table 2: our paper default against their code, both scored by the paper's Eq. (1)
  (true μ, ⌊T f(μ)_i⌋; their runs rescored from their pull counts and total reward);
* table 3: the share of rounds per SRUM phase for f_sft (their ``delta_approx``, ``f_approx``,
  ``opportunities_rounds``, ``alg_rounds``).

Their code costs ≈ 50 µs per pull: the default (30 seeds, T = 10³ and 10⁴) takes ≈ 3–5 min.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MEANS = [0.2, 0.35, 0.5, 0.65, 0.8, 0.95]
LAMBDAS = (0.0, 0.4, 0.8)
#: our fairness names -> the authors' ``--fairness_function`` choices
FAIRNESS = {"uniform": "const", "linear": "lin", "softmax": "softmax"}
SHORT = {"uniform": "f_uni", "linear": "f_lin", "softmax": "f_sft"}


# -- worker: runs inside the authors' venv, imports only their code, numpy and the stdlib --------


def worker(src: str) -> None:
    """Jobs ``{"fairness": "lin", "lam": 0.4, "T": 1000, "seed": 0}`` (JSON lines) on stdin;
    one JSON line per job on stdout with their run's record."""
    sys.path.insert(0, src)
    import numpy as np
    from BernoulliArm import BernoulliArm
    from BlackBoxAlgorithm import get_fairness_function, runSimulation, ucb1
    from RoMab import RoMab
    from SimulationRun import SimulationRun

    class Opt:  # their argparse namespace: fairness_portion defaults to 1
        fairness_portion = 1.0

    arms = [BernoulliArm(p) for p in MEANS]
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        opt = Opt()
        opt.fairness_function = job["fairness"]
        f = get_fairness_function(opt, len(arms))
        np.random.seed(int(job["seed"]))  # noqa: NPY002 - their arms draw from the global RNG
        start = time.process_time()
        romab = RoMab(arms, T=int(job["T"]), f=f, lam=float(job["lam"]))
        run = SimulationRun(len(arms), int(job["T"]), sequence=False)
        runSimulation(romab, run, ucb1)
        job.update(
            utility=float(run.utility),
            total_reward=float(run.get_total_reward()),
            counters=[int(c) for c in run.counters],
            phases=[run.delta_approx, run.f_approx, run.opportunities_rounds, run.alg_rounds],
            cpu_s=round(time.process_time() - start, 4),
        )
        print(json.dumps(job), flush=True)


# -- driver: runs in our venv --------------------------------------------------------------------


def authors_runs(horizons: list[int], seeds: int, lambdas, fairness) -> list[dict]:
    out = (
        subprocess.run(
            ["bash", str(HERE / "authors_env.sh"), "ron"],
            check=True,
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()
    )
    python, src = out[-2], out[-1]
    jobs = [
        {"fairness": FAIRNESS[f], "ours": f, "lam": lam, "T": T, "seed": s}
        for T in horizons
        for lam in lambdas
        for f in fairness
        for s in range(seeds)
    ]
    text = "\n".join(json.dumps(j) for j in jobs) + "\n"
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", "--src", src],
        input=text,
        check=True,
        capture_output=True,
        text=True,
        cwd=src,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def our_runs(horizons: list[int], seeds: int, variant: str, lambdas, fairness):
    import tempfile

    from impactbandits import ExperimentSpec, run_experiment, tidy_table

    envs = []
    for lam in lambdas:
        for f in fairness:
            env = {
                "kind": "opportunity",
                "label": f"{lam:g}|{f}",
                "means": MEANS,
                "fairness": f,
                "transfer_cost": lam,
            }
            if variant != "paper":
                env["variant"] = variant
            envs.append(env)
    policy = {"kind": "srum"} if variant == "paper" else {"kind": "srum", "variant": variant}
    spec = ExperimentSpec.create(
        name=f"ron-harness-{variant}",
        environments=envs,
        policies=[policy],
        horizons=horizons,
        seeds=seeds,
    )
    with tempfile.TemporaryDirectory() as tmp:
        run_experiment(spec, tmp, backend="serial")
        return tidy_table(tmp)


def paper_utility(fairness: str, lam: float, T: int, counters, total_reward: float) -> float:
    """Eq. (1) with the true μ and ⌊T f(μ)_i⌋ (our objective module, not the code under test
    of the authors)."""
    import numpy as np

    from impactbandits.oracles.opportunity import penalty, requirements
    from impactbandits.oracles.opportunity_fairness import make_fairness

    f_mu = make_fairness(fairness, len(MEANS), 1.0)(np.asarray(MEANS))
    required = requirements(f_mu, T)
    return total_reward - float(penalty(required, np.asarray(counters, float), lam))


def stats(x):
    import numpy as np
    from scipy import stats as st

    x = np.asarray(x, dtype=float)
    n = len(x)
    half = st.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
    q = np.quantile(x, [0.05, 0.5, 0.95])
    return x.mean(), half, q


def welch(a, b) -> float:
    import numpy as np
    from scipy import stats as st

    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.std(a) == 0 and np.std(b) == 0:
        return 1.0 if a.mean() == b.mean() else 0.0
    return float(st.ttest_ind(a, b, equal_var=False).pvalue)


def fmt(m: float, h: float) -> str:
    return f"{m:.4f}±{h:.4f}"


def comparison(title: str, left: str, right: str, cells) -> str:
    lines = [
        title,
        f"{'λ':>4} {'f':<6} {'T':>7} | {left + ' mean±CI':<16} {'q5/q50/q95':<21} | "
        f"{right + ' mean±CI':<16} {'q5/q50/q95':<21} | {'diff':>8} {'Welch p':>8}",
    ]
    for (lam, f, T), a, b in cells:
        ma, ha, qa = stats(a)
        mb, hb, qb = stats(b)
        lines.append(
            f"{lam:>4g} {SHORT[f]:<6} {T:>7} | {fmt(ma, ha):<16} "
            f"{'/'.join(f'{v:.3f}' for v in qa):<21} | {fmt(mb, hb):<16} "
            f"{'/'.join(f'{v:.3f}' for v in qb):<21} | {ma - mb:>+8.4f} {welch(a, b):>8.3f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--horizons", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--lambdas", type=float, nargs="+", default=list(LAMBDAS))
    parser.add_argument("--fairness", nargs="+", default=list(FAIRNESS), choices=list(FAIRNESS))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.src)
        return
    if args.seeds < 2:
        parser.error("--seeds: need at least 2 for confidence intervals")

    start = time.time()
    grid = (args.lambdas, args.fairness)
    theirs = authors_runs(args.horizons, args.seeds, *grid)
    t_authors = time.time() - start
    start = time.time()
    paper = our_runs(args.horizons, args.seeds, "paper", *grid)
    authors_variant = our_runs(args.horizons, args.seeds, "authors-code", *grid)
    t_ours = time.time() - start

    def ours(table, lam, f, T, column="average_utility"):
        rows = table[(table["environment"] == f"{lam:g}|{f}") & (table["horizon"] == T)]
        return rows.sort_values("seed")[column].to_numpy()

    def theirs_of(lam, f, T):
        return [r for r in theirs if r["ours"] == f and r["lam"] == lam and r["T"] == T]

    keys = [(lam, f, T) for T in args.horizons for lam in args.lambdas for f in args.fairness]
    own = [
        (k, ours(authors_variant, *k), [r["utility"] / r["T"] for r in theirs_of(*k)]) for k in keys
    ]
    rescored = [
        (
            k,
            ours(paper, *k),
            [
                paper_utility(k[1], k[0], k[2], r["counters"], r["total_reward"]) / k[2]
                for r in theirs_of(*k)
            ],
        )
        for k in keys
    ]
    phase_lines = [
        "Table 3. Share of rounds per phase (1/2/3/4), f_sft, mean over seeds",
        f"{'λ':>4} {'T':>7} | {'authors code':<27} | {'ours authors-code':<27} | "
        f"{'ours paper':<27}",
    ]
    for T in args.horizons if "softmax" in args.fairness else []:
        for lam in args.lambdas:
            runs = theirs_of(lam, "softmax", T)
            a = [sum(r["phases"][i] for r in runs) / (len(runs) * T) for i in range(4)]
            cols = [f"phase_{i}" for i in range(1, 5)]
            b = [ours(authors_variant, lam, "softmax", T, c).mean() for c in cols]
            c = [ours(paper, lam, "softmax", T, c).mean() for c in cols]
            phase_lines.append(
                f"{lam:>4g} {T:>7} | "
                + " | ".join("/".join(f"{v:.3f}" for v in s).ljust(27) for s in (a, b, c))
            )

    cpu = sum(r["cpu_s"] for r in theirs)
    pulls = sum(r["T"] for r in theirs)
    print(
        f"Ron et al. side by side: K = 6, μ = {MEANS}, {args.seeds} seeds, "
        f"T ∈ {args.horizons}, λ ∈ {args.lambdas}, f ∈ {args.fairness}; average utility U/T"
    )
    print(
        f"authors' code (tomron/CSRviaMAB@cb90260): {t_authors:.0f} s wall, "
        f"{1e6 * cpu / pulls:.0f} µs CPU per pull; ours (both variants): {t_ours:.0f} s wall"
    )
    print()
    print(
        comparison(
            "Table 1. Ours variant=authors-code vs authors' code, scored as their code "
            "(penalty at final μ̂, T f(μ̂) not floored)",
            "ours",
            "authors",
            own,
        )
    )
    print()
    print(
        comparison(
            "Table 2. Ours paper default vs authors' code, both scored by Eq. (1) "
            "(true μ, ⌊T f(μ)⌋)",
            "ours",
            "authors",
            rescored,
        )
    )
    print()
    print("\n".join(phase_lines))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
