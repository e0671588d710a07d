"""Side by side: Lindner et al.'s own code and ours, on their instances.

One command (the authors' environment is created on first use, see ``authors_env.sh``)::

    .venv/bin/python benchmarks/fidelity/lindner.py [--quick] [--seeds 30]

1. **Noise-free pulls, single-peaked instance 3**, T = 2000, 5000, 20000 (``--quick``: no
   20000, whose O(T²) D-UCB/UCB loops take minutes in their code): pulls of arm 0 and regret
   for their solver, our paper default and our ``variant = "authors-code"``. Deterministic:
   "exact" means equal pull counts.
2. **Noisy greedy and one-step-optimistic** (σ = 0.05, T = 5000, ``--seeds`` seeds each side):
   their arms re-draw noise at every evaluation; ours with the paper default (noise once per
   pull) and with the authors'-code variant on ``noise_draws = "per-evaluation"``. Mean ± 95%
   CI of regret, median, and Welch's test against theirs.
3. **Noisy SPO** (σ = 0.05, T = 1000, ``--spo-seeds`` of theirs, 30 of ours; their LP is solved
   by CBC with one LP of T variables per round, ≈ 30 CPU s per seed at T = 1000).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
from scipy import stats

from impactbandits.core.environment import EnvironmentRandom
from impactbandits.core.random import BatchRNG
from impactbandits.kernels import simulate
from impactbandits.oracles.allocation import optimal_allocation
from impactbandits.registry import build_environment, build_policy

HERE = Path(__file__).resolve().parent
SIGMA = 0.05
# their solver name -> (our kind, parameters of the paper default for the noise-free runs)
NOISE_FREE = {
    "optimistic": ("spo", {}),
    "ducb": ("d-ucb", {}),
    "sucb": ("sw-ucb", {}),
    "ucb": ("ucb", {}),
    "greedy": ("last-reward-greedy", {}),
    "one-ste-optimistic": ("one-step-optimistic", {}),
}


def authors(jobs: list[dict]) -> list[dict]:
    out = subprocess.run(
        ["bash", str(HERE / "authors_env.sh"), "lindner"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    python, src = out[-2], out[-1]
    done = subprocess.run(
        [python, str(HERE / "lindner_authors.py"), "--src", src],
        input="".join(json.dumps(j) + "\n" for j in jobs),
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


class Regret:
    def __init__(self, horizon: int) -> None:
        curves = build_environment("single-peaked", {"instance": 3}).curves[:, :horizon]
        self.best = optimal_allocation(curves).values
        self.cum = np.concatenate([np.zeros((2, 1)), np.cumsum(curves, axis=1)], axis=1)

    def __call__(self, pulls: np.ndarray) -> np.ndarray:
        pulls = np.atleast_2d(np.asarray(pulls, dtype=int))
        return self.best[pulls.sum(1)] - self.cum[0, pulls[:, 0]] - self.cum[1, pulls[:, 1]]


def ours(kind: str, params: dict, env_params: dict, horizon: int, reps: int) -> np.ndarray:
    env = build_environment("single-peaked", {"instance": 3, **env_params})
    trajectory = simulate(
        env,
        build_policy(kind, params),
        horizon,
        horizon,
        np.array([horizon]),
        EnvironmentRandom(3, 4, list(range(reps))),
        BatchRNG.from_key(3, (5,), list(range(reps))),
    )
    return trajectory.pulls[:, -1].astype(int)


def band(x: np.ndarray) -> str:
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else 0
    return f"{x.mean():7.1f} ± {half:5.1f} (median {np.median(x):6.1f}, n={x.size})"


def noise_free(horizons: list[int], regret: Regret) -> None:
    print("1. Noise-free instance 3: pulls of arm 0 (regret)")
    jobs = [
        {"bandit": "inc_dec_3", "solver": s, "T": t, "seed": 0}
        for s in NOISE_FREE
        for t in horizons
    ]
    for job in authors(jobs):
        kind, params = NOISE_FREE[job["solver"]]
        t, theirs = job["T"], np.array(job["pulls"])
        paper = ours(kind, params, {}, t, 1)[0]
        code = ours(kind, {**params, "variant": "authors-code"}, {}, t, 1)[0]
        same = "exact" if (code == theirs).all() else "DIFFERS"
        print(
            f"  {kind:<20} T={t:<6} theirs {theirs[0]:>5} ({regret(theirs)[0]:7.1f})   "
            f"paper {paper[0]:>5} ({regret(paper)[0]:7.1f})   "
            f"authors-code {code[0]:>5} ({regret(code)[0]:7.1f})  {same}"
        )


def noisy(solver: str, kind: str, params: dict, seeds: int, horizon: int, regret: Regret) -> None:
    jobs = [
        {"bandit": "inc_dec_3_std_0.05", "solver": solver, "T": horizon, "seed": s}
        for s in range(seeds)
    ]
    theirs = regret(np.array([j["pulls"] for j in authors(jobs)]))
    print(f"  {kind} theirs: {band(theirs)}")
    noisy_env = {"noise": "gaussian", "sigma": SIGMA}
    for label, extra, draws in (
        ("paper algorithm (same ε̄)", {}, "per-pull"),
        ("authors-code, noise per pull", {"variant": "authors-code"}, "per-pull"),
        ("authors-code, per evaluation", {"variant": "authors-code"}, "per-evaluation"),
    ):
        if kind == "spo" and draws == "per-evaluation":
            continue  # SPO stores each observation: re-drawing changes nothing it sees
        pulls = ours(kind, {**params, **extra}, {**noisy_env, "noise_draws": draws}, horizon, 30)
        mine = regret(pulls)
        p = stats.ttest_ind(mine, theirs, equal_var=False).pvalue
        print(f"  {kind} ours {label:<30} {band(mine)}   Welch p vs theirs {p:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--spo-seeds", type=int, default=10)
    args = parser.parse_args()
    start = time.time()
    horizons = [2000, 5000] if args.quick else [2000, 5000, 20000]
    noise_free(horizons, Regret(max(horizons)))
    print(f"2. Noisy (σ = {SIGMA}), T = 5000, regret")
    regret = Regret(5000)
    noisy("greedy", "last-reward-greedy", {}, args.seeds, 5000, regret)
    noisy(
        "one-ste-optimistic",
        "one-step-optimistic",
        {"noise_bound": 2 * SIGMA},
        args.seeds,
        5000,
        regret,
    )
    print(f"3. Noisy SPO (σ = {SIGMA}, ε̄ = 2σ), T = 1000, regret")
    noisy("optimistic", "spo", {"noise_bound": 2 * SIGMA}, args.spo_seeds, 1000, Regret(1000))
    print(f"({time.time() - start:.0f} s wall)")


if __name__ == "__main__":
    main()
