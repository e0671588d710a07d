"""pikeburke-recovering: its claim checks can fail (small tables built by hand, once where
the claim holds and once where it does not), and the figure runs at --quick scale."""

from __future__ import annotations

import math

import pandas as pd

from impactbandits import run_experiment
from impactbandits.experiments.figures import get_figure
from impactbandits.experiments.papers.pikeburke_claims import (
    CLAIMS,
    LENGTHSCALES,
    LOOKAHEADS,
    METRIC,
    env_label,
    learner,
)
from impactbandits.experiments.tidy import tidy_table

BEATS, SUBLINEAR = CLAIMS


def _table(regret) -> pd.DataFrame:
    """``regret(policy, t)`` at T = 500 and 1000, three seeds with a small spread."""
    rows = []
    for d in LOOKAHEADS:
        names = [learner("rgp-ucb", d), learner("rgp-ts", d)] + (["UCB1"] if d == 1 else [])
        for scale in LENGTHSCALES:
            for name in names:
                for t in (500, 1000):
                    for seed in range(3):
                        value = regret(name, t) * (1 + 0.01 * (seed - 1))
                        rows.append((env_label(scale, d), name, t, t, seed, value))
    columns = ["environment", "policy", "horizon", "time", "seed", METRIC]
    return pd.DataFrame(rows, columns=columns)


def test_planning_learners_below_ucb1_pass_and_above_fail():
    def good(name, t):
        return 40.0 * math.sqrt(t) if name == "UCB1" else 4.0 * math.sqrt(t)

    assert BEATS.check(_table(good)).passed
    bad = BEATS.check(_table(lambda name, t: 2.0 * t if name != "UCB1" else 1.0 * t))
    assert not bad.passed and "1RGP-UCB minus UCB1" in bad.measured


def test_sublinear_growth_passes_and_linear_growth_fails():
    assert SUBLINEAR.check(_table(lambda name, t: 5.0 * math.sqrt(t))).passed
    linear = SUBLINEAR.check(_table(lambda name, t: 0.3 * t))
    assert not linear.passed and "1" in linear.measured


def test_the_figure_runs_at_quick_scale_and_its_claims_evaluate(tmp_path):
    figure = get_figure("pikeburke-recovering")
    spec = figure.spec(quick=True)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert set(table["environment"]) == {env_label(s, d) for s in LENGTHSCALES for d in LOOKAHEADS}
    assert table[METRIC].notna().all()
    for claim in CLAIMS:
        verdict = claim.check(table)
        assert verdict.measured.strip()
    pngs = figure.render(tmp_path)
    assert len(pngs) == len(LENGTHSCALES) and all(p.stat().st_size > 5000 for p in pngs)
