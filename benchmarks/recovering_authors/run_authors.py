# -*- coding: utf-8 -*-
"""Driver that runs Pike-Burke & Grünewälder's own algorithm functions (Recovering Bandits,
NeurIPS 2019; github ciarapb/recovering_bandits @ abe86450323f66a0c6e23a81b8847a94c87013ea) and
writes mean cumulative regret per algorithm and horizon to a JSON file.

It is started by run_authors.sh, inside the authors' environment (Python 2.7 + GPy 1.9.2, or
Python 3 + a current GPy with py3.patch), never inside impactbandits' own. It must stay valid
Python 2.7 *and* Python 3: no f-strings, no keyword-only arguments.

What it runs: the repetition loop of the authors' wrappers (rgpucb_manyl.py:115-123,
rgpts_manyl.py:117-125, basic_alg.py:62-71, rogueucbtuned.py:53-61), i.e. for each repetition
``np.random.seed(seed); reg, rew = ALG(T, Arms, ...); cumsum(reg)``, with the arms built by their
setups/ modules and the algorithms of their functs/ modules.  The wrappers themselves are not run:
at this commit every one of them fails at import (they name setup modules that are not in the
repository), and they hard-code rep=500, an unseeded seed list and output under saves/.
Differences to the wrappers, all deliberate and recorded in the JSON:
  * seeds are explicit (seed0, seed0+1, ...) instead of random.sample(range(1, 10000), rep)
    from an unseeded `random`; Python's `random` is seeded with the same seed (only UCB-Z's
    random.choice uses it; the wrappers never seed it);
  * the arms are reset() *before* every repetition (the wrappers reset after each one), so
    every repetition starts from z = zinit = 0 -- see the README about the l=5 logistic setup,
    whose constructor starts at z = maxwait.

Every repetition runs in a fresh interpreter (``--jobs`` of them at a time), and run_authors.sh
starts this file "sealed" -- see early_load() for why (Python 2 tie-breaking in the authors'
d-step search follows memory addresses).

Usage: run_authors.sh does this (sealed: ``cd COPY && python run_authors.py < options.json`` with
``{"argv": [...]}``); by hand, on a patched copy of functs/ and setups/:
    python run_authors.py --src PATCHED_COPY --out FILE [--T 1000] [--reps 3] [--seed0 1]
                          [--runs SPEC ...] [--jobs 1] [--horizons 100,250,500,1000]
A run SPEC is SETUP:ALG[,ALG...], e.g. ``gp_l2:rgpucb,rgpts,drgpucb2,drgpts2`` or
``logistic_l5:rgpucb,rgpts,ucbz,rogue``; ``--runs default`` gives DEFAULT_RUNS below.
"""
from __future__ import division, print_function

import argparse
import hashlib
import json
import os
import platform
import random
import sys
import time

EXPECTED_COMMIT = "abe86450323f66a0c6e23a81b8847a94c87013ea"

# name -> (module under setups/, family, GP lengthscale of the prior the algorithms use)
SETUPS = {
    "logistic_l25": ("rgp_logistic_l25", "logistic", 2.5),  # file lacks the _setup suffix
    "logistic_l5": ("rgp_logistic_l5_setup", "logistic", 5.0),
    "logistic_l75": ("rgp_logistic_l75_setup", "logistic", 7.5),
    "gamma_l25": ("rgp_gamma_l25_setup", "gamma", 2.5),
    "gamma_l5": ("rgp_gamma_l5_setup", "gamma", 5.0),
    "gamma_l75": ("rgp_gamma_l75_setup", "gamma", 7.5),
    "gp_l05": ("rgp_gp_l05_setup", "gp", 0.5),
    "gp_l2": ("rgp_gp_l2_setup", "gp", 2.0),
    "gp_l5": ("rgp_gp_l5_setup", "gp", 5.0),
    "gp_K30_l4": ("rgp_gp_K30_l4_setup", "gp", 4.0),
}

# algorithm key -> (label, d, what the per-round regret of the authors' function is)
ONE_STEP = ("max_j f_j(z_j,t) - f_{J_t}(z_{J_t,t}): the gap to the best arm at the current z's "
            "(functs/*: reg[t] = max([arm.erew for arm in Arms]) - myarm.erew)")
D_STEP = ("d-step lookahead regret spread evenly: every d rounds, (value of the best d-sequence "
          "from the current z's) - (value of the chosen d-sequence), both under the true f, "
          "divided by d and booked on each of the d rounds (drgp*_functs.py: reg[t] = reg2/d); "
          "the first K rounds (each arm once) book the one-step gap")


