"""Every ``variant = "authors-code"`` policy has a compiled step that gives its readable class's
numbers bit for bit (issue 29): the compiled loop's trajectory (rewards, expected rewards, pulls,
switches, every round) equals the readable loop's (:func:`impactbandits.testing.
check_compiled_step`), on the environments and with the parameters of the figures that run the
variant (their noisy environments draw fresh noise per evaluation, which greedy's and
one-step-optimistic's variants read: ``tests/test_reevaluation_compiled.py``), several horizons
and replications.

The new steps have no loop built ahead of time until the module is rebuilt: on the ``aot``
backend a pair without an entry is skipped, on ``jit`` every pair must run compiled.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.variants import kept_argmax, refresh_stale, stale_arms
from impactbandits.kernels.dispatch import compiled_step, simulate_compiled
from impactbandits.registry import build_environment, build_policy
from impactbandits.testing import check_compiled_step

pytestmark = pytest.mark.skipif(
    not kernels.available(), reason="no compiled loops (numba not installed)"
)

AUTHORS = {"variant": "authors-code"}
#: Every policy kind with an authors-code variant, with the parameters it needs.
VARIANTS: dict[str, dict[str, Any]] = {
    "d-ucb": AUTHORS,
    "ucb": AUTHORS,
    "sw-ucb": AUTHORS,
    "ucb1": AUTHORS,
    "exp3": {**AUTHORS, "gamma": 0.01},
    "r-exp3": AUTHORS,
    "last-reward-greedy": AUTHORS,
    "one-step-optimistic": {**AUTHORS, "noise_bound": 0.1},
    "spo": AUTHORS,
    "hkr": AUTHORS,
}
LINDNER = [
    "lindner-fig1",
    "lindner-single-peaked",
    "lindner-increasing",
    "lindner-gaussian",
    "lindner-fico",
    "lindner-recommender",
]
SINGLE_PEAKED_3 = ("single-peaked", {"instance": 3, "length": 5000})
NOISY_3 = ("single-peaked", {"instance": 3, "length": 5000, "noise": "gaussian", "sigma": 0.05})
NOISY_1 = ("single-peaked", {"instance": 1, "length": 2500, "noise": "gaussian", "sigma": 0.1})
#: Noisy observations, mostly negative: greedy's authors variant compares them with 0.
LOW = ("gaussian", {"means": [0.05, 0.02, 0.1], "sigma": 0.3})
#: Noise-free plateaus (f(n) = f(n − 1)): one-step-optimistic's authors variant tests f(n) −
#: f(n − 1) > 0, not ≥.
PLATEAU = ("rested", {"curves": [[0.5] * 2500, list(0.7 - 1e-4 * np.arange(2500))]})


def same_as_readable(
    backend: str,
    kind: str,
    params: dict[str, Any],
    env: tuple[str, dict[str, Any]],
    rounds: int,
    replications: tuple[int, ...] = (0, 3, 7),
) -> None:
    """The compiled loop equals the readable one bit for bit (``check_compiled_step`` raises if
    not); it must run compiled on the JIT."""
    ran = check_compiled_step(
        lambda: build_policy(kind, params),
        lambda: build_environment(*env),
        rounds=rounds,
        replications=replications,
    )
    if not ran:
        assert backend == "aot", f"{kind} {params} on {env[0]} did not run compiled"
        pytest.skip("no ahead-of-time entry for this step yet (the JIT run checks it)")


def figure_pairs(name: str) -> list[tuple[str, dict[str, Any], tuple[str, dict[str, Any]], int]]:
    """(kind, params, environment, largest horizon) of every authors-code policy of the
    figure's quick authors-code spec on every environment it runs on, as the spec gives them
    (``noise_draws = "per-evaluation"`` included)."""
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(name).spec(True, "authors-code")
    pairs = []
    for policy in spec.policies:
        if policy.params.get("variant") != "authors-code":
            continue
        for env in spec.environments:
            if policy.environments is not None and env.label not in policy.environments:
                continue
            env_params = dict(env.params)
            pairs.append(
                (policy.kind, dict(policy.params), (env.kind, env_params), max(spec.horizons))
            )
    return pairs


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("name", LINDNER)
def test_every_authors_code_pair_of_the_lindner_figures_runs_compiled_bit_for_bit(name):
    """Each figure's authors-code policies on each of its environments, at a short horizon
    (two horizons for the data bandits' shorter figures), every round a checkpoint."""
    pairs = figure_pairs(name)
    assert pairs
    for kind, params, env, t_max in pairs:
        for rounds in (150, 600):
            same_as_readable("jit", kind, params, env, min(rounds, t_max))


def _noisy(env: tuple[str, dict[str, Any]]) -> bool:
    return env[0] == "gaussian" or env[1].get("noise", "none") != "none"


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("name", LINDNER)
def test_the_figures_longest_horizon(name):
    """The first noise-free and the first noisy environment of each figure at its quick
    horizon, two replications."""
    pairs = figure_pairs(name)
    chosen: dict[bool, tuple[str, dict[str, Any]]] = {}
    for _, _, env, _ in pairs:
        chosen.setdefault(_noisy(env), env)
    for kind, params, env, t_max in pairs:
        if env in chosen.values():
            same_as_readable("jit", kind, params, env, t_max, replications=(1, 4))


@pytest.mark.parametrize("kind", sorted(VARIANTS))
@pytest.mark.parametrize(
    "env",
    [
        SINGLE_PEAKED_3,
        NOISY_3,
        NOISY_1,
        ("increasing", {"family": "inc_3", "alpha": 0.5, "length": 2500}),
        (
            "increasing",
            {"family": "inc_1", "alpha": 0.1, "length": 2500, "noise": "gaussian", "sigma": 0.05},
        ),
        ("bernoulli", {"means": [0.3, 0.5, 0.7, 0.2]}),
        ("gaussian", {"n_arms": 10, "sigma": 0.1}),
        LOW,
        PLATEAU,
    ],
    ids=[
        "sp3",
        "sp3-noisy",
        "sp1-noisy",
        "inc3",
        "inc1-noisy",
        "bernoulli",
        "gaussian",
        "low",
        "plateau",
    ],
)
def test_every_authors_code_step_equals_its_readable_class(kernel_backend, kind, env):
    """Every variant on noise-free and noisy environments, and a stochastic and a stationary
    Gaussian one, at several horizons and sets of replications."""
    params = dict(VARIANTS[kind])
    for rounds, replications in ((40, (0, 1)), (700, (2, 5, 9)), (2500, (11,))):
        same_as_readable(kernel_backend, kind, params, env, rounds, replications)


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("spo", {"noise_bound": 0.1}),  # the LP path, as on FICO (max(0.1, 2σ)) and noisy arms
        ("spo", {"noise_bound": 0.02}),
        ("spo", {"noise_bound": 0.2}),
        ("one-step-optimistic", {"noise_bound": 0.1}),
        ("exp3", {"gamma": 0.01, "first_pull_credit": [0.394178, 0.348508]}),
        ("r-exp3", {"first_pull_credit": [0.394178, 0.348508]}),
        ("exp3", {"first_pull_credit": [0.9, 0.1]}),  # γ from the horizon
        ("d-ucb", {"discount": 0.99, "xi": 0.3, "b": 2.0}),
        ("sw-ucb", {"window": 37}),  # a window shorter than the run
        ("ucb1", {"c": 0.5}),
    ],
    ids=lambda v: str(v),
)
@pytest.mark.parametrize("env", [SINGLE_PEAKED_3, NOISY_3], ids=["noise-free", "noisy"])
def test_the_variants_other_parameters(kind, params, env):
    for rounds, replications in ((300, (0, 3, 7)), (5000, (1,))):
        same_as_readable("jit", kind, {**AUTHORS, **params}, env, rounds, replications)


