"""Cella & Cesa-Bianchi (2020), Figure 2, side by side: the authors' code vs impactbandits.

One command::

    .venv/bin/python benchmarks/fidelity/cella.py [--seeds 30] [--horizon 500000] [--jobs 1]

runs, on the Figure 2 instance (7 Bernoulli arms, baseline means {0, 1/3, 2/3, 4/5, 13/15,
14/15, 1}, f(τ) = 0.999^τ, unit switching cost between ranking policies, δ = 0.1, the arm
ranking revealed) with delays d_1..d_7 drawn per seed uniformly from {1, …, 6}:

* ``published`` — LeonardoCella/DelayDependentPayoffs@06c4031 (``authors_env.sh cella``) as
  published: ``run.py``'s policies ``RStar`` (π_ghost), ``ORE2`` (π_low) and ``FPO_UCB``
  (π_ucb) with ``--stage 2 --sc 1 --bin 1``, including the deterministic Bernoulli draws
  (``bernoulli.rvs(p, random_state=repetition)`` reseeds every draw, so within a repetition
  every pull compares its mean with one and the same uniform) and π_low's 0.001-shrunk
  elimination width (``Ore.py``, ``_cb``);
* ``fixed`` — the same code with that one bug fixed (one random stream per repetition);
* ``fixed-width`` — also with the 0.001 factor removed from π_low's width (``--ablations``);
* ``ours`` — ``pi-low`` and ``pi-ucb`` of impactbandits on the same delays.

Regret is the paper's: expected reward of π_ghost minus the expected reward of the learner net
of its switching costs (Figure 2: "we plot expectations of sampled arms"); for the authors'
code π_ghost is their ``RStar`` run on the same delays, for ours the exact ghost oracle. The
authors' own plots (``--bin 1``) use realised rewards; the table gives those too.

``--ablations`` adds the delay sampler the authors' code actually uses, {1 + rep, …, 6} for
repetition rep (``MAB.py`` line 170: ``1 + randint(seed_init, maxDelay - 1)``; it raises
``ValueError: empty range`` from rep = 6 on), on repetitions 0–4 as in the paper.

The authors' code runs in its own venv as a subprocess (``--worker`` mode of this file, which
imports only the standard library and their numpy/scipy). Minimal run-time fixes, none to
their files: ``numpy.int`` is restored (``Results.py`` line 14, removed in numpy 1.24); the
``c_print(...)`` debug statements are stripped from their modules' syntax trees at import
(they format numpy arrays on every round even when nothing is printed: ≈ 40× slower, no
other effect); ``sortednp`` is not needed (their ``_arm_creation`` is replaced by the Figure 2
instance); ``run.py`` is not imported (it imports the missing modules ``policies.One`` and
``policies.Alt``).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MEANS_DESC = [1.0, 14 / 15, 13 / 15, 4 / 5, 2 / 3, 1 / 3, 0.0]
GAMMA, MAX_DELAY, TAU, DELTA = 0.999, 6, 7, 0.1


# --------------------------------------------------------------------------------------------
# worker: runs inside the authors' venv
# --------------------------------------------------------------------------------------------


def _install_authors(src: str) -> None:
    """Import hook: the authors' modules with their ``c_print(...)`` statements removed."""
    import importlib.abc
    import importlib.machinery

    class _Strip(ast.NodeTransformer):
        def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
            call = node.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "c_print"
            ):
                return None
            return node

        def visit_Assign(self, node: ast.Assign) -> ast.AST:
            # MAB.play, per pull: ``self._past_len = len(set(choice))`` rebuilds a set of the
            # whole block (up to ~T/2 pulls) on every pull: quadratic time. ``choice`` is not
            # changed inside that loop and ``current_len = len(set(choice))`` was computed
            # just before it, so the same value is reused.
            target = node.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "_past_len"
                and ast.unparse(node.value) == "len(set(choice))"
            ):
                node.value = ast.Name("current_len", ast.Load())
            return node

        def generic_visit(self, node: ast.AST) -> ast.AST:
            super().generic_visit(node)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and field == "body" and not block:
                    block.append(ast.Pass())
            return node

    class _Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname: str):  # type: ignore[override]
            path = self.get_filename(fullname)
            tree = _Strip().visit(ast.parse(Path(path).read_text(), path))
            ast.fix_missing_locations(tree)
            return compile(tree, path, "exec", dont_inherit=True)

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):  # type: ignore[override]
            if name != "adaptiveRank" and not name.startswith("adaptiveRank."):
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path or [src])
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                spec.loader = _Loader(name, spec.origin)
            return spec

    sys.meta_path.insert(0, _Finder())


