"""SMPyBandits side by side with ours: the field's reference implementations on the same instances.

One command (SMPyBandits' isolated environment is created on first use by
``benchmarks/smpybandits_env.sh``)::

    .venv/bin/python benchmarks/fidelity/smpybandits.py [--seeds 50] [--horizon 5000]
        [--instances stationary,problem1,problem2,rested] [--policies ucb1,kl-ucb,...]
        [--toml docs/fidelity/harness-smpybandits.toml]

Protocol. For every instance and every pair (our registry kind ↔ their class), each library runs
its own policy ``--seeds`` times (default 50; at least 30 for a table worth keeping) for T =
``--horizon`` rounds:

* **theirs** — ``benchmarks/fidelity/smpybandits_side.py`` in the SMPyBandits 0.9.7 venv (one
  process per instance and pair, the job as JSON on stdin): a fresh policy per repetition,
  ``startGame()``, then T × ``choice()`` / ``getReward()``, as their ``Evaluator``; repetition r
  seeds NumPy's legacy global generator and Python's ``random`` (their tie-breaking and their
  draws) and draws the environment's noise from its own ``default_rng([seed, r])``;
* **ours** — :func:`impactbandits.kernels.simulate` on the compiled loop, all seeds in one
  batched call (``EnvironmentRandom(seed, 1, seeds)``, ``BatchRNG.from_key(seed, (2,), seeds)``),
  after an untimed warm-up call that compiles (or loads) the loop.

Compared: the pseudo-regret at T (oracle − Σ_t μ_{A_t}: the expected reward of the arms played,
not the noisy rewards) — mean ± half-width of the 95% Student-t interval on each side, and
Welch's two-sample t-test p-value (unequal variances) — and the CPU seconds of each side
(``time.process_time()``: theirs around each repetition's construction and loop, summed; ours
around the batched call). Oracles: T·max μ (stationary); Σ_t max_i μ_i(t) (piecewise, the
restless oracle ``best_arm_per_round``); the exact optimal allocation OPT(T) (rested, Lindner
et al.'s instance 3: :func:`impactbandits.oracles.rested.allocation_values`, not the best fixed
arm).

Why not paired: the two libraries draw their noise and their policies' randomness from
different generators (SMPyBandits from NumPy's and Python's global states; ours from
counter-based streams keyed by replication, arm and pull), so seed r of one side and seed r of
the other see different rewards. Each side's regrets are an i.i.d. sample of its regret
distribution, and the test asks whether the two means differ — a distributional comparison. A
small p-value flags an implementation difference (or a parameter mapping that is not one); a
large one is no proof of identity.

Instances: (1) ``stationary`` — Bernoulli means 0.1, …, 0.9 (their Problem −2 of
``configuration_nonstationary.py``); (2) ``problem1`` and (3) ``problem2`` — their piecewise
Problems 1 and 2, K = 3, change points at 0, 0.2T, 0.4T, 0.6T, 0.8T (``int(400 k T / 2000)`` as
they write them), so Υ_T = 4 break points; (4) ``rested`` — Lindner et al.'s single-peaked
instance 3 with Gaussian noise σ = 0.05 (per pull), their side driven by a re-implementation of
that rested environment in the side script (the curves are passed in the job). Stationary
policies run on (1) and (4), the non-stationary ones on (2) and (3), with UCB1 and Thompson
sampling on (2) and (3) too as references.

Parameters: the matched row runs ours at THEIR values (the class defaults, or what their
``configuration_nonstationary.py`` passes where it passes arguments: SMPyBandits/SMPyBandits@
012fc13), translated into our parametrisation where the formulas differ (the ``setting`` column
says how); a second row runs ours at our own defaults where they differ. A pair whose kind is not
registered here, or whose matched parameter has no counterpart in our class's signature (read at
run time, never guessed), is skipped with a note in the table.

What their code does differently (read in SMPyBandits 0.9.7's ``Policies/``, file:line; the same
at 012fc13 unless said). Everywhere: their ``t`` in an index is the number of plays so far (our
t − 1), never-pulled arms are tried in random order and index ties are broken at random (ours:
lowest index); their ``Evaluator`` applies a change point τ after round τ's draw (one round late:
``Environment/Evaluator.py:1008``) — both sides here use the same means, ``changePoints`` as
0-based first rounds.

* kl-UCB: their ``c`` multiplies ln t (``klUCB.py:72``; ``klUCBPlus.py:48``: c ln(t/n)); ours is
  ln t + c ln ln t, so their default c = 1 is our c = 0. Their bisection stops at 1e-4
  (``TOLERANCE``, ``klUCB.py:29``), ours after 32 halvings.
* UCB-V: their exploration is ln t (ζ = 1) with 3·amplitude·ln t / n (``UCBV.py:58``): ours at
  ζ = 1, c = 1, b = 1; their variance is not clamped at 0 (ours is).
* D-UCB: index mean + sqrt(α ln n_γ / (2 N_γ)) (``DiscountedUCB.py:99``) against our
  mean + 2B sqrt(ξ ln n_γ / N_γ): ξ = α/8 with B = 1. In 0.9.7 ``discounted_pulls`` is an
  integer array (line 40), so γ·N + 1 truncates back to 1 at every pull: every discounted count
  stays 1 and the index is the discounted *sum* of rewards plus a constant. The GitHub snapshot
  fixes it (float counts, all arms discounted every round); its index then gives +∞ to an arm
  whose discounted count falls below 1 (forced re-exploration), ours never does.
* SW-UCB: mean + sqrt(α ln min(t, τ) / N_τ) (``SlidingWindowUCB.py:84``) is ours with ξ = α,
  B = 1. SW-klUCB: level c·ln min(t, τ), c = 1 (our c = 0).
* D-TS: their ``getReward`` calls ``self.posterior[arm].discount()`` once per *other* arm
  (``DiscountedBayesianIndexPolicy.py:74``): the pulled arm is discounted γ^K per pull and the
  other arms never; ours (Raj & Kalyani's Algorithm 2) discounts every arm every round.
* Exp3.S: γ and α = 1/T are Corollary 8.3's with Υ_T where the paper has the hardness S
  (``Exp3S.py:54``, ``66``): ours with ``hardness = Υ_T``; theirs first plays every arm once
  (``Exp3.py:116``).
* CUSUM-UCB: the uniform exploration draws ``randint(0, K − 1)``, never the last arm
  (``CD_UCB.py:95``); the CUSUM sums run over the first M samples too and the localisation
  returns k + M + 1 with k already counted from M + 1 (``CUSUM_UCB.py:168``, ``173``).
* M-UCB: ``detect_change`` returns the tuple ``(has_detected, None)`` once the window is full
  (``Monitored_UCB.py:215``), which is always true in ``if self.detect_change(arm)`` (line 164):
  M-UCB restarts every time an arm's window of w samples fills, whatever the test says.
* GLR-klUCB: ``klUCB_forGLR``'s level is c·ln t_k with c = 3 (``klUCB_forGLR.py:25``, ``64``),
  not ln t_k + 3 ln ln t_k as its docstring says; their configuration passes δ and α₀ itself, so
  the bug of ``smart_delta_from_T_UpsilonT`` (``GLR_UCB.py:275``, δ = 1/sqrt(0.1) whenever it is
  used) is not hit.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import subprocess
import sys
import time
import tomllib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from intervals import mean_interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SIDE = HERE / "smpybandits_side.py"
ENV_SCRIPT = ROOT / "benchmarks" / "smpybandits_env.sh"
SEED = 2024

#: Their Problems 1 and 2 (configuration_nonstationary.py, lines 157–204), one row per segment.
PROBLEM_1 = [[0.3, 0.5, 0.9], [0.3, 0.2, 0.9], [0.3, 0.2, 0.1], [0.7, 0.2, 0.1], [0.7, 0.5, 0.1]]
PROBLEM_2 = [[0.4, 0.5, 0.9], [0.5, 0.4, 0.7], [0.6, 0.3, 0.5], [0.7, 0.2, 0.3], [0.8, 0.1, 0.1]]
#: Their Problem −2 (configuration_nonstationary.py, lines 116–128): stationary, K = 9.
STATIONARY_MEANS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
RESTED_SIGMA = 0.05

STATIONARY_PAIRS = ("ucb1", "thompson", "kl-ucb", "kl-ucb+", "ucb-v", "moss")
NONSTATIONARY_PAIRS = (
    "ucb1",
    "thompson",
    "d-ucb",
    "sw-ucb",
    "sw-kl-ucb",
    "d-ts",
    "exp3s",
    "cusum-ucb",
    "m-ucb",
    "glr-klucb",
)
ALL_PAIRS = tuple(dict.fromkeys(STATIONARY_PAIRS + NONSTATIONARY_PAIRS))


# --------------------------------------------------------------------------- instances


@dataclass
class Instance:
    name: str
    title: str
    kind: str  # "stationary" | "piecewise" | "rested"
    horizon: int
    k: int
    breakpoints: int  # Υ_T, change points after 0
    env_kind: str
    env_params: dict[str, Any]
    job: dict[str, Any]  # their side's "instance"
    pairs: tuple[str, ...]
    oracle: float = 0.0


def change_points(horizon: int) -> list[int]:
    """Their ``int(400 k T / 2000)``, k = 0..4 (configuration_nonstationary.py, lines 169–175)."""
    return [int(400 * k * horizon / 2000.0) for k in range(5)]


def make_instance(name: str, horizon: int) -> Instance:
    if name == "stationary":
        means = STATIONARY_MEANS
        return Instance(
            name, f"(1) stationary Bernoulli means 0.1..0.9 (their Problem -2), K = 9, "
            f"T = {horizon}", "stationary", horizon, len(means), 0, "bernoulli",
            {"means": means}, {"kind": "bernoulli", "means": means}, STATIONARY_PAIRS,
        )  # fmt: skip
    if name in ("problem1", "problem2"):
        table = PROBLEM_1 if name == "problem1" else PROBLEM_2
        points = change_points(horizon)
        number = name[-1]
        return Instance(
            name, f"({int(number) + 1}) piecewise Bernoulli, their Problem {number}, K = 3, "
            f"change points {', '.join(map(str, points))}, T = {horizon}", "piecewise", horizon,
            3, len(points) - 1, "piecewise",
            {"means": table, "change_points": points, "length": horizon},
            {"kind": "piecewise", "listOfMeans": table, "changePoints": points},
            NONSTATIONARY_PAIRS,
        )  # fmt: skip
    if name == "rested":
        params = {"instance": 3, "length": horizon, "noise": "gaussian", "sigma": RESTED_SIGMA}
        return Instance(
            name, f"(4) rested: Lindner et al.'s single-peaked instance 3, K = 2, Gaussian "
            f"noise sigma = {RESTED_SIGMA}, T = {horizon}; regret against OPT(T)", "rested",
            horizon, 2, 0, "single-peaked", params, {"kind": "rested"}, STATIONARY_PAIRS,
        )  # fmt: skip
    raise SystemExit(f"unknown instance {name!r}")


def build_env(instance: Instance) -> Any:
    from impactbandits.registry import build_environment

    return build_environment(instance.env_kind, instance.env_params)


def prepare(instance: Instance) -> None:
    """The oracle's total over T rounds, and the rested curves for their side."""
    from impactbandits.core import EnvironmentRandom

    env = build_env(instance)
    T = instance.horizon
    if instance.kind == "stationary":
        instance.oracle = T * max(STATIONARY_MEANS)
    elif instance.kind == "piecewise":
        from impactbandits.oracles.restless import best_arm_per_round

        env.reset(EnvironmentRandom(SEED, 1, range(1)))
        instance.oracle = float(best_arm_per_round(env, np.array([T]))[0, 0])
    else:
        from impactbandits.oracles.rested import allocation_values

        curves = np.asarray(env.curves, dtype=float)[:, :T]
        instance.oracle = float(allocation_values(curves)[T])
        instance.job = {"kind": "rested", "curves": curves.tolist(), "sigma": RESTED_SIGMA}


