# %% [markdown]
# # Your own policy against SPO on your own curves
#
# Two rested arms: one peaks early, one blooms late. A policy that only looks at recent rewards
# abandons the late bloomer; SPO's single-peaked optimism does not. We write a policy, check it
# against the library's contract, and compare it with SPO on the same luck (common random
# numbers) and against the exact optimum.

# %%
import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
from impactbandits.core.policy import Policy
from impactbandits.envs.rested import RestedBandit
from impactbandits.oracles.rested import optimal_allocation_oracle
from impactbandits.policies.spo import SPODelta
from impactbandits.testing import check_policy

T = 2000
m = np.arange(1, T + 1)
curves = np.stack([0.85 * (1 - np.exp(-m / 500)), 0.55 * np.exp(-(((m - 60) / 150) ** 2)) + 0.3])


class RecentGreedy(Policy):
    """The best average of each arm's last 20 rewards (every arm tried 20 times first)."""

    deterministic = True

    def reset(self, space, horizon, rng):
        self.last = np.zeros((rng.size, space.n, 20))
        self.counts = np.zeros((rng.size, space.n), dtype=int)
        self.rows = np.arange(rng.size)

    def select(self):
        short = self.counts < 20
        return np.where(short.any(axis=1), np.argmax(short, axis=1),
                        np.argmax(self.last.mean(axis=2), axis=1))

    def update(self, actions, feedback):
        slot = self.counts[self.rows, actions] % 20
        self.last[self.rows, actions, slot] = feedback.reward
        self.counts[self.rows, actions] += 1


def environment():
    return RestedBandit(curves.tolist(), noise="gaussian", sigma=0.05)


check_policy(RecentGreedy, env_factory=environment)

# %%
reps = range(10)
times = np.array([200, 500, 1000, 2000])
results = {}
for name, policy in [("recent greedy", RecentGreedy()), ("SPO-δ", SPODelta(sigma=0.05))]:
    run = simulate(environment(), policy, T, T if policy.requires_horizon else None, times,
                   EnvironmentRandom(1, 0, reps), BatchRNG.from_key(1, (2,), reps))
    results[name] = run
env = environment()
env.reset(EnvironmentRandom(1, 0, reps))
optimum = optimal_allocation_oracle(env, times)
for name, run in results.items():
    regret = (optimum - run.expected).mean(axis=0)
    print(f"{name:14s}", "  ".join(f"T={t}: {r:7.1f}" for t, r in zip(times, regret)))
