"""Planning a sweep on several workers ends for every number of seeds, and its tasks cover
each missing seed exactly once. (Four seeds of one cell on two workers used to loop forever:
after two pieces of two, asking for three pieces gave two again, and the next try asked for
three once more, so `impactbandits run` of such a spec hung on a 2-core machine.)"""

from __future__ import annotations

import pytest

from impactbandits.experiments.cells import expand
from impactbandits.experiments.runner import plan
from impactbandits.experiments.spec import ExperimentSpec


@pytest.mark.timeout(60)
@pytest.mark.parametrize("workers", [2, 3, 4, 7])
def test_every_seed_count_is_planned_once_on_several_workers(workers):
    spec = ExperimentSpec.create(
        name="plan",
        horizons=[50],
        seeds=1,
        environments=[{"kind": "bernoulli", "means": [0.2, 0.8]}],
        policies=[{"kind": "ucb1"}, {"kind": "exp3"}],
    )
    cells = expand(spec)
    for seeds in range(1, 41):
        for missing in ([list(range(seeds))] * len(cells), [list(range(seeds)), []]):
            tasks = plan(cells, missing, workers)
            for cell, wanted in zip(cells, missing, strict=True):
                got = sorted(s for t in tasks if t.cell == cell for s in t.replications)
                assert got == wanted, (workers, seeds, cell.policy_field)
