"""SRUM's compiled step (Ron et al. 2021, Algorithm 2; :mod:`impactbandits.policies.
opportunity_srum`) in the compiled loop gives the same numbers as the readable loop, bit for
bit: actions (pulls, switches), rewards, phases, phase switches and per-arm rewards, for every
built-in fairness function, several λ, K, T, R, seeds and both reward models, in the paper
variant and the authors-code one (with either variant of UCB1 as the black box, and any other
black box whose compiled step draws nothing); a user's fairness function that declares a
compiled form runs compiled (equal too); one that does not (its own ``__call__`` or ``range``,
or a callable) falls back to the readable loop, as does a black box that draws."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import kernel
from impactbandits.kernels import available, simulate, simulate_compiled
from impactbandits.oracles.opportunity_fairness import (
    CompiledFairness,
    FairnessFunction,
    MonotoneCartesianFairness,
)
from impactbandits.registry import build_environment, build_policy

# every test runs with the compiled loops on (conftest.kernel_backend)
pytestmark = [
    pytest.mark.skipif(not available(), reason="no compiled loops (numba not installed)"),
    pytest.mark.usefixtures("kernel_backend"),
]

FIELDS = ("reward", "expected", "pulls", "switches", "phases", "arm_rewards", "phase_switches")
RON_MEANS = [0.2, 0.35, 0.5, 0.65, 0.8, 0.95]  # Ron et al. §5: μ_i = 0.2 + 0.15(i − 1)

# module-level fairness functions, named "tests.test_kernels_srum:…" in the specs
square = MonotoneCartesianFairness(scale=1 / 6, power=2.0)  # exact class: compiled
root = MonotoneCartesianFairness(scale=1 / 6, power=0.5)
cube = MonotoneCartesianFairness(scale=1 / 6, power=3)
three_halves = MonotoneCartesianFairness(scale=1 / 6, power=1.5)


class Halved(MonotoneCartesianFairness):
    """A user subclass that keeps f and its range: it inherits the compiled form."""


halved = Halved(scale=1 / 12)


class Doubled(MonotoneCartesianFairness):
    """A user subclass with an f of its own and no compiled form of it: never compiled."""

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        return 2.0 * super().__call__(mu)


doubled = Doubled(scale=1 / 12)


@kernel
def _cubic_value(params, mu, out, work):
    for i in range(mu.size):
        out[i] = params[0] * mu[i] * mu[i] * mu[i]


@kernel
def _cubic_range(params, lower, upper, out, corner, work):
    for i in range(lower.size):
        high = params[0] * upper[i] * upper[i] * upper[i]
        out[i] = high - params[0] * lower[i] * lower[i] * lower[i]


class Cubic(FairnessFunction):
    """A user's fairness function f(μ)_i = μ_i³ / 6 with its own compiled form."""

    lipschitz = 0.5

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        mu = np.asarray(mu, dtype=float)
        return 1 / 6 * mu * mu * mu

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        return self(upper) - self(lower)

    def compiled_fairness(self) -> CompiledFairness:
        return CompiledFairness(_cubic_value, _cubic_range, np.array([1 / 6]))


cubic = Cubic()


@kernel
def _broken_range(params, lower, upper, out, corner, work):
    out[lower.size + 5] = 1.0  # out of bounds: a user's kernels run bounds-checked


class Broken(Cubic):
    def compiled_fairness(self) -> CompiledFairness:
        return CompiledFairness(_cubic_value, _broken_range, np.array([1 / 6]))


broken = Broken()


def quadratic(mu: np.ndarray) -> np.ndarray:
    """A plain user function f(μ)_i = μ_i² / K (numerical range oracle)."""
    return mu**2 / mu.shape[-1]


def _env(fairness="linear", lam=0.4, means=None, **extra):
    params = {"means": RON_MEANS if means is None else means, "fairness": fairness}
    return ("opportunity", {**params, "transfer_cost": lam, **extra})


