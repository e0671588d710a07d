"""How tests/data/format1_store was made: the library at commit baed0ba (store format 1, common
noise from per-(replication, arm) PCG64 blocks), on PYTHONPATH:

    PYTHONPATH=<checkout of baed0ba>/src python make.py OUT
"""

import sys

from impactbandits import ExperimentSpec, run_experiment

spec = ExperimentSpec.create(
    name="format-1",
    environments=[{"kind": "bernoulli", "means": [0.3, 0.7]}],
    policies=[{"kind": "ucb1"}],
    horizons=[50],
    seeds=2,
    checkpoints=5,
)
run_experiment(spec, sys.argv[1], backend="serial")