# --------------------------------------------------------------------------- pairs


@dataclass
class Ours:
    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Theirs:
    label: str
    cls: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    clip: bool = False


@dataclass
class Row:
    pair: str
    setting: str
    ours: Ours
    theirs: Theirs
    note: str = ""


def ref(name: str) -> dict[str, str]:
    """A class of ``SMPyBandits.Policies`` given as a keyword argument (the side resolves it)."""
    return {"$ref": name}


def pair_rows(key: str, inst: Instance) -> list[Row]:
    """The rows of pair ``key`` on ``inst``; file:line refer to SMPyBandits 0.9.7's
    ``Policies/`` (identical at 012fc13 unless said) and its configuration_nonstationary.py."""
    T, K, U = inst.horizon, inst.k, max(1, inst.breakpoints)
    rested = inst.kind == "rested"
    if key == "ucb1":
        return [Row("UCB1 <-> UCB", "c = 2 both", Ours("ucb1", {"c": 2.0}), Theirs("UCB", "UCB"),
                    "same index; their t = plays so far")]  # fmt: skip
    if key == "thompson":
        note = "both binarize r (Posterior/Beta.py:135)"
        if rested:
            note += "; theirs sees r clipped to [0,1] (assert)"
        return [Row("TS <-> Thompson", "Beta(1,1), binarized",
                    Ours("thompson", {"prior_alpha": 1.0, "prior_beta": 1.0, "update": "binarize"}),
                    Theirs("Thompson", "Thompson", {"posterior": ref("Posterior.Beta")},
                           clip=rested), note)]  # fmt: skip
    if key == "kl-ucb":
        theirs = Theirs("klUCB", "klUCB")
        return [
            Row("kl-UCB <-> klUCB", "ours c=0 = their c=1 (ln t)",
                Ours("kl-ucb", {"c": 0.0, "level": "kl-ucb"}), theirs,
                "their c scales ln t (klUCB.py:72)"),
            Row("kl-UCB <-> klUCB", "ours c=1 (ln t + ln ln t)",
                Ours("kl-ucb", {"c": 1.0, "level": "kl-ucb"}), theirs,
                "literal c = 1: not their level"),
        ]  # fmt: skip
    if key == "kl-ucb+":
        return [Row("kl-UCB+ <-> klUCBPlus", "ours c=0 = their c=1 (ln(t/n))",
                    Ours("kl-ucb", {"c": 0.0, "level": "kl-ucb+"}),
                    Theirs("klUCBPlus", "klUCBPlus"), "klUCBPlus.py:48")]  # fmt: skip
    if key == "ucb-v":
        theirs = Theirs("UCBV", "UCBV")
        return [
            Row("UCB-V <-> UCBV", "ours at their zeta=1, c=1, b=1",
                Ours("ucb-v", {"zeta": 1.0, "c": 1.0, "b": 1.0}), theirs, "UCBV.py:58"),
            Row("UCB-V <-> UCBV", "ours defaults (zeta=1.2)", Ours("ucb-v"), theirs),
        ]  # fmt: skip
    if key == "moss":
        return [Row("MOSS <-> MOSSAnytime", "alpha = 1 both", Ours("moss", {"alpha": 1.0}),
                    Theirs("MOSSAnytime", "MOSSAnytime", {"alpha": 1.0}),
                    "MOSSAnytime.py:43")]  # fmt: skip
    if key == "d-ucb":
        # theirs: mean + sqrt(alpha ln n / (2 N)) (DiscountedUCB.py:99); ours: mean +
        # 2B sqrt(xi ln n / N): equal for B = 1, xi = alpha / 8.
        pypi = Theirs("DiscountedUCB", "DiscountedUCB", {"alpha": 1, "gamma": 0.99})
        head = Theirs("DiscountedUCB@012fc13", "DiscountedUCB@012fc13",
                      {"alpha": 1, "gamma": 0.99})  # fmt: skip
        matched = Ours("d-ucb", {"discount": 0.99, "xi": 0.125, "b": 1.0})
        return [
            Row("D-UCB <-> DiscountedUCB", "ours at their gamma=.99, alpha=1 (xi=1/8)", matched,
                pypi, "0.9.7: int discounted counts (l.40)"),
            Row("D-UCB <-> DiscountedUCB@012fc13", "ours at their gamma=.99, alpha=1 (xi=1/8)",
                matched, head, "git fix: float counts"),
            Row("D-UCB <-> DiscountedUCB", "ours defaults (1-1/(4 sqrt T), xi=.6)",
                Ours("d-ucb"), pypi),
        ]  # fmt: skip
    if key == "sw-ucb":
        theirs = Theirs("SWUCB", "SWUCB", {"tau": 1000, "alpha": 1.0})
        return [
            Row("SW-UCB <-> SWUCB", "ours at their tau=1000, alpha=1 (xi=1)",
                Ours("sw-ucb", {"window": 1000, "xi": 1.0, "b": 1.0}), theirs,
                "same index (SlidingWindowUCB.py:84)"),
            Row("SW-UCB <-> SWUCB", "ours defaults (4 sqrt(T ln T), xi=.6)", Ours("sw-ucb"),
                theirs),
        ]  # fmt: skip
    if key == "sw-kl-ucb":
        # configuration_nonstationary.py:499–502 (TAUS) and 688–692
        tau = int(2 * math.sqrt(T * math.log(T) / U))
        theirs = Theirs("SWklUCB", "SWklUCB", {"tau": tau})
        return [
            Row("SW-klUCB <-> SWklUCB", f"ours at their tau={tau}, c=0 = their c=1",
                Ours("sw-kl-ucb", {"window": tau, "c": 0.0}), theirs, "config TAUS"),
            Row("SW-klUCB <-> SWklUCB", "ours defaults", Ours("sw-kl-ucb"), theirs),
        ]  # fmt: skip
    if key == "d-ts":
        # configuration_nonstationary.py:693–700 (GAMMAS = [0.95], line 503)
        return [Row("D-TS <-> DiscountedThompson", "gamma = 0.95 both",
                    Ours("d-ts", {"discount": 0.95}),
                    Theirs("DiscountedThompson", "DiscountedThompson",
                           {"posterior": ref("Posterior.DiscountedBeta"), "gamma": 0.95}),
                    "theirs discounts the pulled arm only")]  # fmt: skip
    if key == "exp3s":
        # configuration_nonstationary.py:629–640: horizon and max_nb_random_events
        theirs = Theirs("Exp3S", "Exp3S", {"horizon": T, "max_nb_random_events": U})
        return [
            Row("Exp3.S <-> Exp3S", f"ours S = Upsilon_T = {U} (their formula)",
                Ours("exp3s", {"hardness": U}), theirs, "same gamma, alpha = 1/T"),
            Row("Exp3.S <-> Exp3S", "ours defaults (S = 1)", Ours("exp3s"), theirs),
        ]  # fmt: skip
    if key == "cusum-ucb":
        # configuration_nonstationary.py:747–771 (with UCB, the class default, not klUCB);
        # CUSUM_UCB.py:103–104: h = ln(T/Υ), α = sqrt(Υ/T ln(T/Υ)); M = 100 (line 51); their
        # UCB's t is set to n_t = Σ plays since each arm's restart (lines 142–145): ours ξ = 2
        h = math.log(T / U)
        alpha = min(1.0, math.sqrt(math.log(T / U) / (T / U)))
        theirs = Theirs("CUSUM-UCB", "CUSUM_IndexPolicy", {
            "policy": ref("UCB"), "horizon": T, "max_nb_random_events": U, "epsilon": 0.1,
            "lazy_detect_change_only_x_steps": 20, "use_localization": True})  # fmt: skip
        matched = {"threshold": h, "alpha": alpha, "warmup": 100, "drift": 0.1, "xi": 2.0}
        return [
            Row("CUSUM-UCB <-> CUSUM_IndexPolicy", f"ours at their h, alpha (Upsilon={U}), eps=.1",
                Ours("cusum-ucb", matched), theirs, "theirs: lazy 20, localization"),
            Row("CUSUM-UCB <-> CUSUM_IndexPolicy", "ours defaults (Upsilon=1, M=150, eps=.1)",
                Ours("cusum-ucb"), theirs),
        ]  # fmt: skip
    if key == "m-ucb":
        # configuration_nonstationary.py:507 (w = K ceil(T/100)), 526 (delta), 727–745;
        # Monitored_UCB.py:82, 92: b = sqrt(w/2 ln(2KT^2)), gamma = sqrt(M K (2b + 3 sqrt w)/(2T)),
        # M = 1 when max_nb_random_events is not given (line 65)
        w = K * math.ceil(T / 100)
        b = math.sqrt((w / 2) * math.log(2 * K * T**2))
        gamma = min(1.0, math.sqrt(K * (2 * b + 3 * math.sqrt(w)) / (2 * T)))
        theirs = Theirs("M-UCB", "Monitored_IndexPolicy",
                        {"policy": ref("UCB"), "horizon": T, "w": w, "delta": 0.1})  # fmt: skip
        even = w + w % 2  # ours splits the window in two equal halves
        setting = f"ours at their w={w}, b, gamma" + ("" if even == w else f" (w={even})")
        return [
            Row("M-UCB <-> Monitored_IndexPolicy", setting,
                Ours("m-ucb", {"window": even, "threshold": b, "gamma": gamma}), theirs,
                "theirs restarts when a window fills"),
            Row("M-UCB <-> Monitored_IndexPolicy", "ours defaults (Remark 1's w)", Ours("m-ucb"),
                theirs),
        ]  # fmt: skip
    if key == "glr-klucb":
        # configuration_nonstationary.py:539–557 and 818–886: Local (per-arm restart,
        # delta = 1/sqrt(K Υ T), alpha0 = 0.05 sqrt(K Υ ln T / T)) and Global (delta =
        # 1/sqrt(Υ T), alpha0 = 0.05 sqrt(Υ ln T / T)); lazy 10/10 for T ≤ 20000; a fixed
        # alpha0 (GLR_UCB.py:336, 356–357). Their index is klUCB_forGLR's 3 ln(t − τ_k) (c = 3 times
        # the log, klUCB_forGLR.py:64): ours has ln x + c ln ln x, so no counterpart (c = 0).
        rows = []
        for scope, local in (("Local", True), ("Global", False)):
            spread = K * U if local else U
            delta = 1 / math.sqrt(spread * T)
            alpha = 0.05 * math.sqrt(spread * math.log(T) / T)
            theirs = Theirs(
                f"GLR-klUCB({scope})", "BernoulliGLR_IndexPolicy_WithDeterministicExploration",
                {"policy": ref("klUCB_forGLR"), "per_arm_restart": local, "delta": delta,
                 "alpha0": alpha, "lazy_detect_change_only_x_steps": 10,
                 "lazy_try_value_s_only_x_steps": 10, "use_localization": True})  # fmt: skip
            matched = {"delta": delta, "alpha": alpha, "exploration": "fixed",
                       "restart": scope.lower(), "threshold": "practical", "c": 0.0,
                       "test_every": 10, "split_every": 10}  # fmt: skip
            rows.append(Row(f"GLR-klUCB <-> BernoulliGLR({scope})",
                            "ours at their delta, alpha0, lazy 10/10",
                            Ours("glr-klucb", matched), theirs,
                            "their index 3 ln t_k: none of ours"))  # fmt: skip
        rows.append(Row("GLR-klUCB <-> BernoulliGLR(Local)", "ours defaults (growing alpha)",
                        Ours("glr-klucb"), rows[0].theirs))  # fmt: skip
        return rows
    raise SystemExit(f"unknown pair {key!r}")