def algorithm_spec(key):
    """Return (label, d, regret definition, function path) for an algorithm key."""
    if key == "rgpucb":
        return "RGP-UCB", 1, ONE_STEP, "functs.rgpucb_functs.RGPUCB"
    if key == "rgpts":
        return "RGP-TS", 1, ONE_STEP, "functs.rgpts_functs.RGPTS"
    if key == "ucbz":
        return "UCB-Z", 1, ONE_STEP, "functs.ucbz_functs.UCB"
    if key == "rogue":
        return "RogueUCB-Tuned", 1, ONE_STEP, "functs.rogueucbtuned_<family>_functs.RogueUCBTuned"
    for prefix, label, path in (("drgpucb", "dRGP-UCB", "functs.drgpucb_functs.RGPUCBds"),
                                ("drgpts", "dRGP-TS", "functs.drgpts_functs.RGPTSds")):
        if key.startswith(prefix) and key[len(prefix):].isdigit():
            d = int(key[len(prefix):])
            return "%s(d=%d)" % (label, d), d, D_STEP, path + "(..., repetitions=True)"
    raise ValueError("unknown algorithm %r" % key)


DEFAULT_RUNS = [
    "logistic_l5:rgpucb,rgpts,ucbz",
    "gamma_l5:rgpucb,rgpts,ucbz",
    "gp_l05:rgpucb,rgpts,drgpucb2,drgpts2",
    "gp_l2:rgpucb,rgpts,drgpucb2,drgpts2",
    "gp_l5:rgpucb,rgpts,drgpucb2,drgpts2",
]


def parse_runs(specs):
    runs = []
    for spec in specs:
        if spec == "default":
            runs.extend(parse_runs(DEFAULT_RUNS))
            continue
        setup, _, algs = spec.partition(":")
        if setup not in SETUPS or not algs:
            raise SystemExit("bad --runs entry %r (setups: %s)" % (spec, ", ".join(sorted(SETUPS))))
        for alg in algs.split(","):
            algorithm_spec(alg)
            if alg in ("ucbz", "rogue") and SETUPS[setup][1] == "gp":
                raise SystemExit("%s needs a parametric setup (logistic_*/gamma_*)" % alg)
            runs.append((setup, alg))
    return runs


def load(src):
    """Import the authors' modules from the patched copy (module state: one per process)."""
    if src not in sys.path:
        sys.path.insert(0, src)
    import importlib
    mods = {}
    for name, (module, _, _) in SETUPS.items():
        mods[name] = importlib.import_module("setups." + module)
    return mods


def run_one(args):
    """One repetition: (src, setup, alg, T, seed) -> dict with the cumulative curves."""
    src, setup, alg, T, seed = args
    import numpy as np
    mods = load(src)
    s = mods[setup]
    family = SETUPS[setup][1]
    label, d, _, _ = algorithm_spec(alg)
    Arms, K, Z = s.Arms, s.K, s.maxwait
    for arm in Arms:
        arm.reset()
    np.random.seed(seed)
    random.seed(seed)
    cpu0 = sum(os.times()[:2])
    wall0 = time.time()
    if alg == "rgpucb":
        import functs.rgpucb_functs as f
        reg, rew = f.RGPUCB(T, Arms, K, Z)
    elif alg == "rgpts":
        import functs.rgpts_functs as f
        reg, rew = f.RGPTS(T, Arms, K, Z)
    elif alg == "ucbz":
        import functs.ucbz_functs as f
        reg, rew = f.UCB(T, Arms, K, Z, s.noisevar)
    elif alg == "rogue":
        import importlib
        f = importlib.import_module("functs.rogueucbtuned_%s_functs" % family)
        eta = 1 / (2 * s.noisevar)  # rogueucbtuned.py:47 and :91
        reg, rew = f.RogueUCBTuned(T, Arms, K, Z, eta, s.noisevar)
    elif alg.startswith("drgpucb"):
        import functs.drgpucb_functs as f
        reg, rew = f.RGPUCBds(T, Arms, d, K, Z, repetitions=True)
    else:
        import functs.drgpts_functs as f
        reg, rew = f.RGPTSds(T, Arms, d, K, Z, repetitions=True)
    wall = time.time() - wall0
    cpu = sum(os.times()[:2]) - cpu0
    plays = [float(arm.numplays) for arm in Arms]
    for arm in Arms:
        arm.reset()
    return {"setup": setup, "alg": alg, "seed": seed,
            "cum_regret": np.cumsum(reg).tolist(), "cum_reward": np.cumsum(rew).tolist(),
            "plays_per_arm": plays, "wall_s": wall, "cpu_s": cpu}


