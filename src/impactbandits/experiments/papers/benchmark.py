"""``benchmark``: every setting of the library, every algorithm that applies, one leaderboard
(issue 30, item 5). ``rested-benchmark`` is its view on the rested families.

A *setting* is a family of environments (labels ``"<setting> / <instance>"``, see
:mod:`impactbandits.experiments.leaderboard`) with the algorithms made for it; the general
baselines (:data:`BASELINES`) run on every setting with discrete arms. Regret is policy regret
against each environment's oracle (:data:`ORACLES` says, per setting, whether it is the exact
optimum, a certified bound or the paper's benchmark). Seed ``s`` of every policy meets the
same instance and the same noise (common random numbers), so the ranks come from paired
comparisons (:mod:`impactbandits.experiments.paired_ranks`).

Settings and sources of their instances:

* stationary — Bernoulli arms: two arms 0.9/0.8, Garivier & Cappé's (2011) ten low-mean arms
  (their scenario 2) and nine evenly spaced means 0.1–0.9;
* single-peaked, increasing, FICO, recommender, rising, rotting — the rested families of
  :mod:`~impactbandits.experiments.papers.rested_benchmark` (its instances and algorithms);
* improving — Patil et al. (2023) random instances (k = 5, uniform and late-bloomer, seeds 0
  and 1; their Section 6);
* delay-dependent — Cella & Cesa-Bianchi (2020) Figure 2's seven arms and Figure 3's two arms
  (unit switching cost);
* blocking — Basu et al. (2019): their three-arm instance μ = (0.6, 0.5, 0.4), D = (4, 3, 2)
  and a five-arm instance with delays 1–4, both small enough for the exact optimum;
* recovering — Pike-Burke & Grünewälder (2019): five recovery functions drawn from the GP
  prior (squared-exponential kernel, ℓ = 5 and ℓ = 2, z_max = 30, σ = 0.1; the authors'
  sampler and seed 5389, their K = 10 cut to 5);
* rebounding — Leqi et al. (2021): two three-arm satiation instances (Gaussian reward noise
  σ = 0.1; the paper's constants could not be read, see its docs page);
* delayed impact — Tang et al. (2021) Figure 2's police instance (K = 2) with γ = 0, 0.2 and
  0.4; simplex actions, so only the allocation learners run here;
* reward-opportunity — Ron et al. (2021) Figure 1's six arms with λ = 0.4, uniform and linear
  fairness.

Horizons T = 2,000 and 10,000 with 30 replications (``--quick``: T = 300 and 1,000 with 3).
:func:`environments` and :func:`policies` are the places to extend; :data:`RESTED` names the
families of the rested view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, quick_name
from impactbandits.experiments.leaderboard import FAMILY_SEPARATOR, family_of
from impactbandits.experiments.papers import rested_benchmark as rested
from impactbandits.experiments.papers.benchmark_claims import CROSS_CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

__all__ = [
    "BASELINES",
    "BENCHMARK",
    "HORIZONS",
    "LEFT_OUT",
    "ORACLES",
    "RESTED",
    "SEEDS",
    "SETTINGS",
    "environments",
    "policies",
    "spec",
]

#: (full, quick) horizons and replications, those of ``rested-benchmark``.
HORIZONS = rested.HORIZONS
SEEDS = rested.SEEDS

#: The rested families (``rested-benchmark`` is the benchmark restricted to them).
RESTED = ("single-peaked", "increasing", "FICO", "recommender", "rising", "rotting")


def _label(setting: str, name: str) -> str:
    return f"{setting}{FAMILY_SEPARATOR}{name}"


def _stationary(horizon: int) -> list[dict[str, Any]]:
    instances = {
        "2 arms 0.9/0.8": [0.9, 0.8],
        "10 low-mean arms": [0.1, 0.05, 0.05, 0.05, 0.02, 0.02, 0.02, 0.01, 0.01, 0.01],
        "9 arms 0.1-0.9": [round(0.1 * i, 1) for i in range(1, 10)],
    }
    return [
        {"kind": "bernoulli", "label": _label("stationary", name), "means": means}
        for name, means in instances.items()
    ]


def _improving(horizon: int) -> list[dict[str, Any]]:
    return [
        {
            "kind": "imab",
            "label": _label("improving", f"{family} k=5 seed {seed}"),
            "family": "random",
            "random_family": family,
            "k": 5,
            "seed": seed,
            "length": horizon,
        }
        for family in ("uniform", "late-bloomer")
        for seed in (0, 1)
    ]


def _delay(horizon: int) -> list[dict[str, Any]]:
    return [
        {
            "kind": "delayed",
            "label": _label("delay-dependent", "7 arms (Cella Fig. 2)"),
            "means": [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0],
            "decay": 0.999,
            "delay_range": [1, 6],
            "switching_cost": 1.0,
        },
        {
            "kind": "delayed",
            "label": _label("delay-dependent", "2 arms (Cella Fig. 3)"),
            "means": [1.0, 13 / 15],
            "delays": [2, 2],
            "f": [0.3, 0.25],
            "switching_cost": 1.0,
        },
    ]


def _blocking(horizon: int) -> list[dict[str, Any]]:
    instances = {
        "3 arms, D = 4,3,2": {"means": [0.6, 0.5, 0.4], "delays": [4, 3, 2]},
        "5 arms, D = 1-4": {"means": [0.9, 0.8, 0.7, 0.5, 0.3], "delays": [4, 3, 2, 2, 1]},
    }
    return [
        {
            "kind": "blocking",
            "label": _label("blocking", name),
            **params,
            "oracle": "blocking_optimum",
        }
        for name, params in instances.items()
    ]


def _rebounding(horizon: int) -> list[dict[str, Any]]:
    instances = {
        "3 arms, fast recovery": {
            "base": [1.0, 0.8, 0.6],
            "retention": [0.5, 0.3, 0.2],
            "influence": [0.5, 0.3, 0.1],
        },
        "3 arms, slow recovery": {
            "base": [1.0, 0.9, 0.7],
            "retention": [0.9, 0.8, 0.6],
            "influence": [0.3, 0.3, 0.2],
        },
    }
    return [
        {"kind": "rebounding", "label": _label("rebounding", name), **params, "sigma": 0.1}
        for name, params in instances.items()
    ]


def _recovering(horizon: int) -> list[dict[str, Any]]:
    return [
        {
            "kind": "recovering",
            "label": _label("recovering", f"GP ℓ = {scale:g}, 5 arms"),
            "n_arms": 5,
            "z_max": 30,
            "lengthscale": scale,
            "instance_seed": 5389,
        }
        for scale in (5.0, 2.0)
    ]


def _impact(horizon: int) -> list[dict[str, Any]]:
    police = {"high": [0.9, 0.8], "low": [0.3, 0.4]}  # Tang et al.'s Figure 2 instance
    return [
        {
            "kind": "impact",
            "label": _label("delayed impact", f"police K=2, γ = {g:g}"),
            "gamma": g,
            **police,
        }
        for g in (0.0, 0.2, 0.4)
    ]


def _opportunity(horizon: int) -> list[dict[str, Any]]:
    means = [round(0.2 + 0.15 * i, 2) for i in range(6)]  # Ron et al.'s Figure 1 arms
    return [
        {
            "kind": "opportunity",
            "label": _label("reward-opportunity", f"λ = 0.4, {fairness}"),
            "means": means,
            "fairness": fairness,
            "transfer_cost": 0.4,
        }
        for fairness in ("uniform", "linear")
    ]


def _rested(horizon: int) -> list[dict[str, Any]]:
    return rested.environments(horizon)


#: The general baselines: every setting with discrete arms runs them, at their defaults (the
#: classical index, Thompson, adversarial, sliding-window, discounted and change-point
#: algorithms of the library).
BASELINES: tuple[dict[str, Any], ...] = (
    {"kind": "ucb1", "label": "UCB1"},
    {"kind": "kl-ucb", "label": "KL-UCB"},
    {"kind": "moss", "label": "MOSS"},
    {"kind": "thompson", "label": "TS"},
    {"kind": "exp3", "label": "EXP3"},
    {"kind": "greedy", "label": "greedy"},
    {"kind": "sw-ucb", "label": "SW-UCB"},
    {"kind": "d-ucb", "label": "D-UCB"},
    {"kind": "r-exp3", "label": "R-EXP3"},
    {"kind": "ucb-v", "label": "UCB-V"},
    {"kind": "d-ts", "label": "D-TS"},
    {"kind": "sw-ts", "label": "SW-TS"},
    {"kind": "sw-kl-ucb", "label": "SW-KL-UCB"},
    {"kind": "exp3s", "label": "Exp3S"},
    {"kind": "ser4", "label": "SER4"},
    {"kind": "cusum-ucb", "label": "CUSUM-UCB"},
    {"kind": "m-ucb", "label": "M-UCB"},
    {"kind": "epsilon-greedy", "label": "ε-greedy"},
    {"kind": "etc", "label": "ETC"},
)
#: Every registered policy the benchmark does not run, with the reason (a test checks that each
#: registered policy is run or listed here). "Not yet run" marks an algorithm that applies and
#: should join; the others do not fit the benchmark as it is.
LEFT_OUT: dict[str, str] = {
    "glr-klucb": "its change-point test is O(t) per round: 459 CPU s for one environment at "
    "T = 10,000 with 30 seeds (readable loop), hours over the benchmark",
    "spo": "runs as spo-delta, its form for noisy rewards: every benchmark instance has noise",
    "r-less-ucb": "made for restless rising bandits; the benchmark has no restless setting",
    "rebounding-lookahead": "a planner told the true dynamics (the rebounding oracle), not a "
    "learner",
    "one-step-optimistic": "not yet run: Lindner et al.'s baseline for the rested families",
    "last-reward-greedy": "not yet run: Lindner et al.'s baseline for the rested families",
    "ucb": "not yet run: Lindner et al.'s UCB (D-UCB with discount 1), close to UCB1",
    "thompson-gaussian": "not yet run: Thompson sampling with Gaussian priors (TS runs, with "
    "rewards binarised)",
    "fa-etc": "not yet run: Ron et al.'s Fairness-Aware-ETC, for reward-opportunity",
    "const-elimination": "not yet run: Ron et al.'s Algorithm 3, for constant fairness functions",
    "ranker-low": "not yet run: Cella & Cesa-Bianchi's ranker followed by π_low, for "
    "delay-dependent payoffs",
}

#: The algorithms made for each non-rested setting (the rested families' come from
#: ``rested-benchmark``).
SPECIALISTS: dict[str, tuple[dict[str, Any], ...]] = {
    "stationary": (),
    "improving": (
        {"kind": "patil", "label": "Patil Alg. 1"},
        {"kind": "hkr", "label": "HKR"},
        {"kind": "round-robin", "label": "round-robin"},
    ),
    "delay-dependent": (
        {"kind": "pi-low", "label": "π_low"},
        {"kind": "pi-ucb", "label": "π_ucb"},
    ),
    "blocking": ({"kind": "ucb-greedy", "label": "UCB Greedy"},),
    "rebounding": ({"kind": "eep", "label": "EEP"},),
    "recovering": (
        {"kind": "rgp-ucb", "label": "RGP-UCB"},
        {"kind": "rgp-ts", "label": "RGP-TS"},
    ),
    "delayed impact": (
        {"kind": "ad-ucb", "label": "AD-UCB"},
        {"kind": "hd-ucb", "label": "HD-UCB"},
        {"kind": "cucb", "label": "CUCB"},
        {"kind": "exp3-meta", "label": "mEXP3"},
        {"kind": "one-hot", "label": "EXP3 (one-hot)", "base": "exp3"},
        {"kind": "one-hot", "label": "D-UCB (one-hot)", "base": "d-ucb"},
        {"kind": "one-hot", "label": "SW-UCB (one-hot)", "base": "sw-ucb"},
    ),
    "reward-opportunity": ({"kind": "srum", "label": "SRUM"},),
}

#: Per setting: its environments (a function of the longest horizon) and whether the general
#: baselines run there (discrete arms).
SETTINGS: dict[str, tuple[Callable[[int], list[dict[str, Any]]], bool]] = {
    "stationary": (_stationary, True),
    "rested": (_rested, True),
    "improving": (_improving, True),
    "delay-dependent": (_delay, True),
    "blocking": (_blocking, True),
    "rebounding": (_rebounding, True),
    "recovering": (_recovering, True),
    "delayed impact": (_impact, False),
    "reward-opportunity": (_opportunity, True),
}

#: What each setting's regret is measured against.
ORACLES: dict[str, str] = {
    "stationary": "exact: the best arm",
    "single-peaked": "exact optimal allocation",
    "increasing": "exact optimal allocation",
    "FICO": "exact optimal allocation",
    "recommender": "exact optimal allocation",
    "rising": "exact optimal allocation",
    "rotting": "exact optimal allocation",
    "improving": "exact optimal allocation",
    "delay-dependent": "the paper's benchmark: the ghost policy π_ghost (Cella & Cesa-Bianchi)",
    "blocking": "exact: dynamic programme over the blocking states",
    "rebounding": "the paper's benchmark: greedy with the true dynamics (Leqi et al.)",
    "recovering": "the paper's benchmark: greedy (1-step lookahead) with the true recovery "
    "functions (Pike-Burke & Grünewälder)",
    "delayed impact": "the paper's benchmark: the best fixed allocation (Tang et al.)",
    "reward-opportunity": "exact: the optimal stationary policy (Ron et al.)",
}


def environments(horizon: int, settings: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every setting's environments, long enough for ``horizon`` rounds; ``settings``: only
    those families (setting names, or the rested families' names)."""
    out: list[dict[str, Any]] = []
    for build, _ in SETTINGS.values():
        out += build(horizon)
    if settings is not None:
        wanted = set(settings)
        out = [e for e in out if family_of(e["label"]) in wanted]
    return out


