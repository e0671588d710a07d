"""impactbandits: bandits in which the learner's own past actions change future rewards.

Quick use::

    from impactbandits import ExperimentSpec, run_experiment, tidy_table
    spec = ExperimentSpec.create(
        name="two-arms",
        environments=[{"kind": "bernoulli", "means": [0.3, 0.7]}],
        policies=[{"kind": "ucb1"}, {"kind": "exp3", "gamma": 0.01}],
        horizons=[1000, 10000],
        seeds=20,
    )
    summary = run_experiment(spec, "runs/two-arms", backend="serial")
    table = tidy_table(summary.run_dir)
"""

from impactbandits.core import (
    ActionSpace,
    BatchRNG,
    Discrete,
    Environment,
    EnvironmentRandom,
    Feedback,
    Outcome,
    Policy,
    SimpleEnvironment,
    SimplePolicy,
    Simplex,
    simulate,
)
from impactbandits.errors import ImpactBanditsError, SpecError, StoreError
from impactbandits.experiments import (
    ExperimentSpec,
    Interrupted,
    get_figure,
    load_spec,
    run_experiment,
    tidy_table,
)

__version__ = "0.1.0"

__all__ = [
    "ActionSpace",
    "BatchRNG",
    "Discrete",
    "Environment",
    "EnvironmentRandom",
    "ExperimentSpec",
    "Feedback",
    "ImpactBanditsError",
    "Interrupted",
    "Outcome",
    "Policy",
    "SimpleEnvironment",
    "SimplePolicy",
    "Simplex",
    "SpecError",
    "StoreError",
    "__version__",
    "get_figure",
    "load_spec",
    "run_experiment",
    "simulate",
    "tidy_table",
]