# --------------------------------------------------------------------------- our side


def resolve_ours(spec: Ours) -> tuple[dict[str, Any] | None, str]:
    """Our parameters for ``spec`` after checking their names against the registered class's
    signature, or ``None`` and the reason the row is skipped."""
    from impactbandits.registry import POLICIES, resolve

    if spec.kind not in POLICIES:
        return None, f"skipped: '{spec.kind}' is not registered"
    names = list(inspect.signature(resolve("policy", spec.kind, "kind")).parameters)
    missing = [name for name in spec.params if name not in names]
    if missing:
        return None, (
            f"skipped: '{spec.kind}' has no parameter {', '.join(missing)} "
            f"(its parameters: {', '.join(names) or 'none'})"
        )
    return dict(spec.params), ""


def run_ours(inst: Instance, kind: str, params: dict[str, Any], seeds: int) -> dict[str, Any]:
    from impactbandits import kernels
    from impactbandits.core import BatchRNG, EnvironmentRandom
    from impactbandits.kernels import simulate
    from impactbandits.kernels.dispatch import compiled_step, pull_model
    from impactbandits.registry import build_policy

    T = inst.horizon
    env = build_env(inst)
    # untimed warm-up on one seed and all T rounds (the loop is specialised on the arrays'
    # layout, which a shorter run can change): compiles, or loads from numba's cache, the loop
    simulate(env, build_policy(kind, params), T, T, np.array([T]),
             EnvironmentRandom(SEED + 1, 1, range(1)), BatchRNG.from_key(SEED + 1, (2,), range(1)),
             compiled=True)  # fmt: skip
    policy = build_policy(kind, params)
    reps = range(seeds)
    start = time.process_time()
    trajectory = simulate(env, policy, T, T, np.array([T]), EnvironmentRandom(SEED, 1, reps),
                          BatchRNG.from_key(SEED, (2,), reps), compiled=True)  # fmt: skip
    cpu = time.process_time() - start
    compiled = (
        kernels.available() and compiled_step(policy) is not None and pull_model(env, T) is not None
    )
    expected = np.asarray(trajectory.expected)[:, -1]
    return {"regrets": (inst.oracle - expected).tolist(), "cpu": cpu, "compiled": compiled}


