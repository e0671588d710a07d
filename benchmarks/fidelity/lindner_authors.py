"""Run Lindner et al.'s own solvers (david-lindner/single-peaked-bandits@8e1dd52) unpatched.

Runs inside the authors' environment (``benchmarks/fidelity/authors_env.sh lindner``), never in
ours. Reads jobs as JSON lines on stdin and writes one JSON line per job on stdout::

    {"bandit": "inc_dec_3", "solver": "ducb", "T": 5000, "seed": 0}
    -> {"bandit": ..., "solver": ..., "T": ..., "seed": ..., "pulls": [...], "cpu_s": ...}

``bandit`` is a name of the authors' ``ALL_BANDITS`` (e.g. ``inc_dec_3``, ``inc_dec_3_std_0.05``,
``inc_1_alpha_0.1``); ``solver`` a key of their ``SOLVERS`` (``optimistic``, ``greedy``,
``one-ste-optimistic`` [sic], ``exp3``, ``Rexp3``, ``ducb``, ``sucb``, ``ucb``, ``increasing``).
As in their ``run_experiments.py``, the global NumPy seed is set before each ``solve``; their
solvers return pull counts only. Usage (the harnesses do this)::

    PY=$(bash benchmarks/fidelity/authors_env.sh lindner | tail -n 2 | head -n 1)
    echo '{"bandit": "inc_dec_3", "solver": "sucb", "T": 2000, "seed": 0}' \
        | $PY benchmarks/fidelity/lindner_authors.py --src benchmarks/fidelity/.authors/lindner/src
"""

import argparse
import contextlib
import json
import os
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", required=True, help="the authors' checkout (holds src/)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.src, "src"))  # their package's __init__ lacks its dot
    with contextlib.redirect_stdout(sys.stderr):  # the SPO module prints its LP solver's name
        import numpy as np
        from single_peaked_bandits.experiments import ALL_BANDITS
        from single_peaked_bandits.solvers import SOLVERS

    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        bandit = ALL_BANDITS[job["bandit"]]
        solver = SOLVERS[job["solver"]]()
        np.random.seed(int(job.get("seed", 0)))  # noqa: NPY002 - as their run_experiments.py
        start = time.process_time()
        with contextlib.redirect_stdout(sys.stderr):
            pulls = solver.solve(bandit, int(job["T"]))
        job["pulls"] = [int(p) for p in pulls]
        job["cpu_s"] = round(time.process_time() - start, 3)
        print(json.dumps(job), flush=True)


if __name__ == "__main__":
    main()
