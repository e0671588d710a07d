"""leqi-rebounding runs at quick scale and its claims are checked there; each claim check can
fail: each runs on small tables built by hand, once where the paper's claim holds and once
where it does not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.claims import Verdict
from impactbandits.experiments.figures import get_figure
from impactbandits.experiments.papers.leqi_claims import (
    BASELINES,
    CLAIMS,
    DIFFERENT,
    DIFFERENT_ENV,
    EEP,
    GREEDY,
    IDENTICAL,
    IDENTICAL_ENV,
    LOOKAHEADS,
    NOISY_ENV,
    SMALL_T,
)
from impactbandits.oracles.rebounding import optimal_values

GREEDY_OPTIMAL, LOOKAHEAD_HELPS, SUBLINEAR, CLASSICAL_LINEAR = CLAIMS
HORIZONS = (SMALL_T, 100, 1000)
POLICIES = (GREEDY, *LOOKAHEADS.values(), EEP, *BASELINES)
#: greedy's exact value on the identical arms at T = SMALL_T (the optimum, by the paper's
#: theorem: checked against brute force in tests/test_rebounding.py)
OPTIMUM = float(optimal_values(**IDENTICAL, horizons=[SMALL_T])[0])


def _table(regret=None, reward=None) -> pd.DataFrame:
    """The end of every run, three seeds: ``regret(env, policy, T)`` (default: 0) and
    ``reward(env, policy, T)`` (default: 2 T, and greedy's exact value at T = SMALL_T on the
    identical arms)."""

    def default_reward(env, policy, t):
        return OPTIMUM if (env, policy, t) == (IDENTICAL_ENV, GREEDY, SMALL_T) else 2.0 * t

    regret = regret or (lambda env, policy, t: 0.0)
    reward = reward or default_reward
    rows = []
    for env in (IDENTICAL_ENV, DIFFERENT_ENV, NOISY_ENV):
        for policy in POLICIES:
            for t in HORIZONS:
                for seed in range(3):
                    r = regret(env, policy, t) * (1 + 0.01 * (seed - 1))
                    value = reward(env, policy, t)
                    rows.append((env, policy, t, t, seed, r, value, value + r))
    columns = [
        "environment", "policy", "horizon", "time", "seed", "regret", "expected_reward", "optimum"
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def test_the_different_arms_are_the_stated_draw():
    rng = np.random.default_rng(0)
    drawn = [rng.uniform(lo, hi, 5) for lo, hi in ((1, 4), (0.2, 0.9), (0.2, 2))]
    for key, values in zip(("base", "retention", "influence"), drawn, strict=True):
        assert DIFFERENT[key] == np.round(values, 2).tolist()


def test_greedy_optimality_reads_the_exact_optimum_and_every_policy():
    assert GREEDY_OPTIMAL.check(_table()).passed
    short = _table(
        reward=lambda env, policy, t: OPTIMUM - 0.01 if policy == GREEDY else 2.0 * t
    )  # greedy below the exact optimum at T = SMALL_T
    verdict = GREEDY_OPTIMAL.check(short)
    assert not verdict.passed and "exact optimum" in verdict.measured
    beaten = _table(
        regret=lambda env, policy, t: -1.0 if policy == LOOKAHEADS[3] and t == 1000 else 0.0
    )  # a planner above greedy on the identical arms at T = 1000
    verdict = GREEDY_OPTIMAL.check(beaten)
    assert not verdict.passed and "above greedy" in verdict.measured


def test_lookahead_must_beat_greedy_on_the_different_arms():
    def reward(gain):
        return lambda env, policy, t: 2.0 * t + (gain if policy == LOOKAHEADS[3] else 0.0)

    assert LOOKAHEAD_HELPS.check(_table(reward=reward(5.0))).passed
    assert not LOOKAHEAD_HELPS.check(_table(reward=reward(0.0))).passed
    assert not LOOKAHEAD_HELPS.check(_table(reward=reward(-5.0))).passed


def test_sublinear_regret_passes_and_linear_regret_fails():
    def eep(growth):
        return lambda env, policy, t: growth(t) if policy == EEP else 0.0

    assert SUBLINEAR.check(_table(regret=eep(lambda t: 3.0 * t ** (2 / 3)))).passed
    assert SUBLINEAR.check(_table(regret=eep(lambda t: -1.0))).passed  # ahead of the plan
    assert not SUBLINEAR.check(_table(regret=eep(lambda t: 0.2 * t))).passed
    assert not SUBLINEAR.check(_table(regret=eep(lambda t: 0.5 * t**0.9))).passed


def test_classical_baselines_must_grow_linearly():
    def baselines(growth):
        return lambda env, policy, t: growth(t) if policy in BASELINES else 0.0

    assert CLASSICAL_LINEAR.check(_table(regret=baselines(lambda t: 0.2 * t))).passed
    verdict = CLASSICAL_LINEAR.check(_table(regret=baselines(lambda t: 3.0 * t ** (2 / 3))))
    assert not verdict.passed and "exponent 0.667" in verdict.measured
    assert not CLASSICAL_LINEAR.check(_table(regret=baselines(lambda t: 0.0))).passed


def test_the_figure_at_quick_scale_and_its_claims(tmp_path):
    figure = get_figure("leqi-rebounding")
    spec = figure.build(True)
    assert {env.label for env in spec.environments} == {IDENTICAL_ENV, DIFFERENT_ENV, NOISY_ENV}
    assert {p.label for p in spec.policies} == set(POLICIES)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert table["regret"].notna().all()
    verdicts = [claim.check(table) for claim in figure.claims]
    assert all(isinstance(v, Verdict) and v.measured.strip() for v in verdicts)
    # the planning claims are exact (no noise) and hold at any scale; the growth claims read
    # a decade of horizons (100 to 1000 here)
    assert verdicts[0].passed and verdicts[1].passed
    assert verdicts[3].passed
    pngs = figure.render(tmp_path)
    assert len(pngs) == 3 and all(p.stat().st_size > 5000 for p in pngs)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.text[:30])
def test_every_claim_is_checkable(claim):
    assert claim.check is not None and not claim.unavailable
