# %% [markdown]
# # Reproduce a figure and read the table
#
# Lindner et al.'s Figure 1: on a single-peaked instance, SPO's per-step policy regret vanishes
# while greedy, UCB-style and EXP3-style baselines keep paying. We run the figure at its quick
# scale, then read the tidy table the way a paper's plots are made.

# %%
import tempfile

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.figures import get_figure

figure = get_figure("lindner-fig1")
spec = figure.spec(quick=True)
run_dir = tempfile.mkdtemp(prefix="fig1-")
summary = run_experiment(spec, run_dir, backend="serial")
print(summary.computed, "results in", run_dir)

# %% [markdown]
# One row per environment, policy, horizon and seed. `optimum` is the exact optimal allocation
# OPT(T); `regret` is OPT(T) minus the policy's expected cumulative reward.

# %%
table = tidy_table(run_dir)
table[["policy", "horizon", "seed", "expected_reward", "optimum", "regret"]].head()

# %% [markdown]
# Mean per-step regret at the longest horizon, best first:

# %%
longest = table[table["horizon"] == table["horizon"].max()]
longest.groupby("policy", observed=True)["per_step_regret"].mean().sort_values()

# %% [markdown]
# And the paper's panels, drawn by the figure's renderer:

# %%
from IPython.display import Image, display

for path in figure.render(run_dir):
    display(Image(filename=str(path)))