# --------------------------------------------------------------------------- their side


def smpy_python() -> str:
    setup = subprocess.run(["bash", str(ENV_SCRIPT)], capture_output=True, text=True)
    if setup.returncode != 0:
        sys.exit("benchmarks/smpybandits_env.sh failed:\n" + sanitize(setup.stderr[-2000:]))
    return setup.stdout.strip().splitlines()[-1]


def sanitize(text: str) -> str:
    """No machine paths in what we print: the repository root becomes '.'."""
    return text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")


def run_theirs(
    python: str, inst: Instance, specs: list[Theirs], seeds: int
) -> dict[str, dict[str, Any]]:
    job = {
        "horizon": inst.horizon,
        "seeds": seeds,
        "seed": SEED,
        "instance": inst.job,
        "oracle": inst.oracle,
        "policies": [
            {"label": s.label, "class": s.cls, "kwargs": s.kwargs, "clip": s.clip} for s in specs
        ],
    }
    run = subprocess.run([python, str(SIDE)], input=json.dumps(job), capture_output=True,
                         text=True, cwd=ROOT)  # fmt: skip
    if run.returncode != 0:
        lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
        error = sanitize(lines[-1] if lines else f"exit status {run.returncode}")
        return {s.label: {"error": error} for s in specs}
    out = json.loads(run.stdout.strip().splitlines()[-1])
    results: dict[str, dict[str, Any]] = out["results"]
    for value in results.values():
        value["version"] = out.get("version", "?")
    return results


