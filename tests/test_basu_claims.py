"""basu-blocking's claim checks can fail: each runs on small tables built by hand, once where
the paper's claim holds and once where it does not."""

from __future__ import annotations

import math

import pandas as pd

from impactbandits.experiments.papers.basu_claims import AGAINST_GREEDY, CLAIMS, SMALL_OPTIMUM

LOG, RATIO = CLAIMS
OPTIMUM_ENV = SMALL_OPTIMUM


def _table(regret, greedy_value: float = 75.0, optimum_value: float = 95.0) -> pd.DataFrame:
    """UCB Greedy's regret ``regret(t)`` at T/10 = 100 and T = 1000 (three seeds, a small
    spread) on every environment against greedy; the optimum columns of the two 3-arm
    environments."""
    rows = []
    for env in (*AGAINST_GREEDY, OPTIMUM_ENV):
        for t in (100, 1000):
            for seed in range(3):
                optimum = optimum_value if env == OPTIMUM_ENV else greedy_value
                value = regret(t) * (1 + 0.01 * (seed - 1))
                rows.append((env, "UCB Greedy", t, t, seed, value, optimum))
    columns = ["environment", "policy", "horizon", "time", "seed", "regret", "optimum"]
    return pd.DataFrame(rows, columns=columns)


def test_logarithmic_regret_passes_and_linear_or_square_root_regret_fails():
    assert LOG.check(_table(lambda t: 5.0 * math.log(t))).passed
    assert LOG.check(_table(lambda t: -2.0)).passed  # below greedy throughout
    assert not LOG.check(_table(lambda t: 0.05 * t)).passed
    assert not LOG.check(_table(lambda t: 3.0 * math.sqrt(t))).passed


def test_the_greedy_ratio_is_read_from_the_two_optimum_columns():
    assert RATIO.check(_table(lambda t: 1.0, greedy_value=75.0, optimum_value=95.0)).passed
    failing = RATIO.check(_table(lambda t: 1.0, greedy_value=50.0, optimum_value=95.0))
    assert not failing.passed and "0.526" in failing.measured
