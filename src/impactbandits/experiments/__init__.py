"""Experiments: specs, cells, the runner, the store, tidy tables, plots, reports, figures."""

from impactbandits.experiments.figures import FIGURES, Figure, get_figure
from impactbandits.experiments.runner import Interrupted, RunSummary, run_experiment
from impactbandits.experiments.spec import ComponentSpec, ExperimentSpec, load_spec
from impactbandits.experiments.tidy import tidy_table

__all__ = [
    "FIGURES",
    "ComponentSpec",
    "ExperimentSpec",
    "Figure",
    "Interrupted",
    "RunSummary",
    "get_figure",
    "load_spec",
    "run_experiment",
    "tidy_table",
]
