"""The benchmark's definition (issue 30, item 5): every setting, every applicable algorithm,
an oracle per setting; ``rested-benchmark`` is its view on the rested families."""

from __future__ import annotations

from impactbandits.experiments.cells import expand
from impactbandits.experiments.figures import get_figure
from impactbandits.experiments.leaderboard import family_of
from impactbandits.experiments.papers import benchmark

#: The settings the issue names (the rested families stand for "single-peaked/increasing",
#: "rising" and "rotting").
NAMED = {
    "stationary",
    "single-peaked",
    "increasing",
    "improving",
    "rising",
    "rotting",
    "delay-dependent",
    "blocking",
    "rebounding",
    "recovering",
    "delayed impact",
    "reward-opportunity",
}


def test_every_named_setting_is_there_with_an_oracle_description():
    spec = benchmark.spec(quick=True)
    families = {family_of(e.label) for e in spec.environments}
    assert families >= NAMED
    assert families <= set(benchmark.ORACLES)
    for env in spec.environments:
        assert env.oracle is not None, env.label  # policy regret everywhere


def test_every_setting_has_its_own_algorithms_and_the_baselines():
    spec = benchmark.spec(quick=True)
    per_family: dict[str, set[str]] = {}
    for policy in spec.policies:
        assert policy.environments, policy.label
        for label in policy.environments:
            per_family.setdefault(family_of(label), set()).add(policy.label)
    baselines = {b["label"] for b in benchmark.BASELINES}
    for family, labels in per_family.items():
        if family == "delayed impact":  # simplex actions: only allocation learners
            assert not labels & baselines and "HD-UCB" in labels
        else:
            assert baselines <= labels, family
        if family != "stationary":
            assert labels - baselines, f"{family}: no algorithm made for it"


def test_a_policy_covers_whole_settings():
    """A policy runs on all or none of a setting's environments (else it has no entry)."""
    spec = benchmark.spec(quick=True)
    by_family: dict[str, set[str]] = {}
    for env in spec.environments:
        by_family.setdefault(family_of(env.label), set()).add(env.label)
    for policy in spec.policies:
        mine = set(policy.environments or ())
        for family, labels in by_family.items():
            assert not (mine & labels) or labels <= mine, (policy.label, family)


def test_the_quick_benchmark_expands():
    assert len(expand(benchmark.spec(quick=True))) > 100


def test_rested_benchmark_is_the_view_on_the_rested_families():
    whole = benchmark.spec(quick=False)
    view = get_figure("rested-benchmark").spec(quick=False)
    rested = [e for e in whole.environments if family_of(e.label) in benchmark.RESTED]
    assert [(e.label, e.content()) for e in view.environments] == [
        (e.label, e.content()) for e in rested
    ]
    labels = {e.label for e in rested}
    whole_policies = {
        (p.label, str(p.content()), tuple(sorted(set(p.environments or ()) & labels)))
        for p in whole.policies
        if set(p.environments or ()) & labels
    }
    view_policies = {
        (p.label, str(p.content()), tuple(sorted(p.environments or ()))) for p in view.policies
    }
    assert view_policies == whole_policies
    assert view.horizons == whole.horizons and view.seeds == whole.seeds


def test_every_registered_policy_runs_or_says_why_not():
    from impactbandits.policies.names import POLICIES

    spec = benchmark.spec(quick=True)
    run = {p.kind for p in spec.policies}
    run |= {p.params["base"] for p in spec.policies if p.kind == "one-hot"}
    assert set(POLICIES) - run == set(benchmark.LEFT_OUT)
    assert all(reason.strip() for reason in benchmark.LEFT_OUT.values())
