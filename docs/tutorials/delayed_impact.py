# %% [markdown]
# # Delayed impact with AD-UCB
#
# Tang et al.'s police example: patrolling a district lowers its crime rate, so today's
# allocation changes tomorrow's rewards. With γ = 0 the impact is immediate and AD-UCB learns
# the best fixed allocation on the ε-grid; we compare it with a learner that ignores the impact
# (EXP3 over the grid's vectors) against the exact best fixed policy.

# %%
import tempfile

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.spec import ExperimentSpec

spec = ExperimentSpec.create(
    name="delayed-impact",
    environments=[
        {"kind": "impact", "label": "3 districts", "high": [0.9, 0.8, 0.7],
         "low": [0.3, 0.4, 0.5], "resolution": 5}
    ],
    policies=[{"kind": "ad-ucb", "resolution": 5}, {"kind": "exp3-meta", "resolution": 5}],
    horizons=[500, 1000, 2000],
    seeds=3,
)
run_dir = tempfile.mkdtemp(prefix="impact-")
run_experiment(spec, run_dir, backend="serial")
table = tidy_table(run_dir)
table.groupby(["policy", "horizon"], observed=True)["regret"].mean().unstack()