def describe_setup(s, name):
    module, family, ell = SETUPS[name]
    out = {"module": "setups/%s.py" % module, "family": family, "K": int(s.K),
           "z_max": float(s.maxwait), "noise_var": float(s.noisevar),
           "gp_prior": {"kernel": "RBF (squared exponential)", "variance": 1.0,
                        "lengthscale": float(s.Arms[0].kernel.lengthscale.values[0]),
                        "noise_var": float(s.noisevar), "mean": 0.0,
                        "hyperparameters": "fixed (never optimised)"},
           "z_init_after_reset": float(s.Arms[0].zinit),
           "z_init_at_construction": [float(a.z) for a in s.Arms]}
    z = [float(v) for v in range(int(s.maxwait) + 1)]
    out["f_true_at_z_0_to_zmax"] = [[float(a.rewfunct(v)) for v in z] for a in s.Arms]
    if family != "gp":
        out["theta"] = [[float(x) for x in a.theta] for a in s.Arms]
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()


def early_load():
    """Import the authors' setups before anything else; return (modules, options, src, sealed).

    Why the care: the authors' d-step functions choose among K^d sequences with
    ``max(dict.iteritems())``, and near-ties there (UCBs or sampled values equal to the last few
    bits, or exactly: arms still at their prior, two arms both at the cap z = 30) are decided by
    (i) Python 2's dict order for tuples of Arm instances -- their id(), i.e. memory addresses --
    and (ii) last-bit differences in GPy's predictions, which depend on where numpy's arrays
    happen to lie in memory. Both follow whatever the process allocated before: checked, the
    same dRGP-UCB repetition took different paths when other repetitions had run before it in
    the same process, or with a different --runs list. Hence:
      * every repetition runs in a fresh interpreter (see spawn_unit), and
      * run_authors.sh starts this file "sealed": copied beside the authors' packages, started
        there with no arguments and a fixed minimal environment, options as JSON on stdin, read
        only after the import below.
    A repetition's numbers then depend on the interpreter, the packages, this file and
    (setup, algorithm, T, seed) only; which of several near-tied sequences is played stays
    the authors' arbitrary choice (see README).
    """
    if len(sys.argv) == 1:  # sealed: the setups/ and functs/ packages sit beside this file
        here = os.path.dirname(os.path.abspath(__file__))
        mods = load(here)
        return mods, json.load(sys.stdin), here, True
    argv = sys.argv[1:]
    src = None
    for i, a in enumerate(argv):
        if a == "--src" and i + 1 < len(argv):
            src = os.path.abspath(argv[i + 1])
    mods = load(src) if src else None
    if "--unit" in argv:
        return mods, json.load(sys.stdin), src, False
    return mods, {"argv": argv}, src, False