def _authors_sampler(rep: int) -> list[int]:
    """The authors' delay sampler (MAB._arm_creation): seed(rep), then 1 + randint(rep, 5)."""
    import random

    random.seed(rep)
    return [1 + random.randint(rep, MAX_DELAY - 1) for _ in MEANS_DESC]


def _worker(src: str) -> None:
    import numpy as np

    np.int = int  # type: ignore[attr-defined]  # noqa: NPY001  (Results.py line 14, numpy 1.24)
    # MAB.py imports sortednp (not in their venv) for _arm_creation's grid, which we replace
    stub = types.ModuleType("sortednp")
    stub.merge = lambda a, b: np.sort(np.concatenate([a, b]))  # type: ignore[attr-defined]
    sys.modules.setdefault("sortednp", stub)
    _install_authors(src)
    import adaptiveRank.arm.Bernoulli as bern_module
    from adaptiveRank.arm.Bernoulli import Bernoulli
    from adaptiveRank.environment.MAB import MAB
    from adaptiveRank.policies.FPO_UCB import FPO_UCB
    from adaptiveRank.policies.Ore import ORE2
    from adaptiveRank.policies.RStar import RStar
    from scipy.stats import bernoulli as scipy_bernoulli

    cb_published = ORE2._cb
    draw_published = Bernoulli.draw

    class _Published:
        """bernoulli.rvs(p, random_state=rep) exactly, memoised (it is a function of p, rep)."""

        def __init__(self) -> None:
            self.cache: dict = {}

        def rvs(self, p, random_state):
            key = (p, random_state)
            if key not in self.cache:
                self.cache[key] = scipy_bernoulli.rvs(p, random_state=random_state)
            return self.cache[key]

    class _Fixed:
        """One stream per repetition: independent draws (the bug fixed)."""

        def __init__(self, seed: int) -> None:
            self.rng = np.random.default_rng([seed, 0xCE11A])

        def rvs(self, p, random_state):
            return int(self.rng.random() < p)

    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        T, seed = int(job["T"]), int(job["seed"])
        delays = job.get("delays") or _authors_sampler(seed)
        bern_module.bernoulli = _Published() if job.get("bug", True) else _Fixed(seed)
        width = job.get("low_width")  # None: as published (0.001 × their C)
        ORE2._cb = (
            cb_published
            if width is None
            else (lambda self, _w=float(width): cb_published(self) * (_w / 0.001))
        )
        expected: list[float] = []
        realised: list[float] = []

        def draw(self, current, rep, _e=expected, _r=realised):
            e, r = draw_published(self, current, rep)
            _e.append(float(e))
            _r.append(float(r))
            return e, r

        Bernoulli.draw = draw
        name = {"ghost": "Ghost", "low": "PI Low", "ucb": "PI ucb"}[job["policy"]]
        if job["policy"] == "ghost":
            policy = RStar(T, 2)
        elif job["policy"] == "low":
            policy = ORE2(T, TAU, DELTA, 1, 5, 5, 1, 2)  # run.py: shrink = 1, --stage 2
        else:
            policy = FPO_UCB(T, TAU, DELTA, 5, 5, 1, 2, math.sqrt(2))  # run.py's arguments
        mab = MAB(T, 4, GAMMA, 0.2, MAX_DELAY, 1, 2, name, 0, int(job.get("sc", 1)))

        def creation(rep, _mab=mab, _delays=delays):
            import random

            random.seed(rep)  # as theirs: seeds the stdlib stream FPO_UCB's choice() uses
            _mab._meanArms = list(MEANS_DESC)
            _mab.arms = [
                Bernoulli(mu, GAMMA, 1, int(d), 1)
                for mu, d in zip(MEANS_DESC, _delays, strict=True)
            ]
            return len(MEANS_DESC)

        mab._arm_creation = creation
        start = time.process_time()
        result = mab.play(policy, T, seed)
        stored = np.asarray(result.rewards[:T], dtype=float)
        e = np.asarray(expected[:T])
        r = np.asarray(realised[:T])
        cost = r - stored
        points = sorted({min(int(c), T) for c in job.get("checkpoints", [T])})
        job.update(
            delays=[int(d) for d in delays],
            r_star=int(getattr(mab, "r_star", -1)) + 1,
            switches=round(float(cost.sum())),
            expected_net=[float((e - cost)[:c].sum()) for c in points],
            realised_net=[float(stored[:c].sum()) for c in points],
            checkpoints=points,
            cpu_s=round(time.process_time() - start, 2),
        )
        print(json.dumps(job), flush=True)


