# %% [markdown]
# # The fairness trade-off on a reward-opportunity bandit
#
# Ron et al.'s R-O MAB: arms must get at least a fairness share f(μ)_i of the rounds, or pay a
# transfer cost λ per missing round. As λ grows, SRUM gives up reward to meet the shares; the
# exact optimum of the utility says how much is necessary.

# %%
import tempfile

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.spec import ExperimentSpec

means = [0.2, 0.35, 0.5, 0.65, 0.8, 0.95]
environments = [
    {"kind": "opportunity", "label": f"λ = {lam}", "means": means, "fairness": "softmax",
     "transfer_cost": lam}
    for lam in (0.0, 0.4, 0.8)
]
spec = ExperimentSpec.create(
    name="fairness-tradeoff",
    environments=environments,
    policies=[{"kind": "srum"}, {"kind": "ucb1"}],
    horizons=[2000],
    seeds=3,
)
run_dir = tempfile.mkdtemp(prefix="fairness-")
run_experiment(spec, run_dir, backend="serial")
table = tidy_table(run_dir)

# %% [markdown]
# Utility regret against the exact optimum, and the share of rounds each policy gave the worst
# arm (pulls of arm 0 / T), per transfer cost:

# %%
table["share_arm_0"] = table["pulls_0"] / table["horizon"]
table.groupby(["environment", "policy"], observed=True)[["regret", "share_arm_0"]].mean()