def _run(env_spec, policy_params, compiled, rounds, reps=(0, 3, 7), horizon=None, every=False):
    env = build_environment(*env_spec)
    policy = build_policy("srum", policy_params)
    times = np.arange(1, rounds + 1) if every else np.unique(np.r_[1, 2, 7, rounds // 3, rounds])
    return simulate(
        env,
        policy,
        rounds,
        rounds if horizon is None else horizon,
        times,
        EnvironmentRandom(11, 5, list(reps)),
        BatchRNG.from_key(11, (6,), list(reps)),
        check_actions=False,
        compiled=compiled,
    )


def _compiled(env_spec, policy_params) -> bool:
    """``simulate_compiled`` takes the pair (else simulate falls back to the readable loop)."""
    env, policy = build_environment(*env_spec), build_policy("srum", policy_params)
    env.reset(EnvironmentRandom(11, 5, [0]))
    rng = BatchRNG.from_key(11, (6,), [0])
    policy.reset(env.action_space, 50, rng)
    return simulate_compiled(env, policy, 50, np.array([50]), 1, rng) is not None


def _assert_equal(env_spec, policy_params, rounds, **options):
    fast = _run(env_spec, policy_params, True, rounds, **options)
    slow = _run(env_spec, policy_params, False, rounds, **options)
    for name in FIELDS:
        got, want = getattr(fast, name), getattr(slow, name)
        assert got is not None and want is not None, name
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    return slow


FAIRNESS = ["zero", "uniform", "linear", "softmax"]
LAMBDAS = [0.0, 0.1, 0.25, 0.4, 0.8]


@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize("fairness", FAIRNESS)
def test_ron_instance_every_builtin_fairness_and_lambda(fairness, lam):
    """Ron et al.'s instance (K = 6), Theorem 2's α and β."""
    env_spec = _env(fairness, lam)
    assert _compiled(env_spec, {})
    _assert_equal(env_spec, {}, 3000)


#: β wide enough to end phase 1 soon, α small enough to keep phase 2 going for a while
NARROW = {"beta": 0.2, "alpha": 0.01}

# (environment, SRUM parameters, T, options): chosen to pass through every phase and transition
CASES = {
    # Figure 2's two-arm instance: leaves phase 1 within T = 2000, phases 2, 3 and 4
    "fig2-softmax-0.85": (_env("softmax", 0.85, [0.1, 0.95]), {}, 2000, {}),
    "fig2-softmax-0.4": (_env("softmax", 0.4, [0.1, 0.95]), {}, 2000, {}),
    "fig2-linear-0.85": (_env("linear", 0.85, [0.1, 0.95]), {}, 2000, {}),
    # a wide β ends phase 1 at once, a small α keeps phase 2 going
    "beta-wide-alpha-small": (_env("linear", 0.3), {"beta": 0.3, "alpha": 0.01}, 3000, {}),
    "beta-wide-alpha-large": (_env("softmax", 0.3), {"beta": 0.3, "alpha": 0.5}, 3000, {}),
    "uniform-beta-wide": (_env("uniform", 0.5), {"beta": 0.4}, 3000, {}),
    "zero-beta-wide": (_env("zero", 0.5), {"beta": 0.4}, 2000, {}),
    "per-arm-lambda": (_env("linear", [0.0, 0.9, 0.1, 0.5, 0.3, 0.05]), {"beta": 0.2}, 3000, {}),
    # softmax with c > 1 and c < 0 (the range's corners swap)
    "softmax-c3": (_env("softmax", 0.3, softmax_c=3.0), {"beta": 0.2, "alpha": 0.05}, 2500, {}),
    "softmax-c-2": (_env("softmax", 0.3, softmax_c=-2.0), {"beta": 0.2, "alpha": 0.05}, 2500, {}),
    "softmax-c0": (_env("softmax", 0.3, softmax_c=0.0), {"beta": 0.2}, 1500, {}),
    # K = 2, 3, 10 (NumPy's pairwise sum: 8 accumulators from 8 values on) and 140 (halves)
    "K2": (_env("linear", 0.2, [0.3, 0.6]), {"beta": 0.1}, 2000, {}),
    "K3": (_env("softmax", 0.25, [0.5, 0.45, 0.9]), {"beta": 0.15}, 2000, {}),
    "K10-softmax": (
        _env("softmax", 0.3, list(np.linspace(0.05, 0.95, 10))),
        {"beta": 0.25, "alpha": 0.02},
        3000,
        {},
    ),
    "K10-linear": (_env("linear", 0.5, list(np.linspace(0.05, 0.95, 10))), {}, 2000, {}),
    "K140-softmax": (
        _env("softmax", 0.5, list(np.linspace(0.01, 0.99, 140))),
        {"beta": 0.45, "alpha": 0.001},
        700,
        {},
    ),
    # Beta rewards (κ = 4, the default, and 1.5)
    "beta-rewards": (_env("linear", 0.3, distribution="beta"), {"beta": 0.2}, 2500, {}),
    "beta-rewards-k1.5": (
        _env("softmax", 0.85, [0.1, 0.95], distribution="beta", concentration=1.5),
        {},
        2000,
        {},
    ),
    # monotone Cartesian f = scale·μ^power with NumPy's special exponents and general ones
    **{
        f"power-{name}": (_env(f"tests.test_kernels_srum:{name}", 0.3), NARROW, 2000, {})
        for name in ("square", "root", "cube", "three_halves")
    },
    # λ = 0: phase 4 (the black box) from the first round
    "lambda-0": (_env("softmax", 0.0), {}, 2000, {}),
    # the black box's own constant; Theorem 2's α with the authors' K instead of K^{2/3}
    "ucb1-c": (_env("linear", 0.1), {"black_box_params": {"c": 0.5}}, 3000, {}),
    "alpha-rule": (_env("softmax", 0.3), {"alpha_rule": "authors-code", "beta": 0.2}, 2000, {}),
    # the policy is told a longer horizon than is run (T enters ln T and ⌊T f(μ̂)_i⌋)
    "horizon-longer": (_env("linear", 0.3), {"beta": 0.2}, 1500, {"horizon": 6000}),
    # … or a shorter one: phase 2 outlasts the requirements ⌊T f(μ̂)_i⌋, phase 3 is empty
    "horizon-shorter": (
        _env("linear", 0.2, [0.3, 0.6]),
        {"beta": 0.3, "alpha": 0.1},
        3000,
        {"horizon": 300},
    ),
    # one replication, another batch of seeds; every round a checkpoint
    "one-replication": (_env("softmax", 0.85, [0.1, 0.95]), {}, 1500, {"reps": (4,)}),
    "every-round": (_env("linear", 0.3), {"beta": 0.2}, 1200, {"reps": (5, 6), "every": True}),
    "long": (_env("linear", 0.4), {}, 10_000, {"reps": (0, 1)}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_srum_equals_the_readable_loop(case):
    env_spec, params, rounds, options = CASES[case]
    assert _compiled(env_spec, params)
    _assert_equal(env_spec, params, rounds, **options)


def _transitions(cases: dict) -> set[tuple[int, int]]:
    """The phase transitions (from, to) the compiled runs of ``cases`` make, and (−1, p) for
    the phase p of each replication's first round (phases numbered 0-3)."""
    seen: set[tuple[int, int]] = set()
    for env_spec, params, rounds, options in cases.values():
        options = {k: v for k, v in options.items() if k != "every"}
        traj = _run(env_spec, params, True, rounds, every=True, **options)
        counts = traj.phases  # (R, C, 4), every round a checkpoint
        current = np.diff(counts, axis=1, prepend=0).argmax(axis=2)  # the phase of each round
        for row in current:
            change = np.flatnonzero(row[1:] != row[:-1])
            seen.update(zip(row[change].tolist(), row[change + 1].tolist(), strict=True))
            seen.add((-1, int(row[0])))
    return seen


#: every transition between SRUM's phases (numbered 0-3): 1→2, 1→3, 1→4 (phase 3 with every
#: requirement met at once), 2→3, 2→4, 3→4
TRANSITIONS = {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}


def test_the_cases_pass_through_every_phase_and_transition():
    """Together the cases above visit phases 1-4 and every transition, and start in phases 1,
    2 (α, β wide from the start), 3 and 4 (λ = 0)."""
    assert _transitions(CASES) == TRANSITIONS | {(-1, p) for p in range(4)}


AUTHORS = {"variant": "authors-code"}

# SRUM's authors-code variant (α with K, L = |c| for softmax, the authors' phase tests and gap
# bounds, the black box kept from phase 1 on: the authors' UCB1 unless black_box_params say
# otherwise), chosen to pass through every phase and transition
AUTHORS_CASES = {
    # Figures 1 and 2's instances (phase 1 throughout at T = 3000 on Figure 1's)
    "fig2-softmax-0.85": (_env("softmax", 0.85, [0.1, 0.95]), AUTHORS, 2000, {}),
    "fig2-softmax-0.4": (_env("softmax", 0.4, [0.1, 0.95]), AUTHORS, 2000, {}),
    "fig2-linear-0.85": (_env("linear", 0.85, [0.1, 0.95]), AUTHORS, 2000, {}),
    "fig1-softmax-0.8": (_env("softmax", 0.8), AUTHORS, 3000, {}),
    "fig1-linear-0.4-beta-wide": (_env("linear", 0.4), {**AUTHORS, "beta": 0.3}, 3000, {}),
    "beta-wide-alpha-large": (
        _env("softmax", 0.3),
        {**AUTHORS, "beta": 0.3, "alpha": 0.5},
        3000,
        {},
    ),
    "uniform-beta-wide": (_env("uniform", 0.5), {**AUTHORS, "beta": 0.4}, 3000, {}),
    "zero-beta-wide": (_env("zero", 0.5), {**AUTHORS, "beta": 0.4}, 2000, {}),
    # a constant f has range 0: with α = 0 phase 2 goes on (range ≥ α) while some LCB(Δ) < λ
    "uniform-alpha-0": (_env("uniform", 0.5), {**AUTHORS, "beta": 0.4, "alpha": 0.0}, 2000, {}),
    "zero-alpha-0": (_env("zero", 0.3), {**AUTHORS, "beta": 0.3, "alpha": 0.0}, 2000, {}),
    # λ − β < 0 and λ + β > 1: the clipped bounds of the phase-1 test, met with equality
    "beta-above-lambda": (_env("linear", 0.1), {**AUTHORS, "beta": 0.3}, 2000, {}),
    "lambda-beta-above-1": (_env("linear", 0.85, [0.1, 0.95]), {**AUTHORS, "beta": 0.3}, 2000, {}),
    # phase 3 after phase 2; phase 3 with every requirement met at once (so 1→4)
    "phase-3-after-2": (
        _env("linear", 0.2, [0.1, 0.95]),
        {**AUTHORS, "beta": 0.2, "alpha": 0.1},
        1500,
        {},
    ),
    "phase-4-at-once": (
        _env("linear", 0.2, [0.3, 0.6]),
        {**AUTHORS, "beta": 0.2, "alpha": 0.2},
        1500,
        {},
    ),
    # arms with λ = 0 take no part in the phase-1 test
    "per-arm-lambda": (
        _env("linear", [0.0, 0.9, 0.1, 0.5, 0.3, 0.05]),
        {**AUTHORS, "beta": 0.2},
        3000,
        {},
    ),
    "per-arm-lambda-softmax": (
        _env("softmax", [0.0, 0.6, 0.0, 0.3, 0.0, 0.1]),
        {**AUTHORS, "beta": 0.45},
        3000,
        {},
    ),
    # softmax with c > 1, c < 0 (L = |c|) and c = 0 (L = 0, so α = 0)
    "softmax-c3": (_env("softmax", 0.3, softmax_c=3.0), {**AUTHORS, "beta": 0.35}, 2500, {}),
    "softmax-c-2": (_env("softmax", 0.3, softmax_c=-2.0), {**AUTHORS, "beta": 0.35}, 2500, {}),
    "softmax-c0": (_env("softmax", 0.3, softmax_c=0.0), {**AUTHORS, "beta": 0.35}, 1500, {}),
    "K2": (_env("linear", 0.2, [0.3, 0.6]), {**AUTHORS, "beta": 0.2}, 2000, {}),
    "K3": (_env("softmax", 0.25, [0.5, 0.45, 0.9]), {**AUTHORS, "beta": 0.3}, 2000, {}),
    "K10-softmax": (
        _env("softmax", 0.3, list(np.linspace(0.05, 0.95, 10))),
        {**AUTHORS, "beta": 0.35, "alpha": 0.02},
        3000,
        {},
    ),
    "K140-softmax": (
        _env("softmax", 0.5, list(np.linspace(0.01, 0.99, 140))),
        {**AUTHORS, "beta": 0.45, "alpha": 0.001},
        700,
        {},
    ),
    # Beta rewards (κ = 4, the default, and 1.5)
    "beta-rewards": (_env("linear", 0.3, distribution="beta"), {**AUTHORS, "beta": 0.35}, 2500, {}),
    "beta-rewards-k1.5": (
        _env("softmax", 0.85, [0.1, 0.95], distribution="beta", concentration=1.5),
        AUTHORS,
        2000,
        {},
    ),
    "beta-rewards-lambda-0": (_env("uniform", 0.0, distribution="beta"), AUTHORS, 1500, {}),
    **{
        f"power-{name}": (
            _env(f"tests.test_kernels_srum:{name}", 0.3),
            {**AUTHORS, "beta": 0.35, "alpha": 0.05},
            2000,
            {},
        )
        for name in ("square", "root")
    },
    # λ = 0: no phase 1, the authors' UCB1 (capped index, ties to the lowest arm) from round 1
    "lambda-0-softmax": (_env("softmax", 0.0), AUTHORS, 2000, {}),
    "lambda-0-linear": (_env("linear", 0.0), AUTHORS, 2000, {}),
    # black_box_params: UCB1's own c; the paper's UCB1, kept from round 1 (ln t of SRUM's t)
    "ucb1-c": (_env("linear", 0.1), {**AUTHORS, "black_box_params": {"c": 0.5}}, 3000, {}),
    "ucb1-paper": (
        _env("softmax", 0.4, [0.1, 0.95]),
        {**AUTHORS, "black_box_params": {"variant": "paper"}},
        2000,
        {},
    ),
    "ucb1-paper-lambda-0": (
        _env("softmax", 0.0),
        {**AUTHORS, "black_box_params": {"variant": "paper", "c": 1.0}},
        2000,
        {},
    ),
    "horizon-longer": (_env("linear", 0.3), {**AUTHORS, "beta": 0.35}, 1500, {"horizon": 6000}),
    "horizon-shorter": (
        _env("linear", 0.2, [0.3, 0.6]),
        {**AUTHORS, "beta": 0.3, "alpha": 0.1},
        3000,
        {"horizon": 300},
    ),
    "one-replication": (_env("softmax", 0.85, [0.1, 0.95]), AUTHORS, 1500, {"reps": (4,)}),
    "every-round": (
        _env("softmax", 0.4, [0.1, 0.95]),
        AUTHORS,
        1200,
        {"reps": (5, 6), "every": True},
    ),
    "long": (_env("softmax", 0.4), {**AUTHORS, "beta": 0.3}, 10_000, {"reps": (0, 1)}),
}

# the paper's SRUM with one authors-code part: the authors' UCB1 (restarted in phase 4), or
# their α (K instead of K^{2/3})
PARTLY_AUTHORS_CASES = {
    "authors-ucb1": (
        _env("softmax", 0.4, [0.1, 0.95]),
        {"black_box_params": {"variant": "authors-code"}},
        2000,
        {},
    ),
    "authors-ucb1-c": (
        _env("softmax", 0.85, [0.1, 0.95]),
        {"black_box_params": {"variant": "authors-code", "c": 0.7}},
        2000,
        {},
    ),
    "authors-ucb1-lambda-0": (
        _env("uniform", 0.0, distribution="beta"),
        {"black_box_params": {"variant": "authors-code"}},
        1500,
        {},
    ),
    "authors-ucb1-per-arm-lambda": (
        _env("linear", [0.0, 0.9, 0.1, 0.5, 0.3, 0.05]),
        {"beta": 0.2, "black_box_params": {"variant": "authors-code"}},
        3000,
        {},
    ),
    "alpha-rule-linear": (
        _env("linear", 0.85, [0.1, 0.95]),
        {"alpha_rule": "authors-code"},
        2000,
        {},
    ),
    "alpha-rule-beta-rewards": (
        _env("softmax", 0.4, [0.1, 0.95], distribution="beta"),
        {"alpha_rule": "authors-code"},
        2000,
        {},
    ),
}


@pytest.mark.parametrize("case", list(AUTHORS_CASES) + list(PARTLY_AUTHORS_CASES))
def test_compiled_authors_code_srum_equals_the_readable_loop(case):
    env_spec, params, rounds, options = {**AUTHORS_CASES, **PARTLY_AUTHORS_CASES}[case]
    assert _compiled(env_spec, params)
    _assert_equal(env_spec, params, rounds, **options)


def test_the_authors_code_cases_pass_through_every_phase_and_transition():
    """The authors-code cases visit every phase and transition too. They start in phase 1, or
    in phase 4 when every λ is 0 — never in phase 2 or 3: before any pull their phase-1 test
    holds for every arm with λ > 0 (LCB(Δ) = 0 ≤ max(0, λ − β), UCB(Δ) = 1 ≥ min(1, λ + β)),
    and with every λ = 0 no arm has LCB(Δ) < λ."""
    assert _transitions(AUTHORS_CASES) == TRANSITIONS | {(-1, 0), (-1, 3)}
    partly = _transitions(PARTLY_AUTHORS_CASES)  # the authors' UCB1 restarted from 1-3
    assert TRANSITIONS - {(1, 3)} | {(-1, 0), (-1, 1), (-1, 3)} <= partly


#: cases of AUTHORS_CASES that remain in phase 1, or are the paper variant's by construction
#: (λ = 0 and the paper's UCB1: SRUM is its black box in either variant)
SAME_AS_PAPER = {"fig1-softmax-0.8", "K140-softmax", "ucb1-paper-lambda-0"}


def test_the_authors_code_cases_differ_from_the_paper_variant():
    """The cases tell the variants apart, so the loop is seen to read its flags: each run of
    the authors-code variant but those of :data:`SAME_AS_PAPER` differs from the paper
    variant's on the same instance, seeds and parameters."""
    for name, (env_spec, params, rounds, options) in AUTHORS_CASES.items():
        authors = _run(env_spec, params, True, rounds, **options)
        paper = _run(env_spec, {**params, "variant": "paper"}, True, rounds, **options)
        same = all(np.array_equal(getattr(authors, f), getattr(paper, f)) for f in FIELDS)
        assert same == (name in SAME_AS_PAPER), name


@pytest.mark.parametrize(
    "fairness",
    ["tests.test_kernels_srum:doubled", "tests.test_kernels_srum:quadratic"],
    ids=["subclass", "callable"],
)
def test_user_defined_fairness_falls_back_and_still_equals(fairness):
    env_spec = _env(fairness, 0.3, [0.3, 0.5, 0.9])
    params = {"beta": 0.3, "alpha": 0.05}
    assert not _compiled(env_spec, params)
    _assert_equal(env_spec, params, 300)


def test_a_subclass_that_keeps_f_inherits_the_compiled_form():
    env_spec = _env("tests.test_kernels_srum:halved", 0.3, [0.3, 0.5, 0.9])
    assert _compiled(env_spec, NARROW)
    _assert_equal(env_spec, NARROW, 2000)


@pytest.mark.parametrize("lam", [0.1, 0.4])
def test_a_users_compiled_fairness_function_runs_compiled_and_equal(jit_backend, lam):
    env_spec = _env("tests.test_kernels_srum:cubic", lam, [0.3, 0.5, 0.9])
    assert _compiled(env_spec, NARROW)
    _assert_equal(env_spec, NARROW, 2000)


def test_a_users_failing_fairness_kernel_is_a_one_line_error(jit_backend):
    from impactbandits.errors import SpecError

    env_spec = _env("tests.test_kernels_srum:broken", 0.3, [0.3, 0.5, 0.9])
    with pytest.raises(SpecError) as error:
        _run(env_spec, NARROW, True, 200)
    assert error.value.field == "fairness"
    assert "IndexError" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "params",
    [
        {"black_box": "greedy"},
        {"variant": "authors-code", "black_box": "greedy"},
    ],
    ids=["greedy", "authors-greedy"],
)
@pytest.mark.parametrize(("lam", "rounds"), [(0.4, 3000), (0.0, 1500), (0.2, 2000)])
def test_any_black_box_whose_step_draws_nothing_runs_compiled_and_equal(
    jit_backend, params, lam, rounds
):
    """The black box is any discrete policy whose compiled step draws nothing, bound into
    SRUM's step: restarted in phase 4 (paper) or kept (authors-code), equal to the readable
    loop through every phase (λ = 0: phase 4 from the first round). On numba's JIT: the module
    built ahead of time holds SRUM with UCB1 only."""
    env_spec = _env("linear", lam, [0.3, 0.5, 0.9])
    assert _compiled(env_spec, {**params, "beta": 0.3})
    slow = _assert_equal(env_spec, {**params, "beta": 0.3}, rounds)
    assert slow.phases[:, -1, 3].min() > 0  # phase 4 was reached


@pytest.mark.parametrize(
    "params",
    [
        {"black_box": "epsilon-greedy"},
        {"black_box": "exp3", "black_box_params": {"gamma": 0.1}},
        {"variant": "authors-code", "black_box": "exp3", "black_box_params": {"gamma": 0.1}},
        {"black_box": "round-robin"},
    ],
    ids=["epsilon-greedy", "exp3", "authors-exp3", "round-robin"],
)
def test_black_boxes_that_draw_or_have_no_step_fall_back(params):
    """A black box that draws takes its draws from a stream of its own, which no step of
    SRUM's reads, and one without a compiled step has none to bind: the readable loop runs
    (equal, trivially)."""
    assert not _compiled(_env("linear", 0.4), params)
    _assert_equal(_env("linear", 0.4, [0.3, 0.5, 0.9]), {**params, "beta": 0.3}, 300)


def test_disabled_by_the_environment_variable(monkeypatch):
    monkeypatch.setenv("IMPACTBANDITS_KERNELS", "0")
    assert not _compiled(_env("linear", 0.4), {})


_SEQUENCE = """
import numpy as np, sys
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.kernels import simulate
from impactbandits.registry import build_environment, build_policy
out = []
for fairness in sys.argv[1].split(","):
    env = build_environment("opportunity", {"means": [0.2, 0.35, 0.5, 0.65, 0.8, 0.95],
                                            "fairness": fairness, "transfer_cost": 0.8})
    trajectory = simulate(env, build_policy("srum", {}), 50000, 50000, np.array([50000]),
                          EnvironmentRandom(3, 1, [0, 1, 2]), BatchRNG.from_key(3, (2,), [0, 1, 2]))
    out.append(trajectory.reward[:, -1].tolist())
print(out[-1])
"""


def test_each_fairness_form_runs_its_own_loop_after_another_in_one_process(kernel_backend):
    """A fresh process (numba's disk cache warm) runs SRUM with one fairness form and then with
    another: the second must give what it gives alone. It did not when the template's copies
    per form shared one name ("advance"): loaded from the disk cache, the second form's loop
    ran the first form's machine code."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "IMPACTBANDITS_KERNELS": kernel_backend}

    def last(forms: str) -> str:
        run = [sys.executable, "-c", _SEQUENCE, forms]
        return subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout

    alone = last("linear")
    assert last("linear") == alone  # compiled, then loaded from the disk cache
    assert last("uniform,linear") == alone
    assert last("softmax,uniform,linear") == alone