# --------------------------------------------------------------------------- table


HEADER = (
    f"{'pair':35s} {'setting':43s} {'ours':>17s} {'SMPyBandits':>17s} {'Welch p':>7s}  "
    f"{'CPU s ours / theirs':>19s}  note"
)


def welch(a: list[float], b: list[float]) -> str:
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return "n/a"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # identical values: scipy warns (with its path)
        p = stats.ttest_ind(a, b, equal_var=False).pvalue
    return "n/a" if not np.isfinite(p) else (f"{p:.2g}" if p < 0.01 else f"{p:.2f}")


def seconds(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def line(row: Row, ours: str, theirs: str, p: str, cpu: str, note: str) -> str:
    return (
        f"{row.pair:35s} {row.setting:43s} {ours:>17s} {theirs:>17s} {p:>7s}  {cpu:>19s}  {note}"
    ).rstrip()


def run_instance(
    python: str, inst: Instance, keys: list[str], seeds: int, emit: Callable[[str], None]
) -> None:
    prepare(inst)
    emit("")
    emit(f"{inst.title}; {seeds} seeds each side; oracle {inst.oracle:.1f}")
    emit(HEADER)
    ours_cache: dict[str, dict[str, Any]] = {}
    for key in keys:
        rows = pair_rows(key, inst)
        resolved = [resolve_ours(row.ours) for row in rows]
        # their side only for the rows that will be compared
        runnable = [
            row.theirs
            for row, (params, _) in zip(rows, resolved, strict=True)
            if params is not None
        ]
        specs = list({spec.label: spec for spec in runnable}.values())
        theirs = run_theirs(python, inst, specs, seeds) if specs else {}
        for row, (params, skip) in zip(rows, resolved, strict=True):
            if params is None:
                emit(line(row, "-", "-", "-", "-", skip))
                continue
            cache_key = json.dumps([row.ours.kind, params], sort_keys=True)
            if cache_key not in ours_cache:
                try:
                    ours_cache[cache_key] = run_ours(inst, row.ours.kind, params, seeds)
                except Exception as error:  # a policy being written concurrently may fail
                    message = sanitize(str(error).splitlines()[0] if str(error) else repr(error))
                    ours_cache[cache_key] = {"error": f"ours failed: {message}"}
            mine, their = ours_cache[cache_key], theirs[row.theirs.label]
            notes = [row.note] if row.note else []
            if "error" in mine or "error" in their:
                failed = [mine["error"]] if "error" in mine else []
                if "error" in their:
                    failed.append(f"SMPyBandits failed: {their['error']}")
                emit(line(row, "-", "-", "-", "-", "; ".join(notes + failed)))
                continue
            if not mine["compiled"]:
                notes.append("ours on the readable loop")
            ours_text = mean_interval(mine["regrets"], 8)
            theirs_text = mean_interval(their["regrets"], 8)
            cpu = f"{seconds(mine['cpu'])} / {seconds(their['cpu'])}"
            p = welch(mine["regrets"], their["regrets"])
            emit(line(row, ours_text, theirs_text, p, cpu, "; ".join(notes)))


def toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def write_toml(path: Path, title: str, command: str, text: str) -> None:
    """Add (or replace, same title) one ``[[table]]`` entry, keeping the file's other tables
    and its leading comment lines."""
    if "'''" in text:
        raise SystemExit("the table contains ''' and cannot be written as a TOML literal")
    header: list[str] = []
    tables: list[dict[str, str]] = []
    if path.exists():
        existing = path.read_text()
        first = existing.find("[[table]]")
        header = [ln for ln in existing[: max(first, 0)].splitlines() if ln.startswith("#")]
        tables = [t for t in tomllib.loads(existing).get("table", []) if t.get("title") != title]
    else:
        header = [
            "# Side-by-side tables printed by benchmarks/fidelity/smpybandits.py (kept verbatim).",
            "# SMPyBandits 0.9.7 (PyPI, benchmarks/smpybandits_env.sh) vs ours on the same "
            "instances;",
            "# distributional comparison (different random streams): Welch's t-test on the "
            "regret at T.",
        ]
    tables.append({"title": title, "command": command, "text": text})
    out = [*header]
    for table in tables:
        body = table["text"]
        out += [
            "",
            "[[table]]",
            f"title = {toml_string(table['title'])}",
            f"command = {toml_string(table['command'])}",
            f"text = '''\n{body.strip(chr(10))}\n'''",
        ]
    path.write_text("\n".join(out).lstrip("\n") + "\n")
    tomllib.loads(path.read_text())  # must parse back


def command_line(args: argparse.Namespace) -> str:
    parts = [".venv/bin/python benchmarks/fidelity/smpybandits.py",
             f"--seeds {args.seeds}", f"--horizon {args.horizon}"]  # fmt: skip
    if args.instances != ",".join(INSTANCE_NAMES):
        parts.append(f"--instances {args.instances}")
    if args.policies != ",".join(ALL_PAIRS):
        parts.append(f"--policies {args.policies}")
    return " ".join(parts)


INSTANCE_NAMES = ("stationary", "problem1", "problem2", "rested")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50, help="repetitions per side (50)")
    parser.add_argument("--horizon", type=int, default=5000, help="rounds T (5000)")
    parser.add_argument("--instances", default=",".join(INSTANCE_NAMES),
                        help=f"comma-separated among {','.join(INSTANCE_NAMES)}")  # fmt: skip
    parser.add_argument("--policies", default=",".join(ALL_PAIRS),
                        help=f"comma-separated pairs among {','.join(ALL_PAIRS)}")  # fmt: skip
    parser.add_argument("--toml", type=Path, help="also write the table as a [[table]] entry")
    args = parser.parse_args()
    instances = [n.strip() for n in args.instances.split(",") if n.strip()]
    keys = [k.strip() for k in args.policies.split(",") if k.strip()]
    unknown = [n for n in instances if n not in INSTANCE_NAMES] + [
        k for k in keys if k not in ALL_PAIRS
    ]
    if unknown:
        parser.error(f"unknown instance or pair: {', '.join(unknown)}")
    if args.seeds < 2 or args.horizon < 10:
        parser.error("--seeds must be >= 2 and --horizon >= 10")

    python = smpy_python()
    lines: list[str] = []

    def emit(text: str) -> None:
        lines.append(text)
        print(text, flush=True)

    emit(
        "SMPyBandits 0.9.7 (their side, benchmarks/.smpy-venv) vs impactbandits (ours, compiled "
        "loop): pseudo-regret at T, mean ± 95% t-interval;"
    )
    emit(
        "Welch p: two-sample t-test, unequal variances (not paired: different random streams); "
        "CPU s: process time, all seeds."
    )
    if args.seeds < 30:
        emit(f"(only {args.seeds} seeds: a trial run, not a table to keep)")
    for name in instances:
        inst = make_instance(name, args.horizon)
        chosen = [k for k in keys if k in inst.pairs]
        if chosen:
            run_instance(python, inst, chosen, args.seeds, emit)
    if args.toml is not None:
        path = args.toml if args.toml.is_absolute() else Path.cwd() / args.toml
        title = (
            f"SMPyBandits 0.9.7 vs ours: {', '.join(instances)}, T = {args.horizon}, "
            f"{args.seeds} seeds each side"
        )
        write_toml(path, title, command_line(args), "\n".join(lines))
        try:
            shown = path.resolve().relative_to(ROOT)
        except ValueError:
            shown = Path(path.name)
        print(f"\nwrote {shown}", file=sys.stderr)


if __name__ == "__main__":
    main()
