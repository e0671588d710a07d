"""Patil et al. (2023): Algorithm 1's tie rule, the arms' true potentials a_i = lim f_i(n), and
the late-bloomer family of random IMAB instances."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from impactbandits.core.deterministic import play_deterministic
from impactbandits.envs.curves import increasing_limits
from impactbandits.envs.improving import (
    imab_potentials,
    late_bloomer_report,
    random_imab_curves,
    random_imab_parameters,
    true_potentials,
    validate_imab,
)
from impactbandits.errors import SpecError
from impactbandits.metrics import potential_gap
from impactbandits.policies.improving import PatilAnytime

# ---------------------------------------------------------------------------------------------
# Tie rule (Algorithm 1, steps 11-12: C = argmax p_i, pull argmin_{i in C} N_i, then lowest index)


def _exact_algorithm1(values: list[list[Fraction]], rounds: int) -> list[int]:
    """Algorithm 1 in exact rational arithmetic, written from the paper's pseudo-code: p_i is the
    explicit sum Rew_i(N_i) + Σ_{n=1}^{N*−N_i} (f_i(N_i) + n Δ_i(N_i)) (no closed form), and the
    tie rule is step 11-12 (then the lowest index for the paper's "arbitrarily")."""
    k = len(values)
    pulls, total, order = [0] * k, [Fraction(0)] * k, []
    for t in range(1, rounds + 1):
        if t <= 2 * k:
            arm = (t - 1) // 2
        else:
            most = max(pulls)
            p = []
            for i in range(k):
                n = pulls[i]
                f, delta = values[i][n - 1], values[i][n - 1] - values[i][n - 2]
                p.append(total[i] + sum(f + j * delta for j in range(1, most - n + 1)))
            best = max(p)
            arm = min((i for i in range(k) if p[i] == best), key=lambda i: (pulls[i], i))
        total[arm] += values[arm][pulls[arm]]
        pulls[arm] += 1
        order.append(arm)
    return order


def _float_order(values: list[list[Fraction]], rounds: int) -> list[int]:
    curves = np.array([[float(v) for v in row] for row in values])
    counts = play_deterministic(PatilAnytime(), curves, rounds)
    steps = np.diff(np.vstack([np.zeros((1, curves.shape[0]), np.int64), counts]), axis=0)
    return [int(a) for a in np.argmax(steps, axis=1)]


def test_constructed_tie_goes_to_the_fewest_pulls_not_to_the_rounding():
    """Two identical linear arms f(n) = n/100. After the 2k = 4 pulls of the initialisation, by
    hand: round 5 is an exact tie at equal pulls (arm 0); at round 6 arm 1, one pull behind, has
    p_1 = Rew(2) + f(2) + Δ = 0.03 + 0.03 = 0.06 = Rew(3) = p_0, a tie won by the fewer pulls
    (arm 1); and so on: the paper's rule alternates 0, 1, 0, 1, ... At round 8 (pulls (4, 3))
    the same tie is p_0 = Rew(4) = 0.1 against p_1 = Rew(3) + f(3) + Δ(3) = 0.1, but in doubles
    the two sums round differently, so a plain float comparison (the earlier code) gives the
    pull to arm 0."""
    f = [n / 100 for n in range(1, 11)]
    # the earlier code's float evaluation at round 8 (pulls (4, 3), N* = 4): arm 0 wins
    p0 = f[0] + f[1] + f[2] + f[3]
    p1 = (f[0] + f[1] + f[2]) + 1 * f[2] + (f[2] - f[1]) * 1
    assert p0 != p1 and p0 > p1  # the case really is decided by rounding
    curves = np.array([f, f])
    counts = play_deterministic(PatilAnytime(), curves, 10)
    order = np.argmax(np.diff(np.vstack([[0, 0], counts]), axis=0), axis=1)
    assert order.tolist() == [0, 0, 1, 1, 0, 1, 0, 1, 0, 1]


def _linear(slopes: list[Fraction], length: int) -> list[list[Fraction]]:
    return [[min(Fraction(1), s * n) for n in range(1, length + 1)] for s in slopes]


def _lower_bound(k: int, m: int, per_arm: int) -> list[list[Fraction]]:
    """I_m of Patil et al. §3 in exact arithmetic (written from the paper, not from our
    lower_bound_instance): n/(kN) up to N pulls, then 1/k, except arm m rising to 1 at kN."""
    rows = []
    for i in range(k):
        cap = k * per_arm if i == m else per_arm
        rows.append([Fraction(min(n, cap), k * per_arm) for n in range(1, k * per_arm + 1)])
    return rows


def _random_rational_concave(rng: np.random.Generator, k: int, length: int):
    """Nonincreasing rational increments with many repeats (so exact ties abound)."""
    rows = []
    for _ in range(k):
        steps = sorted(
            (Fraction(int(rng.integers(0, 4)), 997) for _ in range(length)), reverse=True
        )
        start = Fraction(int(rng.integers(0, 50)), 1000)
        row, value = [], start
        for s in steps:
            value += s
            row.append(value)
        rows.append(row)
    return rows


@pytest.mark.parametrize(
    "values",
    [
        _linear([Fraction(1, 100)] * 2, 60),
        _linear([Fraction(3, 1000)] * 3, 200),
        _linear([Fraction(1, 10), Fraction(1, 30), Fraction(1, 100)], 60),
        _lower_bound(4, 3, 25),
        _lower_bound(8, 5, 12),
        _lower_bound(3, 0, 40),
    ],
    ids=["lin2", "lin3", "lin-slopes", "I_m-k4", "I_m-k8", "I_m-k3-m0"],
)
def test_pull_sequence_matches_exact_rational_algorithm1(values):
    rounds = len(values[0])
    assert _float_order(values, rounds) == _exact_algorithm1(values, rounds)


def test_pull_sequence_matches_exact_algorithm1_on_random_rational_instances():
    rng = np.random.default_rng(11)
    for _ in range(25):
        k = int(rng.integers(2, 5))
        values = _random_rational_concave(rng, k, 80)
        assert _float_order(values, 80) == _exact_algorithm1(values, 80)


def test_tie_tolerance_does_not_merge_real_differences():
    """Arm 1 is better than arm 0 by a margin far above rounding (1e-9 per pull): the estimates
    differ, so the fewer-pulls rule must not override the argmax. Expected by hand: after the
    initialisation (pulls (2, 2)), p_1 − p_0 = 2e-9 > 0, so arm 1 is pulled at round 5."""
    base = np.linspace(0.1, 0.5, 50)
    curves = np.stack([base, base + 1e-9])
    counts = play_deterministic(PatilAnytime(), curves, 5)
    assert counts[-1].tolist() == [2, 3]


# ---------------------------------------------------------------------------------------------
# True potentials a_i = lim f_i(n) (Patil et al. §2, Theorem 5)


@pytest.mark.parametrize("family", ["inc_1", "inc_2", "inc_3"])
@pytest.mark.parametrize("alpha", [0.03, 0.5, 5.0])
def test_increasing_families_potentials_are_the_hand_derived_limits(family, alpha):
    # lim 1 − t^−x = 1, lim min(1, t/1000) = 1, lim 0.5 − 0.5 t^−α = 0.5, lim min(.5, ...) = 0.5
    np.testing.assert_array_equal(increasing_limits(family, alpha), [1.0, 0.5])


def test_inc1_potential_is_not_the_tables_last_value():
    """The issue's example: inc_1 α = 0.5, length 2·10⁴: last values 1 − 20000^−½ ≈ 0.9929 and
    0.5 − 0.5·20000^−½ ≈ 0.4965, potentials 1 and 0.5; after 2·10⁴ pulls each arm is still
    20000^−½ and 0.5·20000^−½ below its potential."""
    from impactbandits.registry import build_environment

    env = build_environment("increasing", {"family": "inc_1", "alpha": 0.5, "length": 20_000})
    np.testing.assert_array_equal(true_potentials(env), [1.0, 0.5])
    np.testing.assert_allclose(env.curves[:, -1], [0.99292893, 0.49646447], atol=1e-8)
    gap = potential_gap(env.curves, np.array([[20_000, 20_000]]), true_potentials(env))
    np.testing.assert_allclose(gap[0], [20_000**-0.5, 0.5 * 20_000**-0.5], rtol=1e-9)


def test_imab_family_potentials():
    from impactbandits.registry import build_environment

    def pot(**params):
        return true_potentials(build_environment("imab", params))

    # I_m: others stop at 1/k, arm m reaches 1 (Patil et al. §3) even if the table is cut short
    np.testing.assert_array_equal(
        pot(family="lower-bound", k=4, m=2, horizon=400, length=100), [0.25, 0.25, 1.0, 0.25]
    )
    np.testing.assert_array_equal(
        pot(family="linear-vs-flat", k=3, ramp=500, length=100), [1.0, 0.0, 0.0]
    )
    np.testing.assert_array_equal(
        pot(family="saturating", asymptotes=[0.3, 0.9], saturation=[500, 5], length=50),
        [0.3, 0.9],
    )
    # explicit finite tables: the last value (documented: no limit exists for a finite table)
    np.testing.assert_array_equal(
        pot(family="curves", curves=[[0.1, 0.2, 0.25], [0.3, 0.3, 0.3]]), [0.25, 0.3]
    )


@pytest.mark.parametrize("family", ["uniform", "late-bloomer"])
def test_random_potentials_bound_the_curves_and_are_approached(family):
    """a_i(1 − e^{−ρ_i n/L}) → a_i: every value of the table lies below a_i, and the same arm
    evaluated far beyond the table (n = 50 L, ρ_i ≥ 2) equals a_i to double precision."""
    from impactbandits.registry import build_environment

    length = 300
    for seed in range(20):
        curves = random_imab_curves(5, length, seed, family)
        a, rho = random_imab_parameters(5, seed, family)
        env = build_environment(
            "imab", {"family": "random", "random_family": family, "seed": seed, "length": length}
        )
        np.testing.assert_array_equal(true_potentials(env), a)
        assert np.all(curves <= a[:, None])
        np.testing.assert_allclose(a * -np.expm1(-rho * 50.0), a, rtol=1e-15)


def test_potential_gap_needs_one_potential_per_arm():
    with pytest.raises(ValueError, match="one value per arm"):
        potential_gap(np.zeros((2, 3)), np.array([[1, 1]]), np.array([1.0]))


def test_imab_potentials_of_random_family_need_no_table():
    a = imab_potentials("random", np.zeros((3, 1)), k=3, seed=4, random_family="uniform")
    assert a.shape == (3,) and np.all((a >= 0.1) & (a <= 1.0))


# ---------------------------------------------------------------------------------------------
# Late-bloomer family


def _is_late_bloomer(curves: np.ndarray, potentials: np.ndarray) -> bool:
    """Independent check of the definition (random_imab_parameters, properties 1–4)."""
    k, length = curves.shape
    late = int(np.argmax(potentials))
    if np.sort(potentials)[-2] >= potentials[late]:
        return False
    early = max(1, length // 20)
    starts_behind = any(
        all(curves[j, n] > curves[late, n] for n in range(early)) for j in range(k) if j != late
    )
    rew = np.cumsum(curves, axis=1)
    short = max(range(k), key=lambda i: rew[i, early - 1]) != late
    full = all(rew[late, -1] > rew[j, -1] for j in range(k) if j != late)
    return starts_behind and short and full


@pytest.mark.parametrize("length", [20, 137, 1000, 10_000])
def test_late_bloomer_family_always_has_a_late_bloomer(length):
    for seed in range(40):
        k = 2 + seed % 7
        curves = random_imab_curves(k, length, seed, "late-bloomer")
        validate_imab(curves)
        a = random_imab_parameters(k, seed, "late-bloomer")[0]
        assert _is_late_bloomer(curves, a), (length, seed)
        report = late_bloomer_report(curves, a)
        assert report["late_bloomer"] and length // 20 < report["overtakes_at"] <= length


def test_uniform_family_mostly_lacks_late_bloomers():
    """The property can fail: of the uniform family's seeds 0–3 (k = 5, T = 10⁴: the instances
    of patil-random) only seed 3 has a late bloomer (measured: its best-potential arm 2 starts
    behind arm 3 and becomes OPT's arm at N = 9228)."""
    flags = []
    for seed in range(4):
        curves = random_imab_curves(5, 10_000, seed)
        a = random_imab_parameters(5, seed)[0]
        flags.append(_is_late_bloomer(curves, a))
        assert late_bloomer_report(curves, a)["late_bloomer"] == flags[-1]
    assert flags == [False, False, False, True]


def test_late_bloomer_family_needs_two_arms():
    with pytest.raises(SpecError, match="k"):
        random_imab_curves(1, 100, 0, "late-bloomer")


def test_uniform_family_is_unchanged_by_the_refactoring():
    """The uniform generator still draws k asymptotes then k log-uniform rates from
    default_rng(seed) (the documented recipe, re-implemented here)."""
    import math

    rng = np.random.default_rng(7)
    a = rng.uniform(0.1, 1.0, 4)
    rho = np.exp(rng.uniform(math.log(2.0), math.log(200.0), 4))
    n = np.arange(1, 301)
    expected = a[:, None] * (1 - np.exp(-(rho[:, None] / 300) * n))
    np.testing.assert_allclose(random_imab_curves(4, 300, 7), expected, rtol=1e-12, atol=1e-15)


def test_improving_module_does_not_import_rested():
    """The former import cycle (imab ↔ rested) is gone: the IMAB curves module (envs.improving)
    loads without rested."""
    code = (
        "import sys, impactbandits.envs.improving; "
        "print('impactbandits.envs.rested' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_potential_figure_draws_the_limits_not_the_last_values(tmp_path, monkeypatch):
    """patil-potential's dashed lines on inc_1 α = 0.5 sit at a = (1, 0.5) (hand-derived
    limits), not at the table's last values (0.9423…, 0.4711… at length 300)."""
    from impactbandits import ExperimentSpec, run_experiment
    from impactbandits.experiments.papers import patil

    spec = ExperimentSpec.create(
        name="potential-lines",
        environments=[
            {"kind": "increasing", "label": "inc_1", "family": "inc_1", "alpha": 0.5, "length": 300}
        ],
        policies=[{"kind": "patil", "label": "Algorithm 1"}],
        horizons=[300],
        seeds=1,
        checkpoints=10,
    )
    run_experiment(spec, tmp_path, backend="serial")
    drawn = []
    monkeypatch.setattr(patil, "save_png", lambda fig, run_dir, name, *_: drawn.append(fig) or name)
    patil.render_potential(tmp_path)
    (fig,) = drawn
    dashed = sorted(
        float(line.get_ydata()[0])
        for ax in fig.axes
        for line in ax.get_lines()
        if line.get_linestyle() == "--"
    )
    assert dashed == [0.5, 1.0]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"random_family": "late"}, r"environments\[0\]\.random_family: Input should be"),
        ({"random_family": "late-bloomer", "k": 1}, r"environments\[0\]\.k: the late-bloomer"),
    ],
)
def test_random_family_input_errors_name_the_field(env, message):
    from impactbandits import ExperimentSpec

    with pytest.raises(SpecError, match=message):
        ExperimentSpec.create(
            name="x",
            horizons=[5],
            policies=[{"kind": "patil"}],
            environments=[{"kind": "imab", "family": "random", "k": 3, **env}],
        )