def spawn_unit(task):
    """Run one repetition in a fresh interpreter (same file, unit mode); return its dict."""
    import subprocess
    src, sealed, unit = task
    cmd = [sys.executable, os.path.abspath(__file__)]
    if not sealed:
        cmd += ["--src", src, "--unit"]
    proc = subprocess.Popen(cmd, cwd=src if sealed else None, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    out, _ = proc.communicate(json.dumps({"unit": unit}).encode("utf-8"))
    if proc.returncode != 0:
        raise RuntimeError("repetition %r failed (exit %d)" % (unit, proc.returncode))
    return json.loads(out.decode("utf-8"))


def main():
    mods, options, src, sealed = early_load()
    if "unit" in options:  # child: one repetition, result as JSON on stdout
        real_stdout = sys.stdout
        sys.stdout = sys.stderr  # anything the authors' code prints must not corrupt the JSON
        res = run_one([src] + list(options["unit"]))
        sys.stdout = real_stdout
        json.dump(res, sys.stdout)
        return
    argv = options["argv"]
    if sealed:
        argv = ["--src", src] + list(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="patched copy of the authors' functs/ and setups/")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed0", type=int, default=1)
    ap.add_argument("--runs", nargs="+", default=["default"])
    ap.add_argument("--horizons", default="100,250,500,1000")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--patch", default="", help="patch file applied (recorded in the JSON)")
    ap.add_argument("--mode", default="", help="py27 or py3 (recorded in the JSON)")
    args = ap.parse_args(argv)

    runs = parse_runs(args.runs)
    seeds = list(range(args.seed0, args.seed0 + args.reps))
    horizons = sorted(set(h for h in (int(x) for x in args.horizons.split(",")) if 0 < h <= args.T)
                      | set([args.T]))
    src = os.path.abspath(args.src)
    jobs = [(src, setup, alg, args.T, seed) for setup, alg in runs for seed in seeds]

    import numpy as np
    import scipy
    import GPy
    if mods is None:
        mods = load(src)

    wall0 = time.time()
    results = []
    tasks = [(src, sealed, [setup, alg, T, seed]) for (_, setup, alg, T, seed) in jobs]
    from multiprocessing.pool import ThreadPool  # threads only wait for the child processes
    pool = ThreadPool(max(1, args.jobs))
    for i, res in enumerate(pool.imap_unordered(spawn_unit, tasks)):
        results.append(res)
        print("[%d/%d] %s %s seed=%d: cum regret at T=%.3f (%.1fs wall, %.1fs cpu)" % (
            i + 1, len(tasks), res["setup"], res["alg"], res["seed"], res["cum_regret"][-1],
            res["wall_s"], res["cpu_s"]), file=sys.stderr)
        sys.stderr.flush()
    pool.close()
    pool.join()
    total_wall = time.time() - wall0

    experiments = []
    for setup in sorted(set(s for s, _ in runs), key=lambda n: [r[0] for r in runs].index(n)):
        exp = {"setup": setup}
        exp.update(describe_setup(mods[setup], setup))
        algos = {}
        for s_, alg in runs:
            if s_ != setup:
                continue
            label, d, regdef, path = algorithm_spec(alg)
            mine = sorted((r for r in results if r["setup"] == setup and r["alg"] == alg),
                          key=lambda r: r["seed"])
            creg = np.array([r["cum_regret"] for r in mine])
            crew = np.array([r["cum_reward"] for r in mine])
            n = len(mine)
            entry = {"key": alg, "function": path, "d": d, "regret": regdef, "reps": n,
                     "seeds": [r["seed"] for r in mine],
                     "mean_cum_regret": {}, "sd_cum_regret": {}, "se_cum_regret": {},
                     "per_rep_cum_regret": {}, "mean_cum_reward": {},
                     "mean_plays_per_arm": np.mean([r["plays_per_arm"] for r in mine],
                                                   axis=0).tolist(),
                     "wall_s_per_rep": [r["wall_s"] for r in mine],
                     "cpu_s_per_rep": [r["cpu_s"] for r in mine]}
            for h in horizons:
                col = creg[:, h - 1]
                sd = float(col.std(ddof=1)) if n > 1 else None
                entry["mean_cum_regret"][str(h)] = float(col.mean())
                entry["sd_cum_regret"][str(h)] = sd
                entry["se_cum_regret"][str(h)] = sd / np.sqrt(n) if sd is not None else None
                entry["per_rep_cum_regret"][str(h)] = [float(v) for v in col]
                entry["mean_cum_reward"][str(h)] = float(crew[:, h - 1].mean())
            algos[label] = entry
        exp["algorithms"] = algos
        experiments.append(exp)

    out = {
        "paper": "C. Pike-Burke and S. Grunewalder, Recovering Bandits, NeurIPS 2019 (arXiv 1910.14354)",
        "authors_repository": "github.com/ciarapb/recovering_bandits",
        "authors_commit": EXPECTED_COMMIT,
        "mode": args.mode,
        "patch": {"file": os.path.basename(args.patch),
                  "sha256": sha256(args.patch)} if args.patch else None,
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "scipy": scipy.__version__, "GPy": GPy.__version__,
                        "platform": platform.platform()},
        "command": ["run_authors.py"] + argv,
        "T": args.T, "reps": args.reps, "seeds": seeds, "horizons": horizons,
        "seeding": "per repetition: np.random.seed(seed) and random.seed(seed), arms reset() first",
        "total_wall_s": total_wall, "jobs": args.jobs,
        "experiments": experiments,
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
    os.rename(tmp, args.out)
    # short table on stdout
    print("setup          algorithm          " + "  ".join("T=%-6d" % h for h in horizons))
    for exp in experiments:
        for label, e in exp["algorithms"].items():
            print("%-14s %-18s " % (exp["setup"], label)
                  + "  ".join("%8.2f" % e["mean_cum_regret"][str(h)] for h in horizons))


if __name__ == "__main__":
    main()
