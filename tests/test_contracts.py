"""Every registered environment and policy passes the same contract checks."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.core.spaces import Discrete
from impactbandits.envs import BernoulliBandit, GaussianBandit
from impactbandits.envs.blocking import BlockingBandit
from impactbandits.envs.delay import DelayedPayoffBandit
from impactbandits.envs.impact import ImpactBandit
from impactbandits.envs.opportunity import OpportunityBandit
from impactbandits.envs.piecewise import PiecewiseStationaryBandit
from impactbandits.envs.rebounding import ReboundingBandit
from impactbandits.envs.recovering import RecoveringBandit
from impactbandits.envs.rested import RestedBandit
from impactbandits.envs.rested_families import (
    ConstantBandit,
    DecreasingBandit,
    FicoBandit,
    ImprovingBandit,
    IncreasingBandit,
    RecommenderBandit,
    SinglePeakedBandit,
)
from impactbandits.envs.restless import RestlessBandit
from impactbandits.envs.rising import RestlessRisingBandit, RisingBandit
from impactbandits.envs.rotting import RottingBandit
from impactbandits.registry import ENVIRONMENTS, POLICIES, resolve
from impactbandits.testing import check_environment, check_policy

#: Parameters that make each policy's run non-trivial; absent: the defaults.
POLICY_PARAMS = {
    "exp3": [{}, {"gamma": 0.1}],
    "d-ts": [{}, {"discount": 0.8, "prior_alpha": 0.5, "prior_beta": 2.0, "update": "fractional"}],
    "sw-ts": [{}, {"window": 7, "update": "fractional"}],
    "sw-kl-ucb": [{}, {"window": 9, "c": 3.0}],
    "cusum-ucb": [{}, {"alpha": 0.1, "threshold": 5.0, "warmup": 20, "drift": 0.1}],
    "m-ucb": [{}, {"window": 20, "threshold": 3.0, "gamma": 0.1}],
    "glr-klucb": [
        {},
        {
            "restart": "global",
            "threshold": "theory",
            "exploration": "fixed",
            "alpha": 0.1,
            "delta": 0.05,
            "c": 3.0,
            "test_every": 2,
            "split_every": 2,
        },
    ],
    "exp3s": [{}, {"gamma": 0.1, "alpha": 0.001}, {"hardness": 3}],
    "ser4": [{}, {"delta": 0.05, "epsilon": 0.01, "phi": 0.01}],
    "ucb-v": [{}, {"zeta": 1.0, "c": 0.5, "b": 2.0}],
    "kl-ucb": [{}, {"level": "kl-ucb+", "c": 1.0}, {"divergence": "gaussian"}],
    "thompson": [{}, {"update": "fractional", "prior_alpha": 0.5, "prior_beta": 2.0}],
    "thompson-gaussian": [{}, {"sigma": 0.3}],
    "etc": [{}, {"m": 3}],
    "epsilon-greedy": [{}, {"c": 1.0, "d": 0.2}],
    "spo": [{}, {"noise_bound": 0.1}],
    "spo-delta": [{"sigma": 0.05}],
    "one-step-optimistic": [{}, {"noise_bound": 0.1}],
    "d-ucb": [{}, {"discount": 0.9}],
    "sw-ucb": [{}, {"window": 7}],
    "srum": [
        {},
        {"black_box": "exp3", "black_box_params": {"gamma": 0.1}},
        {"alpha_rule": "authors-code"},
    ],
    "fa-etc": [{}, {"exploration": 5}],
    "ad-ucb": [{}, {"resolution": 5}],
    "hd-ucb": [{}, {"resolution": 4, "eta": 0.3}],
    "cucb": [{"resolution": 4}],
    "one-hot": [{}, {"base": "exp3", "base_params": {"gamma": 0.1}}],
    "r-ed-ucb": [{}, {"variant": "authors-code"}, {"epsilon": 0.5, "alpha": 2.0}],
    "r-less-ucb": [{}, {"variant": "authors-code"}],
    "fewa": [{}, {"grid": 1.0, "alpha": 4.0}],
    "raw-ucb": [{}, {"grid": 1.0}],
    "swa": [{}, {"doubling": True}, {"window": 3}],
}
ENV_FACTORIES = {
    "bernoulli": lambda: BernoulliBandit([0.1, 0.9, 0.5]),
    "gaussian": lambda: GaussianBandit(n_arms=4, sigma=0.3),
    "rested": lambda: RestedBandit([[0.1, 0.5, 0.9] * 100, [0.4] * 300], noise="beta", sigma=0.1),
    "single-peaked": lambda: SinglePeakedBandit(instance=1, noise="gaussian", sigma=0.05),
    "increasing": lambda: IncreasingBandit("inc_2", 0.4, noise="gaussian", sigma=0.1),
    "constant": lambda: ConstantBandit([0.2, 0.6], length=1000),
    "decreasing": lambda: DecreasingBandit([0.9, 0.7], [0.1, 0.5], [0.01, 0.001], length=1000),
    "fico": lambda: FicoBandit(length=500, noise="gaussian", sigma=0.05),
    "recommender": lambda: RecommenderBandit("B", length=500, noise="gaussian", sigma=0.05),
    "imab": lambda: ImprovingBandit("random", k=4, length=600, noise="gaussian", sigma=0.05),
    "opportunity": lambda: OpportunityBandit([0.2, 0.5, 0.8], "softmax", 0.4),
    "impact": lambda: ImpactBandit([0.9, 0.8, 0.7], [0.3, 0.4, 0.5], gamma=0.3),
    "restless": lambda: RestlessBandit(
        [[0.1, 0.5, 0.9] * 100, [0.4] * 300], noise="gaussian", sigma=0.1
    ),
    "rising": lambda: RisingBandit("random", length=500, seed=3, scale=400),
    "rotting": lambda: RottingBandit("ten-arms", length=1500),
    "piecewise": lambda: PiecewiseStationaryBandit(
        [[0.3, 0.5, 0.9], [0.3, 0.2, 0.9], [0.7, 0.2, 0.1]], [0, 100, 250], length=1000
    ),
    "rising-restless": lambda: RestlessRisingBandit("2-arms", length=500, variant="authors-code"),
    "delayed": lambda: DelayedPayoffBandit(
        [0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9], delay_range=[1, 3], decay=0.9, switching_cost=1.0
    ),
    "blocking": lambda: BlockingBandit([0.3, 0.7, 0.5], [2, 1, 3]),
    "rebounding": lambda: ReboundingBandit(
        [1.0, 0.8, 0.6],
        [0.5, 0.7, 0.3],
        [0.4, 0.2, 0.5],
        sigma_z=0.05,
        sigma=0.1,
        reveal_parameters=True,
    ),
    "recovering": lambda: RecoveringBandit(n_arms=3, z_max=6, lengthscale=2.0, lookahead=2),
}


def test_every_registered_environment_has_a_factory_here():
    assert set(ENV_FACTORIES) == set(ENVIRONMENTS)


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_environment_contract(name):
    check_environment(ENV_FACTORIES[name])


#: Policies that need a particular kind of environment (what their paper's learner is told).
POLICY_ENVS = {
    "fa-etc": ["opportunity"],
    "srum": ["opportunity"],
    "const-elimination": [],
    "pi-low": ["delayed"],
    "pi-ucb": ["delayed"],
    "ranker-low": ["delayed"],
    "ad-ucb": ["impact"],
    "hd-ucb": ["impact"],
    "cucb": ["impact"],
    "exp3-meta": ["impact"],
    "one-hot": ["impact"],
    "ucb-greedy": ["blocking"],
    "rebounding-lookahead": ["rebounding"],
    "eep": ["rebounding"],
    "rgp-ucb": ["recovering"],
    "rgp-ts": ["recovering"],
}


def _const_opportunity():
    return OpportunityBandit([0.3, 0.9, 0.6], "uniform", [0.2, 0.5, 0.1])


@pytest.mark.parametrize(
    ("name", "params"),
    [(n, p) for n in sorted(POLICIES) for p in POLICY_PARAMS.get(n, [{}])],
)
def test_policy_contract(name, params):
    cls = resolve("policy", name, "kind")
    envs = POLICY_ENVS.get(name, ["bernoulli", "gaussian"])
    check_policy(
        lambda: cls(**params),
        env_factory=ENV_FACTORIES.get(envs[0] if envs else "", _const_opportunity),
    )
    for env in envs[1:]:
        check_policy(lambda: cls(**params), env_factory=ENV_FACTORIES[env])


def test_contract_catches_a_policy_using_global_random_state():
    from impactbandits.core.policy import SimplePolicy

    class Sloppy(SimplePolicy):
        def reset(self, space, horizon, rng):
            self.n = space.n

        def select(self):
            return int(np.random.randint(self.n))  # noqa: NPY002 - the bug under test

        def update(self, action, feedback):
            pass

    # caught by the first check that sees it: reproducibility or the global-state check
    with pytest.raises(AssertionError, match=r"global|restart|same seed"):
        check_policy(Sloppy)


def test_contract_catches_batch_dependent_draws():
    from impactbandits.core.policy import Policy

    class DrawsWhenAnyoneExplores(Policy):
        def reset(self, space, horizon, rng):
            self.rng, self.n, self.last = rng, space.n, np.zeros(rng.size)

        def select(self):
            if np.any(self.last > 0):  # the number of draws depends on the whole batch
                self.rng.random()
            return self.rng.integers(self.n)

        def update(self, actions, feedback):
            self.last = feedback.reward

    with pytest.raises(AssertionError, match="alone"):
        check_policy(DrawsWhenAnyoneExplores)


def test_discrete_space_rejects_bad_actions():
    from impactbandits.errors import SpecError

    space = Discrete(3)
    with pytest.raises(SpecError, match="action"):
        space.validate(np.array([0, 3]), 2)
