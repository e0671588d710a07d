"""How tests/data/old_json_store was made, with the code before binary payloads (JSON text):

    python make_fixture.py OUT   # then copy OUT/results.sqlite and OUT/tidy*.csv here

The ``tidy*.parquet`` files are the same tables written with ``to_parquet`` by that code (they
keep the dtypes); tests/test_store_binary.py checks that newer readers give them unchanged.
"""

import sys
from pathlib import Path

from impactbandits import ExperimentSpec, run_experiment, tidy_table

out = Path(sys.argv[1])
spec = ExperimentSpec.create(
    name="old-json-store",
    environments=[
        {
            "kind": "opportunity",
            "label": "opp",
            "means": [0.2, 0.5, 0.9],
            "fairness": "linear",
            "transfer_cost": 0.6,
        },
        {
            "kind": "opportunity",
            "label": "opp-est",
            "means": [0.3, 0.8],
            "fairness": "uniform",
            "transfer_cost": 0.4,
            "penalty": "estimated",
            "oracle": "none",
        },
    ],
    policies=[{"kind": "srum"}, {"kind": "ucb1"}],
    horizons=[30, 80],
    seeds=3,
    checkpoints=4,
)
run_experiment(spec, out, backend="serial")
for traj in (False, True):
    t = tidy_table(out, trajectories=traj)
    t.to_csv(out / f"tidy{'_trajectories' if traj else ''}.csv", index=False, float_format="%.17g")
    print(t.shape, list(t.columns))
