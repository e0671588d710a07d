#!/usr/bin/env python3
"""SMPyBandits' half of the side-by-side fidelity harness ``benchmarks/fidelity/smpybandits.py``.

Standalone: it imports NO impactbandits. Run it with the interpreter of the isolated SMPyBandits
environment (``benchmarks/smpybandits_env.sh``: SMPyBandits 0.9.7 with ``numpy<2``,
``scipy<1.14``); the driver does, one process per (instance, policy group)::

    PY=$(bash benchmarks/smpybandits_env.sh | tail -n 1)
    "$PY" benchmarks/fidelity/smpybandits_side.py < job.json > result.json

The job (JSON on stdin)::

    {"horizon": T, "seeds": n, "seed": base,
     "instance": {"kind": "bernoulli", "means": [...]}
               | {"kind": "piecewise", "listOfMeans": [[...], ...], "changePoints": [0, ...]}
               | {"kind": "rested", "curves": [[...], ...], "sigma": s},
     "oracle": the oracle's expected total reward over T rounds,
     "policies": [{"label": ..., "class": ..., "kwargs": {...}, "clip": false}, ...]}

A keyword value ``{"$ref": "Name"}`` names an attribute of ``SMPyBandits.Policies`` (a class
given to a wrapper or a posterior: ``"UCB"``, ``"klUCB_forGLR"``, ``"Posterior.Beta"``);
``"class": "DiscountedUCB@012fc13"`` is SMPyBandits' ``DiscountedUCB`` with the reward update
of the GitHub snapshot SMPyBandits/SMPyBandits@012fc13 (float discounted counts, every arm
discounted every round: commits 72916dc and 266168e of December 2019, after the 0.9.7 release,
whose ``discounted_pulls`` is an integer array, so every discounted count truncates back to 1).
``"clip": true`` clips the rewards given to that policy to [0, 1] (their Beta posteriors assert
rewards in [0, 1]; the rested instance's Gaussian noise leaves that interval).

The loop is SMPyBandits' own protocol (``Environment/Evaluator.py``): a fresh policy per
repetition with ``nbArms = K``, ``startGame()``, then ``T`` times ``arm = policy.choice()`` /
``policy.getReward(arm, reward)``. Repetition r seeds NumPy's legacy global generator and
Python's ``random`` (SMPyBandits' tie-breaking, Thompson draws, Exp3 draws and the Beta
posteriors' binarization use them) with ``(seed · 1000003 + r) mod 2^32``, and draws the
environment's noise from ``numpy.random.default_rng([seed, r])`` before the timed section:

* ``bernoulli`` / ``piecewise`` — a (T, K) table of uniforms, reward 1{u[t, arm] < μ_arm(t)},
  μ(t) = ``listOfMeans[s]`` for the last s with ``changePoints[s] ≤ t`` (t counted from 0, as
  their ``PieceWiseStationaryMAB``);
* ``rested`` — a (K, T) table of standard normals, the m-th pull of arm i gives
  ``curves[i][m − 1] + sigma · z[i, m − 1]`` (a re-implementation of the rested instance: the
  expected reward depends on the arm's own pull count only).

stdout carries one JSON object: per policy label, the pseudo-regret at T of every repetition
(``oracle − Σ_t μ_{A_t}``, the expected reward of the arm played, not the noisy reward), the CPU
seconds of all repetitions (``time.process_time()`` around construction, ``startGame()`` and the
loop) and the policy's derived parameters (γ, α, thresholds... as its object holds them).
SMPyBandits prints banners and debug lines on stdout: all of that goes to stderr.
"""

import contextlib
import json
import math
import platform
import random
import sys
import time

import numpy as np

#: Attributes reported when a policy object has them (derived parameters, for the record).
REPORTED = (
    "c",
    "tolerance",
    "alpha",
    "gamma",
    "tau",
    "epsilon",
    "M",
    "threshold_h",
    "proba_random_exploration",
    "window_size",
    "threshold_b",
    "delta",
    "_alpha0",
    "lazy_detect_change_only_x_steps",
    "lazy_try_value_s_only_x_steps",
)


def resolve(Policies, name):
    """``Policies.<name>`` with dotted names (``"Posterior.Beta"``)."""
    obj = Policies
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def head_discounted_ucb(Policies):
    """SMPyBandits' DiscountedUCB with the reward update of its GitHub snapshot @012fc13."""

    class DiscountedUCBHead(Policies.DiscountedUCB):
        def __init__(self, nbArms, *args, **kwargs):
            super().__init__(nbArms, *args, **kwargs)
            self.discounted_pulls = np.zeros(nbArms)  # @012fc13: floats, not ints

        def getReward(self, arm, reward):  # @012fc13, Policies/DiscountedUCB.py
            Policies.UCBalpha.getReward(self, arm, reward)
            self.discounted_pulls *= self.gamma
            self.discounted_rewards *= self.gamma
            self.discounted_pulls[arm] += 1
            reward = (reward - self.lower) / self.amplitude
            self.discounted_rewards[arm] += reward
            if self.useRealDiscount:
                self.delta_time_steps += 1
                self.delta_time_steps[arm] = 0

    return DiscountedUCBHead