@pytest.mark.usefixtures("jit_backend")
def test_many_arms():
    """Stale indices over many arms (UCB1's authors variant takes no buckets)."""
    env = ("gaussian", {"means": list(np.linspace(0.0, 1.0, 70)), "sigma": 0.2})
    for kind in ("ucb1", "d-ucb", "ucb", "sw-ucb", "exp3", "r-exp3", "last-reward-greedy",
                 "one-step-optimistic", "spo"):  # fmt: skip
        same_as_readable("jit", kind, VARIANTS[kind], env, 1500, (0, 2))


#: Where the two variants' runs differ, if not on :data:`NOISY_3`: greedy's authors variant
#: differs only when every last observation is negative; one-step-optimistic settles on
#: instance 3's second arm after its first pulls in both.
DIFFERS = {"last-reward-greedy": LOW, "one-step-optimistic": NOISY_1}


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_every_authors_code_variant_declares_a_step_of_its_own(kind):
    """No authors-code variant falls back on the readable loop, and none runs the paper
    variant's rounds: the two compiled trajectories differ."""
    env_spec = DIFFERS.get(kind, NOISY_3)
    params = VARIANTS[kind]
    if kind in ("exp3", "r-exp3"):  # γ = 0.01 learns too slowly for 2000 rounds to tell
        params = {**params, "gamma": 0.3, "first_pull_credit": [0.394178, 0.348508]}
        params = {k: v for k, v in params.items() if kind == "exp3" or k != "gamma"}
    paper_params = {k: v for k, v in params.items() if k not in ("variant", "first_pull_credit")}
    horizon = 2000
    runs = []
    for policy_params in (params, paper_params):
        env, policy = build_environment(*env_spec), build_policy(kind, policy_params)
        env.reset(EnvironmentRandom(1, 2, [0, 1]))
        rng = BatchRNG.from_key(1, (3,), [0, 1])
        policy.reset(env.action_space, horizon, rng)
        assert compiled_step(policy) is not None
        done = simulate_compiled(env, policy, horizon, np.array([horizon]), 2, rng)
        assert done is not None
        runs.append(np.concatenate([done[0].ravel(), done[2].ravel()]))  # rewards, pulls
    assert not np.array_equal(*runs), f"{kind}: the authors-code step plays the paper's rounds"


def test_the_stale_index_kernels_are_refresh_stale_and_np_argmax():
    """The compiled form of :func:`refresh_stale` (which arms, then ``np.argmax`` of the kept
    indices), called from Python: ties, infinities and NaN as NumPy treats them."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        k = int(rng.integers(1, 7))
        kept = rng.choice([0.0, 1.0, 2.5, np.inf, -np.inf, np.nan], size=k)
        assert kept_argmax(kept) == int(np.argmax(kept))
        fresh = rng.random(k)
        pulled = np.array([int(rng.integers(k))])
        first = bool(rng.integers(2))
        expected = refresh_stale(kept[None].copy(), fresh[None], None if first else pulled)[0]
        lo, hi = stale_arms(kept, pulled, first)
        kept[lo:hi] = fresh[lo:hi]
        assert np.array_equal(kept, expected, equal_nan=True)
