"""A library policy played through the Gymnasium interface gets the native runner's numbers.

    .venv/bin/python examples/gym_policy.py

Lindner et al.'s single-peaked instance 1 with Gaussian noise (σ = 0.05), horizon 1,000, root
seed 7, three replications, two policies (UCB1, and SPO with the noise bound 2σ). Once through
``impactbandits.gym`` — ``reset(seed=7)`` then ``reset()`` for the next replications, the policy
acting on observations (:class:`~impactbandits.gym.LibraryAgent`) — and once through the
experiment runner (``run_experiment`` on the same spec, results read back with ``tidy_table``).
Rewards, expected rewards and regrets agree to the last bit.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.experiments.runner import run_experiment
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.tidy import tidy_table
from impactbandits.gym import LibraryAgent, make

SEED, SEEDS, HORIZON = 7, 3, 1000
ENVIRONMENT: dict[str, Any] = {
    "kind": "single-peaked",
    "instance": 1,
    "noise": "gaussian",
    "sigma": 0.05,
}
POLICIES: list[dict[str, Any]] = [{"kind": "ucb1"}, {"kind": "spo", "noise_bound": 0.1}]


def through_gymnasium(policy: dict[str, Any]) -> list[tuple[float, float, float]]:
    """(reward, expected reward, regret) of each replication, played through Gymnasium."""
    env = make(horizon=HORIZON, **ENVIRONMENT)
    agent = LibraryAgent(env, policy)
    rows = []
    for replication in range(SEEDS):
        # the first episode is replication 0 of the root seed; reset() moves to the next one
        observation, info = env.reset(seed=SEED) if replication == 0 else env.reset()
        assert info["replication"] == replication
        agent.reset()
        reward = expected = 0.0
        truncated = False
        while not truncated:
            observation, r, _, truncated, info = env.step(agent.act())
            agent.observe(observation)
            reward += float(r)
            expected += info["expected_reward"]
        regret = float(env.optimum(HORIZON)[0]) - expected
        rows.append((reward, expected, regret))
    return rows


def natively() -> dict[str, list[tuple[float, float, float]]]:
    """The same runs by the experiment runner: policy label → rows per replication."""
    spec = ExperimentSpec.create(
        name="gym-example",
        environments=[ENVIRONMENT],
        policies=POLICIES,
        horizons=[HORIZON],
        seeds=SEEDS,
        seed=SEED,
    )
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_experiment(spec, run_dir, backend="serial")
        table = tidy_table(run_dir)
    table = table[table["time"] == HORIZON].sort_values(["policy", "seed"])
    return {
        str(label): [
            (float(row.reward), float(row.expected_reward), float(row.regret))
            for row in group.itertuples()
        ]
        for label, group in table.groupby("policy", observed=True)
    }


def main() -> int:
    native = natively()
    identical = True
    for policy in POLICIES:
        label = str(policy["kind"])
        gym_rows = through_gymnasium(policy)
        print(f"{label}:")
        for replication, (mine, theirs) in enumerate(zip(gym_rows, native[label], strict=True)):
            print(f"  replication {replication}")
            print("    Gymnasium: reward {:.6f}  expected {:.6f}  regret {:.6f}".format(*mine))
            print("    runner:    reward {:.6f}  expected {:.6f}  regret {:.6f}".format(*theirs))
            identical &= bool(np.array_equal(mine, theirs))
    print("identical" if identical else "DIFFERENT")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
