"""``demo-stationary``: UCB1, EXP3, ETC and greedy on a 10-arm Bernoulli bandit.

Means 0.05, 0.15, …, 0.95 (gap 0.1 to the best arm). EXP3 and ETC use their horizon-tuned
parameters (Auer et al. 2002b, Cor. 3.2; gap-free ETC), so they run once per horizon; UCB1 and
greedy are anytime and run once to the largest horizon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.figures import Figure, quick_name
from impactbandits.experiments.papers.demo_claims import demo_claims

if TYPE_CHECKING:
    from impactbandits.experiments.spec import ExperimentSpec

MEANS = [round(0.05 + 0.1 * i, 2) for i in range(10)]


def build(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    return ExperimentSpec.create(
        name=quick_name("demo-stationary", quick),
        description="UCB1, EXP3, ETC and greedy on a 10-arm Bernoulli bandit (means 0.05…0.95).",
        environments=[{"kind": "bernoulli", "label": "bernoulli-10", "means": MEANS}],
        policies=[
            {"kind": "ucb1", "label": "UCB1"},
            {"kind": "exp3", "label": "EXP3"},
            {"kind": "etc", "label": "ETC"},
            {"kind": "greedy", "label": "greedy"},
        ],
        horizons={
            "start": 100,
            "stop": 10_000 if quick else 100_000,
            "num": 8 if quick else 16,
            "spacing": "log",
        },
        seeds=20 if quick else 50,
    )


FIGURE = Figure(
    name="demo-stationary",
    title="Stationary 10-arm Bernoulli: UCB1 vs EXP3 vs ETC vs greedy",
    source="library demo (Auer et al. 2002; Auer et al. 2002b)",
    build=build,
    claims=demo_claims(MEANS),
)
