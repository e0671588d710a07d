"""Rotting bandits side by side: the first author's implementations in SMPyBandits vs ours.

One command::

    .venv/bin/python benchmarks/fidelity/rotting.py [--seeds 10] [--horizon 25000]

On Seznec et al.'s (2019) Figure 2 instance (10 arms, μ_i for 1,000 pulls then −μ_i, σ = 1),
with the same number of replications on both sides:

* ``smpy`` — SMPyBandits at the mirrored snapshot (``SMPyBandits/SMPyBandits@012fc13``; its
  ``Policies``, ``Arms`` and ``Environment`` folders are exported to
  ``benchmarks/fidelity/.authors/smpybandits-git/``: the PyPI release 0.9.7 lacks them), run in
  the SMPyBandits venv (``benchmarks/smpybandits_env.sh``) by a loop equal to their
  ``MAB_rotting.play``: ``EFF_FEWA(α = 0.06, m = 1.1)``, ``EFF_RAWUCB(α = 1.4, m = 1.1)`` and
  ``wSWA(α = 0.2)`` on ``RestedRottingGaussian`` arms; replication r seeds Python's
  ``random`` with r (their Gaussian arms draw with ``random.gauss``) and NumPy's legacy
  generator (their tie-breaking), so each side is reproducible (the draws differ);
* ``ours`` — ``fewa``, ``raw-ucb`` (window grid 1.1) and ``swa`` (doubling) on ``rotting``
  ``ten-arms``.

``--exact`` compares the exact algorithms instead (every window: their ``FEWA(α = 0.06)`` and
``RAWUCB(α = 1.4)``, ours with ``grid = 1``); theirs are O(K·t) per round in Python, so use a
short horizon. Printed: mean regret at T against the optimal allocation (the sum of the T largest
means, what their greedy oracle collects) with a 95% t-interval, and CPU seconds per side.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from intervals import mean_interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SMPY_SRC = HERE / ".authors" / "smpybandits-git"
MEANS = [0.0, *(0.001 * 10 ** (j / 2) for j in range(9))]
BREAKPOINT = 1000
POLICIES = ("FEWA", "RAW-UCB", "wSWA")


def optimum(horizon: int) -> float:
    values = sorted(
        (mu if m < BREAKPOINT else -mu for mu in MEANS for m in range(horizon)), reverse=True
    )
    return float(sum(values[:horizon]))


def _abrupt(mu: float):
    return lambda n: mu if n < BREAKPOINT else -mu


def worker(policy: str, horizon: int, seeds: int, exact: bool) -> None:
    import numpy as np

    sys.path.insert(0, str(SMPY_SRC))
    from SMPyBandits.Arms import RestedRottingGaussian
    from SMPyBandits.Policies import EFF_FEWA, EFF_RAWUCB, FEWA, RAWUCB, wSWA

    make = {
        "FEWA": (lambda k: FEWA(k, alpha=0.06, delta=1)) if exact
        else (lambda k: EFF_FEWA(k, alpha=0.06, delta=1, m=1.1)),
        "RAW-UCB": (lambda k: RAWUCB(k, alpha=1.4)) if exact
        else (lambda k: EFF_RAWUCB(k, alpha=1.4, m=1.1)),
        "wSWA": lambda k: wSWA(k, alpha=0.2),
    }[policy]  # fmt: skip
    best = optimum(horizon)
    regrets = []
    start = time.process_time()
    for rep in range(seeds):
        random.seed(rep)  # their UnboundedGaussian.draw is random.gauss
        np.random.seed(rep)  # noqa: NPY002 - their IndexPolicy breaks ties with it
        arms = [
            RestedRottingGaussian(
                decayingFunction=_abrupt(mu),
                sigma=1,
            )
            for mu in MEANS
        ]
        algo = make(len(arms))
        algo.startGame()
        total = 0.0
        for t in range(horizon):  # their MAB_rotting.play
            choice = algo.choice()
            total += arms[choice].mean
            algo.getReward(choice, arms[choice].draw(t))
        regrets.append(best - total)
    print(json.dumps({"regrets": regrets, "cpu": time.process_time() - start}))


def ours(policy: str, horizon: int, seeds: int, exact: bool) -> dict:
    import numpy as np

    from impactbandits.core import BatchRNG, EnvironmentRandom
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_environment, build_policy

    env = build_environment("rotting", {"instance": "ten-arms", "length": horizon})
    grid = {"grid": 1.0} if exact else {}
    kind, params = {
        "FEWA": ("fewa", grid),
        "RAW-UCB": ("raw-ucb", grid),
        "wSWA": ("swa", {"doubling": True}),
    }[policy]
    reps = range(seeds)
    start = time.process_time()
    trajectory = simulate(
        env, build_policy(kind, params), horizon, None, np.array([horizon]),
        EnvironmentRandom(2019, 1, reps), BatchRNG.from_key(2019, (2,), reps),
    )  # fmt: skip
    regrets = (optimum(horizon) - trajectory.expected[:, -1]).tolist()
    return {"regrets": regrets, "cpu": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizon", type=int, default=25_000)
    parser.add_argument("--exact", action="store_true", help="every window (slow on their side)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.horizon, args.seeds, args.exact)
        return
    from scipy import stats

    setup = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "smpybandits_env.sh")], capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    python = setup.stdout.strip().splitlines()[-1]
    if not (SMPY_SRC / "SMPyBandits").is_dir():
        sys.exit(f"export SMPyBandits' Policies, Arms and Environment to {SMPY_SRC} first")
    kind = "exact (every window)" if args.exact else "efficient (window grid 1.1)"
    print(f"ten arms, abrupt decay, T = {args.horizon}, {args.seeds} seeds, {kind}; "
          "regret at T ± 95% t-interval")  # fmt: skip
    print(f"{'policy':10s} {'SMPyBandits':>18s} {'ours':>18s}  Welch p  CPU s (theirs / ours)")
    for policy in POLICIES:
        command = [python, __file__, "--worker", policy, "--horizon", str(args.horizon),
                   "--seeds", str(args.seeds)] + (["--exact"] if args.exact else [])  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, check=True)
        theirs = json.loads(run.stdout.strip().splitlines()[-1])
        mine = ours(policy, args.horizon, args.seeds, args.exact)
        p = stats.ttest_ind(theirs["regrets"], mine["regrets"], equal_var=False).pvalue
        theirs_text, mine_text = (
            mean_interval(theirs["regrets"], 8),
            mean_interval(mine["regrets"], 8),
        )
        print(f"{policy:10s} {theirs_text:>18s} {mine_text:>18s}  "
              f"{p:7.2f}  {theirs['cpu']:.1f} / {mine['cpu']:.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
