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

Names are imported on first use, so simulation workers never load pandas or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The library's version, written only here: the build reads it from this line (pyproject.toml,
#: ``[tool.setuptools.dynamic]``) into the package metadata, so ``impactbandits --version`` and
#: ``importlib.metadata.version("impactbandits")`` agree with it.
__version__ = "0.1.0"

_EXPORTS = {
    "ActionSpace": "impactbandits.core.spaces",
    "Discrete": "impactbandits.core.spaces",
    "Simplex": "impactbandits.core.spaces",
    "BatchRNG": "impactbandits.core.random",
    "Environment": "impactbandits.core.environment",
    "EnvironmentRandom": "impactbandits.core.environment",
    "SimpleEnvironment": "impactbandits.core.environment",
    "Feedback": "impactbandits.core.feedback",
    "Outcome": "impactbandits.core.feedback",
    "Policy": "impactbandits.core.policy",
    "SimplePolicy": "impactbandits.core.policy",
    "simulate": "impactbandits.kernels.dispatch",
    "CompiledStep": "impactbandits.core.compiled",
    "CompiledWorld": "impactbandits.core.world",
    "kernel": "impactbandits.core.compiled",
    "ImpactBanditsError": "impactbandits.errors",
    "SpecError": "impactbandits.errors",
    "StoreError": "impactbandits.errors",
    "ExperimentSpec": "impactbandits.experiments.spec",
    "load_spec": "impactbandits.experiments.spec",
    "Interrupted": "impactbandits.experiments.runner",
    "run_experiment": "impactbandits.experiments.runner",
    "get_figure": "impactbandits.experiments.figures",
    "tidy_table": "impactbandits.experiments.tidy",
}

__all__ = [
    "ActionSpace",
    "BatchRNG",
    "CompiledStep",
    "CompiledWorld",
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
    "kernel",
    "load_spec",
    "run_experiment",
    "simulate",
    "tidy_table",
]

if TYPE_CHECKING:  # pragma: no cover
    from impactbandits.core.compiled import CompiledStep, kernel
    from impactbandits.core.environment import Environment, EnvironmentRandom, SimpleEnvironment
    from impactbandits.core.feedback import Feedback, Outcome
    from impactbandits.core.policy import Policy, SimplePolicy
    from impactbandits.core.random import BatchRNG
    from impactbandits.core.spaces import ActionSpace, Discrete, Simplex
    from impactbandits.core.world import CompiledWorld
    from impactbandits.errors import ImpactBanditsError, SpecError, StoreError
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.runner import Interrupted, run_experiment
    from impactbandits.experiments.spec import ExperimentSpec, load_spec
    from impactbandits.experiments.tidy import tidy_table
    from impactbandits.kernels.dispatch import simulate


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'impactbandits' has no attribute {name!r}")
