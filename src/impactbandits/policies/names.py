"""The registered policy names, and building a policy by name.

The name table of policies lives with the policies (the registry re-exports it as
:data:`impactbandits.registry.POLICIES`) because meta-policies —
:class:`~impactbandits.policies.impact.OneHot`,
:class:`~impactbandits.policies.opportunity.SelfRegulatedUtilityMaximization`,
:class:`~impactbandits.policies.opportunity.ConstantFairnessElimination` — build their inner
policy from its name, and a component imports nothing above its own layer (the layers of the
architecture page, https://impactbandits.readthedocs.io/en/latest/architecture/). The table is
plain constants (lazy import paths).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from impactbandits.construct import construct
from impactbandits.core.policy import BatchedSimplePolicy, Policy, SimplePolicy
from impactbandits.loader import Expected, load_kind, subclass_of

__all__ = ["EXPECTED", "POLICIES", "build_policy", "resolve_policy"]

# Lazy import paths, not imported classes: tests/test_layers.py enforces the layers.
POLICIES: Mapping[str, str] = {
    "ucb1": "impactbandits.policies.classic:UCB1",
    "moss": "impactbandits.policies.moss:MOSS",
    "kl-ucb": "impactbandits.policies.kl_ucb:KLUCB",
    "ucb-v": "impactbandits.policies.ucb_v:UCBV",
    "thompson": "impactbandits.policies.thompson:ThompsonSampling",
    "thompson-gaussian": "impactbandits.policies.thompson:GaussianThompsonSampling",
    "d-ts": "impactbandits.policies.thompson_nonstationary:DiscountedThompsonSampling",
    "sw-ts": "impactbandits.policies.thompson_nonstationary:SlidingWindowThompsonSampling",
    "sw-kl-ucb": "impactbandits.policies.kl_ucb_window:SlidingWindowKLUCB",
    "exp3": "impactbandits.policies.classic:EXP3",
    "greedy": "impactbandits.policies.classic:Greedy",
    "epsilon-greedy": "impactbandits.policies.classic:EpsilonGreedy",
    "etc": "impactbandits.policies.classic:ExploreThenCommit",
    "round-robin": "impactbandits.policies.classic:RoundRobin",
    "ucb": "impactbandits.policies.nonstationary:UCB",
    "d-ucb": "impactbandits.policies.nonstationary:DiscountedUCB",
    "sw-ucb": "impactbandits.policies.nonstationary:SlidingWindowUCB",
    "r-exp3": "impactbandits.policies.nonstationary:RExp3",
    "exp3s": "impactbandits.policies.exp3s:Exp3S",
    "cusum-ucb": "impactbandits.policies.cusum_ucb:CUSUMUCB",
    "m-ucb": "impactbandits.policies.m_ucb:MUCB",
    "glr-klucb": "impactbandits.policies.glr_klucb:GLRklUCB",
    "ser4": "impactbandits.policies.ser4:Ser4",
    "r-ed-ucb": "impactbandits.policies.rising:RedUCB",
    "r-less-ucb": "impactbandits.policies.rising:RlessUCB",
    "fewa": "impactbandits.policies.rotting:FEWA",
    "raw-ucb": "impactbandits.policies.rotting:RawUCB",
    "swa": "impactbandits.policies.rotting:SWA",
    "spo": "impactbandits.policies.spo:SPO",
    "spo-delta": "impactbandits.policies.spo:SPODelta",
    "one-step-optimistic": "impactbandits.policies.single_peaked:OneStepOptimistic",
    "last-reward-greedy": "impactbandits.policies.single_peaked:LastRewardGreedy",
    "hkr": "impactbandits.policies.improving:HKR",
    "patil": "impactbandits.policies.improving:PatilAnytime",
    "fa-etc": "impactbandits.policies.opportunity:FairnessAwareETC",
    "srum": "impactbandits.policies.opportunity:SelfRegulatedUtilityMaximization",
    "const-elimination": "impactbandits.policies.opportunity:ConstantFairnessElimination",
    "pi-low": "impactbandits.policies.delay:PiLow",
    "pi-ucb": "impactbandits.policies.delay:PiUCB",
    "ranker-low": "impactbandits.policies.delay_ranker:RankerThenLow",
    "ad-ucb": "impactbandits.policies.impact:ActionDependentUCB",
    "hd-ucb": "impactbandits.policies.impact:HistoryDependentUCB",
    "cucb": "impactbandits.policies.impact_baselines:CombinatorialUCB",
    "exp3-meta": "impactbandits.policies.impact_baselines:MetaEXP3",
    "one-hot": "impactbandits.policies.impact:OneHot",
    "ucb-greedy": "impactbandits.policies.blocking:UCBGreedy",
    "rebounding-lookahead": "impactbandits.policies.rebounding:ReboundingLookahead",
    "eep": "impactbandits.policies.rebounding:ExploreEstimatePlan",
    "rgp-ucb": "impactbandits.policies.recovering:RGPUCB",
    "rgp-ts": "impactbandits.policies.recovering:RGPTS",
}

#: What a policy's import path must name, checked before anything is called.
EXPECTED: Expected = subclass_of(Policy, SimplePolicy, wanted="a Policy or SimplePolicy class")


def resolve_policy(name: str, field: str) -> Any:
    """The policy class registered as ``name``, or loaded from an import path through the
    checked loader (:func:`impactbandits.loader.load_kind`)."""
    return load_kind(POLICIES, "policy", name, field, EXPECTED)


def build_policy(kind: str, params: Mapping[str, Any]) -> Policy:
    """A batched policy from validated parameters (single-replication ones are wrapped)."""
    cls = resolve_policy(kind, "kind")
    return typing.cast(
        Policy, construct(cls, kind, params, Policy, SimplePolicy, BatchedSimplePolicy)
    )