# --------------------------------------------------------------------------------------------
# driver: runs in impactbandits' venv
# --------------------------------------------------------------------------------------------


def _paper_delays(seed: int) -> list[int]:
    """Figure 2's delays for one seed: uniform on {1, …, 6}, one draw per arm (harness-owned
    stream, so the authors' code and ours see the same instance)."""
    import numpy as np

    return [int(d) for d in np.random.default_rng([seed, 2020]).integers(1, 7, size=7)]


def _run_authors(jobs: list[dict], n_workers: int) -> list[dict]:
    out = subprocess.run(
        ["bash", str(HERE / "authors_env.sh"), "cella"], capture_output=True, text=True
    )
    if out.returncode:
        sys.exit(f"authors_env.sh failed:\n{out.stderr}")
    py, src = out.stdout.strip().splitlines()[-2:]
    chunks = [jobs[i::n_workers] for i in range(n_workers)]
    procs = [
        subprocess.Popen(
            [py, __file__, "--worker", "--src", src],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for chunk in chunks
        if chunk
    ]
    results: list[dict] = []
    for proc, chunk in zip(procs, chunks, strict=False):
        proc.stdin.write("".join(json.dumps(j) + "\n" for j in chunk))  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    for proc in procs:
        for line in proc.stdout:  # type: ignore[union-attr]
            results.append(json.loads(line))
        if proc.wait():
            sys.exit("the authors' worker failed")
    return results


def _run_ours(seeds: list[int], delays: dict[int, list[int]], T: int, out_dir: Path) -> dict:
    """impactbandits' pi-low / pi-ucb through the public runner: one environment per seed (its
    delays, fixed), one replication each; returns {(kind, seed): (regret, switches, cpu_s)}."""
    import tempfile

    from impactbandits import ExperimentSpec, run_experiment, tidy_table

    envs = [
        {
            "kind": "delayed",
            "label": f"seed {s}",
            "means": [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0],
            "decay": GAMMA,
            "switching_cost": 1.0,
            # ours lists the arms by increasing mean, the delays are drawn by decreasing mean
            "delays": delays[s][::-1],
        }
        for s in seeds
    ]
    spec = ExperimentSpec.create(
        name="cella-harness",
        horizons=[T],
        seeds=1,
        checkpoints=2,
        environments=envs,
        policies=[{"kind": "pi-low"}, {"kind": "pi-ucb"}],
    )
    run_dir = Path(tempfile.mkdtemp(prefix="cella-harness-", dir=out_dir))
    start = time.process_time()
    run_experiment(spec, run_dir, backend="serial")
    cpu = time.process_time() - start
    table = tidy_table(run_dir)
    table = table[table["time"] == table["time"].max()]
    out: dict = {}
    for row in table.itertuples():
        seed = int(str(row.environment).split()[-1])
        out[(str(row.policy), seed)] = (
            float(row.regret),
            int(row.phase_switches),
            cpu / len(table),
        )
    return out


def _ci(values: list[float]) -> tuple[float, float]:
    import numpy as np
    from scipy import stats

    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return float(x.mean()), float("nan")
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(half)


def _row(name: str, values: list[float]) -> str:
    import numpy as np

    mean, half = _ci(values)
    q = np.quantile(values, [0.0, 0.25, 0.5, 0.75, 1.0])
    quant = " ".join(f"{v:9.0f}" for v in q)
    return f"{name:<34} {len(values):3d} {mean:10.1f} ± {half:8.1f}   {quant}"


def _welch(name: str, a: list[float], b: list[float]) -> str:
    from scipy import stats

    diff = sum(a) / len(a) - sum(b) / len(b)
    t, p = stats.ttest_ind(a, b, equal_var=False)
    return f"{name:<52} diff {diff:10.1f}   Welch t = {t:7.2f}   p = {p:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--horizon", type=int, default=500_000)
    parser.add_argument("--jobs", type=int, default=1, help="authors' worker processes")
    parser.add_argument("--ablations", action="store_true")
    parser.add_argument("--json", help="also write the raw per-seed results here")
    parser.add_argument(
        "--scratch", default=tempfile.gettempdir(), help="where our run's store goes"
    )
    args = parser.parse_args()
    if args.worker:
        _worker(args.src)
        return
    # impactbandits is imported from the project venv only in driver mode
    sys.path.insert(0, str(ROOT / "src"))
    T, seeds = args.horizon, list(range(args.seeds))
    delays = {s: _paper_delays(s) for s in seeds}
    jobs = []
    for s in seeds:
        for variant, bug in (("published", True), ("fixed", False)):
            for pol in ("ghost", "low", "ucb"):
                if pol == "ghost" and variant == "fixed":
                    continue  # RStar is deterministic: its expected reward is variant-free
                jobs.append(
                    {
                        "variant": variant,
                        "policy": pol,
                        "T": T,
                        "seed": s,
                        "delays": delays[s],
                        "bug": bug,
                    }
                )
        if args.ablations:
            jobs.append(
                {
                    "variant": "fixed-width",
                    "policy": "low",
                    "T": T,
                    "seed": s,
                    "delays": delays[s],
                    "bug": False,
                    "low_width": 1.0,
                }
            )
    if args.ablations:
        for rep in range(5):  # the authors' own sampler {1 + rep, …, 6}, the paper's 5 reps
            for pol in ("ghost", "low", "ucb"):
                jobs.append(
                    {
                        "variant": "their-sampler",
                        "policy": pol,
                        "T": T,
                        "seed": rep,
                        "delays": None,
                        "bug": False,
                    }
                )
    wall = time.time()
    authors = _run_authors(jobs, args.jobs)
    ours = _run_ours(seeds, delays, T, Path(args.scratch))
    ghost = {(j["variant"], j["seed"]): j for j in authors if j["policy"] == "ghost"}
    regret: dict[str, list[float]] = {}
    switches: dict[str, list[float]] = {}
    for j in authors:
        if j["policy"] == "ghost":
            continue
        g = ghost[
            ("published" if j["variant"] in ("fixed", "fixed-width") else j["variant"], j["seed"])
        ]
        key = f"{j['variant']} π_{j['policy']}"
        regret.setdefault(key, []).append(g["expected_net"][-1] - j["expected_net"][-1])
        switches.setdefault(key, []).append(j["switches"])
        if j["variant"] == "published":
            regret.setdefault(f"published π_{j['policy']} (realised)", []).append(
                g["realised_net"][-1] - j["realised_net"][-1]
            )
    for (kind, _seed), (reg, sw, _cpu) in sorted(ours.items()):
        key = f"ours π_{kind.split('-')[1]}"
        regret.setdefault(key, []).append(reg)
        switches.setdefault(key, []).append(sw)
    lines = [
        f"Figure 2 instance, T = {T}, seeds 0..{len(seeds) - 1} (delays ~ U{{1..6}} per seed), "
        f"unit switching cost; regret = expected reward of π_ghost − learner's net of costs",
        f"{'regret at T':<34} {'n':>3} {'mean':>10} ± {'95% CI':>8}   "
        f"{'min':>9} {'q25':>9} {'median':>9} {'q75':>9} {'max':>9}",
    ]
    lines += [_row(k, v) for k, v in regret.items()]
    lines += ["", "switches between ranking policies at T"]
    lines += [_row(k, v) for k, v in switches.items()]
    lines += [""]
    for pol in ("low", "ucb"):
        pairs = [
            (f"published π_{pol}", f"fixed π_{pol}"),
            (f"fixed π_{pol}", f"ours π_{pol}"),
            (f"published π_{pol}", f"ours π_{pol}"),
        ]
        if args.ablations and pol == "low":
            pairs.append(("fixed-width π_low", "ours π_low"))
        for a, b in pairs:
            lines.append(_welch(f"{a} − {b}", regret[a], regret[b]))
    if args.ablations:
        ghosts = sorted(
            (j["seed"], j["delays"], j["r_star"], j["expected_net"][-1] / T)
            for j in authors
            if j["policy"] == "ghost" and j["variant"] == "their-sampler"
        )
        lines += ["", "the authors' delay sampler {1 + rep, …, 6} (reps 0–4): delays, r*, g(r*)"]
        lines += [f"  rep {s}: delays {d}  r* = {r}  g = {g:.4f}" for s, d, r, g in ghosts]
        paper = [j for j in authors if j["policy"] == "ghost" and j["variant"] == "published"]
        lines.append(
            "  paper sampler U{1..6} (our seeds): mean g(r*) = "
            f"{sum(j['expected_net'][-1] for j in paper) / len(paper) / T:.4f}, r* in "
            f"{sorted({j['r_star'] for j in paper})}"
        )
    cpu = sum(j["cpu_s"] for j in authors) + sum(v[2] for v in ours.values())
    lines.append(f"\nwall {time.time() - wall:.0f} s, CPU {cpu:.0f} s")
    text = "\n".join(lines)
    print(text)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "authors": authors,
                    "ours": {f"{k[0]}/{k[1]}": v for k, v in ours.items()},
                    "table": text,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