def policies(envs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every algorithm, each restricted to the environments of the settings it applies to."""
    by_family: dict[str, list[str]] = {}
    for env in envs:
        by_family.setdefault(family_of(env["label"]), []).append(env["label"])
    rested_envs = [e for e in envs if family_of(e["label"]) in RESTED]
    out: list[dict[str, Any]] = []
    discrete = [
        label
        for family, labels in by_family.items()
        if family in RESTED or SETTINGS.get(family, (None, False))[1]
        for label in labels
    ]
    if rested_envs:
        for entry in rested.policies(rested_envs):
            only = entry.get("environments", [e["label"] for e in rested_envs])
            out.append({**entry, "environments": only})
    for family, specialists in SPECIALISTS.items():
        if family in by_family:
            out += [{**s, "environments": by_family[family]} for s in specialists]
    if discrete:
        out += [{**b, "environments": discrete} for b in BASELINES]
    return out


def spec(
    quick: bool = False, settings: Iterable[str] | None = None, name: str = "benchmark"
) -> ExperimentSpec:
    """The benchmark's experiment (``settings``: a view on some families only)."""
    from impactbandits.experiments.spec import ExperimentSpec

    horizons = HORIZONS[1] if quick else HORIZONS[0]
    envs = environments(max(horizons), settings)
    return ExperimentSpec.create(
        name=quick_name(name, quick),
        environments=envs,
        policies=policies(envs),
        horizons=list(horizons),
        seeds=SEEDS[1] if quick else SEEDS[0],
    )


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    from impactbandits.experiments.leaderboard import write_leaderboard
    from impactbandits.experiments.tidy import tidy_table

    return write_leaderboard(
        tidy_table(run_dir),
        run_dir,
        title="impactbandits benchmark",
        against="against each setting's oracle: see the benchmark page",
        output=output,
    )


BENCHMARK = Figure(
    name="benchmark",
    title="Every setting, every algorithm that applies: one leaderboard",
    source="impactbandits' cross-setting benchmark (the papers of each setting)",
    build=spec,
    render=render,
    claims=CROSS_CLAIMS,
)
