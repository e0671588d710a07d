#!/usr/bin/env python3
"""Reference half of the speed benchmark: SMPyBandits policies on a 2-arm Bernoulli problem.

This script is standalone: it does NOT import impactbandits.  It is meant to be run
with the interpreter of the isolated SMPyBandits virtual environment created by
``benchmarks/smpybandits_env.sh`` (SMPyBandits 0.9.7 needs ``numpy<2`` and ``scipy<1.14``)::

    PY=$(bash benchmarks/smpybandits_env.sh | tail -n 1)
    "$PY" benchmarks/smpybandits_reference.py --repetitions 100 > smpy.json

Protocol (``benchmarks/run.py`` sets it and times impactbandits on the same problem):

* 2 arms, Bernoulli means (0.3, 0.7), horizon 10^4 by default;
* each repetition builds a fresh policy with ``nbArms=2``, calls ``startGame()``, then
  ``horizon`` times ``arm = policy.choice()`` / ``policy.getReward(arm, reward)``;
* the rewards come from a ``(horizon, 2)`` table of uniforms drawn *before* timing from a
  ``numpy.random.Generator`` seeded per repetition; the loop only compares ``u < mean``;
* SMPyBandits policies draw their own randomness (tie-breaking, Exp3 sampling) from the
  legacy global ``numpy.random`` state, which is also seeded per repetition, so a run is
  reproducible;
* the timed section of each repetition is construction + ``startGame()`` + the loop,
  measured with ``time.perf_counter``; ``seconds`` is the sum over repetitions.

stdout carries exactly one JSON object.  Everything else (SMPyBandits prints banners
and warnings on stdout when imported, and some policies print warnings) is sent to stderr.
"""

import argparse
import contextlib
import json
import platform
import statistics
import sys
import time

import numpy as np

MEANS = (0.3, 0.7)  # Bernoulli means of the two arms
N_ARMS = len(MEANS)

# Constructor keyword arguments used for each supported policy, passed explicitly so
# that the JSON output documents them.  The values are SMPyBandits 0.9.7's own defaults
# (checked in Policies/Exp3.py, DiscountedUCB.py and SlidingWindowUCB.py).
POLICY_KWARGS = {
    "UCB": {},
    "Exp3": {"gamma": 0.01},  # fixed gamma = 0.01, which is also the class default
    "DiscountedUCB": {"alpha": 1, "gamma": 0.99},  # class defaults
    "SWUCB": {"tau": 1000, "alpha": 1.0},  # class defaults
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--horizon", type=int, default=10_000, help="steps per repetition (default 10000)"
    )
    parser.add_argument(
        "--repetitions", type=int, default=100, help="independent runs per policy (default 100)"
    )
    parser.add_argument(
        "--policies",
        default="UCB,Exp3",
        help="comma-separated SMPyBandits policy names among {} (default UCB,Exp3)".format(
            ",".join(POLICY_KWARGS)
        ),
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    args = parser.parse_args(argv)
    if args.horizon < 1 or args.repetitions < 1:
        parser.error("--horizon and --repetitions must be >= 1")
    args.policies = [name.strip() for name in args.policies.split(",") if name.strip()]
    unknown = [name for name in args.policies if name not in POLICY_KWARGS]
    if unknown:
        parser.error(
            "unsupported policies {}; choose among {}".format(unknown, ",".join(POLICY_KWARGS))
        )
    return args


def run_policy(policy_class, kwargs, horizon, repetitions, seed):
    """Time ``repetitions`` runs of one policy; return a result dict for the JSON output."""
    means = list(MEANS)
    durations = []
    total_reward = 0.0
    for rep in range(repetitions):
        # --- untimed set-up: reward table and random states for this repetition
        rng = np.random.default_rng([seed, rep])
        uniforms = rng.random((horizon, N_ARMS)).tolist()  # Python lists: cheap lookups in the loop
        np.random.seed((seed * 1_000_003 + rep) % 2**32)  # noqa: NPY002 - SMPyBandits uses the global state
        rep_reward = 0.0

        # --- timed section: construction, startGame() and the choice/getReward loop
        start = time.perf_counter()
        policy = policy_class(N_ARMS, **kwargs)
        policy.startGame()
        for t in range(horizon):
            arm = policy.choice()
            reward = 1.0 if uniforms[t][arm] < means[arm] else 0.0
            policy.getReward(arm, reward)
            rep_reward += reward
        durations.append(time.perf_counter() - start)
        total_reward += rep_reward

    seconds = sum(durations)
    pulls = horizon * repetitions
    return {
        "seconds": seconds,
        "pulls_per_second": pulls / seconds,
        "mean_reward": total_reward / pulls,
        # extra fields: the machines are noisy, so also give the median repetition
        "median_repetition_seconds": statistics.median(durations),
        "median_pulls_per_second": horizon / statistics.median(durations),
        "params": kwargs,
    }


def main(argv=None):
    args = parse_args(argv)
    real_stdout = sys.stdout

    # SMPyBandits prints banners/warnings with print() at import time (and a few policies
    # print warnings later): send all of that to stderr, keep stdout for the JSON only.
    with contextlib.redirect_stdout(sys.stderr):
        import scipy
        import SMPyBandits
        import SMPyBandits.Policies as Policies  # imported explicitly: the package
        # __init__ silently swallows ImportError for its subpackages

        missing = [name for name in args.policies if not hasattr(Policies, name)]
        if missing:
            print(f"error: SMPyBandits.Policies has no {missing}", file=sys.stderr)
            return 2

        results = {}
        for name in args.policies:
            print(f"running {name} ...", file=sys.stderr)
            results[name] = run_policy(
                getattr(Policies, name),
                POLICY_KWARGS[name],
                args.horizon,
                args.repetitions,
                args.seed,
            )
            print(
                "  {}: {:.1f} s, {:.0f} pulls/s".format(
                    name, results[name]["seconds"], results[name]["pulls_per_second"]
                ),
                file=sys.stderr,
            )

    output = {
        "library": "SMPyBandits",
        "version": getattr(SMPyBandits, "__version__", "unknown"),
        "horizon": args.horizon,
        "repetitions": args.repetitions,
        "means": list(MEANS),
        "seed": args.seed,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "results": results,
    }
    json.dump(output, real_stdout)
    real_stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