def policy_factory(Policies, spec, n_arms):
    name = spec["class"]
    if name == "DiscountedUCB@012fc13":
        cls = head_discounted_ucb(Policies)
    else:
        cls = resolve(Policies, name)
    kwargs = {}
    for key, value in spec.get("kwargs", {}).items():
        if isinstance(value, dict) and "$ref" in value:
            value = resolve(Policies, value["$ref"])
        kwargs[key] = value
    return lambda: cls(n_arms, **kwargs)


def derived(policy):
    """The policy's (and its wrapped policy's) reported attributes that are plain numbers."""
    out = {}
    for owner, prefix in ((policy, ""), (getattr(policy, "policy", None), "policy.")):
        if owner is None:
            continue
        for attr in REPORTED:
            try:
                value = getattr(owner, attr)
            except Exception:  # a property that cannot be evaluated now
                continue
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                continue
            out[prefix + attr] = float(value)
    return out


def run_policy(Policies, spec, job):
    instance = job["instance"]
    horizon = int(job["horizon"])
    oracle = float(job["oracle"])
    base = int(job["seed"])
    kind = instance["kind"]
    clip = bool(spec.get("clip", False))

    if kind == "bernoulli":
        means_by_round = np.tile(np.asarray(instance["means"], dtype=float), (horizon, 1))
    elif kind == "piecewise":
        table = np.asarray(instance["listOfMeans"], dtype=float)
        points = np.asarray(instance["changePoints"], dtype=int)
        segment = np.searchsorted(points, np.arange(horizon), side="right") - 1
        means_by_round = table[segment]
    elif kind == "rested":
        curves = np.asarray(instance["curves"], dtype=float)
        sigma = float(instance["sigma"])
    else:
        raise ValueError(f"unknown instance kind {kind!r}")
    n_arms = curves.shape[0] if kind == "rested" else means_by_round.shape[1]
    make = policy_factory(Policies, spec, n_arms)

    regrets, expected_totals, cpu = [], [], 0.0
    params = {}
    for rep in range(int(job["seeds"])):
        # --- untimed set-up: the environment's noise and the global random states
        rng = np.random.default_rng([base, rep])
        legacy = (base * 1_000_003 + rep) % 2**32
        np.random.seed(legacy)  # noqa: NPY002 - SMPyBandits draws from the global state
        random.seed(legacy)  # their with_proba / Beta binarization use Python's random
        if kind == "rested":
            z = rng.standard_normal((n_arms, horizon))
            mean_rows = curves.tolist()
            noisy_rows = (curves + sigma * z).tolist()
            pulls = [0] * n_arms
        else:
            u = rng.random((horizon, n_arms))
            mean_rows = means_by_round.tolist()
            reward_rows = (u < means_by_round).astype(float).tolist()
        total = 0.0

        # --- timed section: construction, startGame() and the choice/getReward loop
        start = time.process_time()
        policy = make()
        policy.startGame()
        if kind == "rested":
            for _ in range(horizon):
                arm = int(policy.choice())
                m = pulls[arm]
                pulls[arm] = m + 1
                total += mean_rows[arm][m]
                reward = noisy_rows[arm][m]
                if clip:
                    reward = min(1.0, max(0.0, reward))
                policy.getReward(arm, reward)
        else:
            for t in range(horizon):
                arm = int(policy.choice())
                total += mean_rows[t][arm]
                policy.getReward(arm, reward_rows[t][arm])
        cpu += time.process_time() - start

        regrets.append(oracle - total)
        expected_totals.append(total)
        if rep == 0:
            params = derived(policy)
    return {
        "class": spec["class"],
        "kwargs": spec.get("kwargs", {}),
        "clip": clip,
        "regrets": regrets,
        "expected": expected_totals,
        "cpu": cpu,
        "derived": params,
        "finite": all(math.isfinite(r) for r in regrets),
    }


def main():
    job = json.load(sys.stdin)
    real_stdout = sys.stdout
    # SMPyBandits prints banners at import and debug lines in constructors: keep stdout for
    # the JSON only.
    with contextlib.redirect_stdout(sys.stderr):
        import scipy
        import SMPyBandits
        import SMPyBandits.Policies as Policies  # explicit: the package __init__ swallows
        # ImportError for its subpackages

        np.seterr(all="ignore")  # their indices divide by zero pull counts on purpose
        results = {}
        for spec in job["policies"]:
            print("running {} ...".format(spec["label"]), file=sys.stderr)
            results[spec["label"]] = run_policy(Policies, spec, job)
    output = {
        "library": "SMPyBandits",
        "version": getattr(SMPyBandits, "__version__", "unknown"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "horizon": job["horizon"],
        "seeds": job["seeds"],
        "results": results,
    }
    json.dump(output, real_stdout)
    real_stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
