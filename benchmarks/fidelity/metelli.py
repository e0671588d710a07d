"""Metelli et al. (2022), synthetic experiments, side by side: the authors' code vs impactbandits.

One command::

    .venv/bin/python benchmarks/fidelity/metelli.py [--seeds 20] [--horizon 50000]

runs on the authors' bandit 0 (15 arms) rested and "restless", and bandit 1 (2 arms) rested,
with their Beta observations (mean μ, β = 2):

* ``authors`` — albertometelli/stochastic-rising-bandits@2b49e82 (``authors_env.sh metelli``),
  unpatched: their ``Bandit`` (``load_lambdas`` from ``model.py``, ``oracle``), their agents
  ``R_ed_UCB`` / ``R_less_UCB``, ``SW_UCB_eff`` and ``Rexp3``, driven by a loop equal to their
  ``Experiment.run`` (``experiment.py`` imports ``options.py``, which imports their
  scikit-learn strategies for the IMDB experiment; not needed here). Replication r seeds
  Python's ``random`` and NumPy's legacy generator with r. Their "restless" run uses their
  ``Bandit(restless=True)`` as ``main.py --restless`` does;
* ``ours`` — the library's ``r-ed-ucb`` / ``r-less-ucb`` (``variant`` paper and authors-code),
  ``sw-ucb`` and ``r-exp3`` (V_T = 0.001·T, their setting) on ``rising`` / ``rising-restless``
  (restless: ``variant`` paper, and authors-code = arms advancing with their own pulls, what
  their restless run simulates).

Printed: mean cumulative expected regret at T with a 95% t-interval over replications, and the
CPU seconds of each side. Regret is theirs (``Bandit.oracle``: best arm's cumulative reward for
rested, Σ_t max_i μ_i(t) for restless), which is also the library's exact oracle here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from intervals import mean_interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CASES = {  # label: (their bandit index, restless?)
    "15 arms, rested": (0, False),
    "2 arms, rested": (1, False),
    "15 arms, restless": (0, True),
}
AUTHORS_AGENTS = ("R-ed/less-UCB", "SW-UCB", "Rexp3")


# --------------------------------------------------------------------------------------------
# worker: runs inside the authors' venv
# --------------------------------------------------------------------------------------------


def worker(src: str, index: int, restless: bool, agent: str, horizon: int, seeds: int) -> None:
    import random

    import numpy as np

    sys.path.insert(0, str(Path(src) / "src"))
    os.environ["TQDM_DISABLE"] = "1"
    import model  # their instances
    from algorithms.R_ed_UCB import R_ed_UCB
    from algorithms.R_less_UCB import R_less_UCB
    from algorithms.Rexp3 import Rexp3
    from algorithms.SW_UCB_eff import SW_UCB_eff
    from bandit import Bandit

    make = {
        "R-ed/less-UCB": R_less_UCB if restless else R_ed_UCB,
        "SW-UCB": SW_UCB_eff,
        "Rexp3": Rexp3,
    }[agent]
    regrets = []
    start = time.process_time()
    for rep in range(seeds):
        random.seed(rep)
        np.random.seed(rep)  # noqa: NPY002 - their agents draw from the legacy generator
        bandit = Bandit(restless=restless)
        bandit.load_lambdas(model.lambdas[index])
        oracle = bandit.oracle(horizon)
        algo = make()
        algo.set_horizon(horizon)
        algo.set_arms_number(len(bandit.arms))
        total = 0.0
        for _ in range(horizon):  # their Experiment.run, without the bookkeeping
            arm = algo.select_arm()
            reward, observation = bandit.pull_arm(arm)
            algo.new_observation(arm=arm, value=observation)
            total += reward
        regrets.append(float(np.sum(oracle["rewards"]) - total))
    print(json.dumps({"regrets": regrets, "cpu": time.process_time() - start}))


# --------------------------------------------------------------------------------------------
# ours
# --------------------------------------------------------------------------------------------


def ours(label: str, policy: str, variant: str, horizon: int, seeds: int) -> dict:
    import numpy as np

    from impactbandits.core import BatchRNG, EnvironmentRandom
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_environment, build_policy, resolve_oracle

    index, restless = CASES[label]
    params = {"instance": "15-arms" if index == 0 else "2-arms", "length": horizon}
    if restless:
        params["variant"] = variant
    env = build_environment("rising-restless" if restless else "rising", params)
    kind = {"rising": "r-less-ucb" if restless else "r-ed-ucb"}.get(policy, policy)
    pparams: dict = {"variant": variant} if policy == "rising" else {}
    if policy == "r-exp3":
        pparams = {"variation_budget": 0.001 * horizon}
    pol = build_policy(kind, pparams)
    start = time.process_time()
    reps = range(seeds)
    times = np.array([horizon])
    trajectory = simulate(
        env, pol, horizon, horizon if pol.requires_horizon else None, times,
        EnvironmentRandom(2022, 1, reps), BatchRNG.from_key(2022, (2,), reps),
    )  # fmt: skip
    env.reset(EnvironmentRandom(2022, 1, reps))
    optimum = resolve_oracle(env.default_oracle, "oracle")(env, times)[:, -1]
    regrets = (optimum - trajectory.expected[:, -1]).tolist()
    return {"regrets": regrets, "cpu": time.process_time() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=50_000)
    parser.add_argument(
        "--cases",
        default="0,1,2",
        help="comma-separated case numbers (0: 15 arms rested, "
        "1: 2 arms rested, 2: 15 arms restless)",
    )
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        src, index, restless, agent, _ = args.worker
        worker(src, int(index), restless == "1", agent, args.horizon, args.seeds)
        return
    setup = subprocess.run(
        ["bash", str(HERE / "authors_env.sh"), "metelli"], capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    python, src = setup.stdout.strip().splitlines()[-2:]
    print(f"T = {args.horizon}, {args.seeds} replications; mean regret at T ± 95% t-interval\n")
    print(f"{'instance':20s} {'algorithm':22s} {'authors':>18s} {'ours (paper)':>18s} "
          f"{'ours (authors-code)':>20s}  CPU s (authors / ours)")  # fmt: skip
    for label in [list(CASES)[int(i)] for i in args.cases.split(",")]:
        index, restless = CASES[label]
        for agent, policy in zip(AUTHORS_AGENTS, ("rising", "sw-ucb", "r-exp3"), strict=True):
            run = subprocess.run(
                [python, __file__, "--seeds", str(args.seeds), "--horizon", str(args.horizon),
                 "--worker", src, str(index), "1" if restless else "0", agent, "-"],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            theirs = json.loads(run.stdout.strip().splitlines()[-1])
            paper = ours(label, policy, "paper", args.horizon, args.seeds)
            authors = ours(label, policy, "authors-code", args.horizon, args.seeds)
            print(
                f"{label:20s} {agent:22s} {mean_interval(theirs['regrets']):>18s} "
                f"{mean_interval(paper['regrets']):>18s} "
                f"{mean_interval(authors['regrets']):>20s}  "
                f"{theirs['cpu']:.1f} / {paper['cpu'] + authors['cpu']:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
