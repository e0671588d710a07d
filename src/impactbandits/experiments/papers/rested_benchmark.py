"""``rested-benchmark``: every rested-bandit algorithm of the library on every rested family,
with exact policy regret, summarised as a leaderboard (issue 15, item 5). Since issue 30 it is
the view of ``benchmark`` (:mod:`impactbandits.experiments.papers.benchmark`) on these
families: this module defines their environments and specialists, the benchmark adds the
general baselines it runs on every setting with discrete arms.

Families (environment labels ``"<family> / <name>"``, see
:mod:`impactbandits.experiments.leaderboard`), Gaussian reward noise σ = :data:`SIGMA` on the
families of Lindner et al. (2021) and each paper's own noise elsewhere:

* single-peaked — Lindner et al. (2021) instances 1–3 (Figs 1, 8–10);
* increasing — Heidari, Kearns & Roth (2016) families inc_1–inc_3 (α = 0.1);
* FICO — Lindner et al. (2021) §5 credit lending, score change and bank utility;
* recommender — Lindner et al. (2021) §5 synthetic recommender, instances A–C;
* rising — Metelli et al. (2022) rested rising instances (their 15- and 2-arm instances and two
  draws of their random generator), with their Beta observations;
* rotting — Seznec et al. (2019) ten arms (abrupt and smooth decay) and two arms, scaled into
  [0, 1] (:data:`ROTTING`).

Algorithms: SPO (with noise the paper's Corollary 1, SPO-δ, told the family's sub-Gaussian σ),
Patil et al.'s (2023) Algorithm 1, HKR (Heidari et al. 2016), R-ed-UCB (Metelli et al. 2022),
SW-UCB and D-UCB (Garivier & Moulines 2011, Lindner et al.'s settings), EXP3 (γ tuned to the
horizon) and Rexp3 (Besbes et al. 2014), UCB1, KL-UCB (Garivier & Cappé 2011), Thompson
sampling (Agrawal & Goyal 2012, rewards in [0, 1] binarized) and greedy — each at its defaults.
FEWA (Seznec et al. 2019) and RAW-UCB (Seznec et al. 2020) run at their experiments' α, wSWA
(Levine et al. 2017) at its defaults.
:func:`environments` and :func:`policies` are the two places to extend. FEWA and RAW-UCB are
told σ = 0.05 (the noise of every family but rising), and so is wSWA. Every policy runs on
every environment (HKR and Patil's algorithm assume increasing rewards: the benchmark shows
what they do elsewhere).

Horizons T = 2,000 and 10,000 with 30 replications (``--quick``: T = 300 and 1,000, 3
replications). The general baselines (SW-UCB to greedy above, and MOSS) are the benchmark's
(:data:`impactbandits.experiments.papers.benchmark.BASELINES`). The leaderboard
(``leaderboard.csv``, ``pairs.csv``, ``ranks.csv``, ``leaderboard.md`` and rank heat maps) is
written by the figure's renderer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure
from impactbandits.experiments.leaderboard import FAMILY_SEPARATOR
from impactbandits.experiments.papers.rested_benchmark_claims import BENCHMARK_CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

__all__ = ["BENCHMARK", "HORIZONS", "SEEDS", "SIGMA", "environments", "policies"]

#: Gaussian reward noise on the Lindner et al. families.
SIGMA = 0.05
#: (full, quick) horizons and replications.
HORIZONS = ((2_000, 10_000), (300, 1_000))
SEEDS = (30, 3)


#: Rising family (Metelli et al. 2022, their Beta observations): the 15- and 2-arm instances of
#: their experiments and two draws of their random generator with b ≤ 10,000.
RISING: tuple[tuple[str, dict[str, Any]], ...] = (
    ("15 arms", {"instance": "15-arms"}),
    ("2 arms", {"instance": "2-arms"}),
    ("random 0", {"instance": "random", "seed": 0, "scale": 10_000}),
    ("random 1", {"instance": "random", "seed": 1, "scale": 10_000}),
)


#: Rotting family (Seznec et al. 2019's arms scaled by 1/20 into [0, 1], with σ = SIGMA, i.e.
#: their σ = 1 scaled alike): ten arms, abrupt and smooth decay, and their two-arm instance.
ROTTING: tuple[tuple[str, dict[str, Any]], ...] = (
    ("10 arms, abrupt", {"instance": "ten-arms", "decay": "abrupt"}),
    ("10 arms, smooth", {"instance": "ten-arms", "decay": "smooth"}),
    ("2 arms, abrupt", {"instance": "two-arms", "mu": 5.0}),
)


def _label(family: str, name: str) -> str:
    return f"{family}{FAMILY_SEPARATOR}{name}"


def _noisy(sigma: float) -> dict[str, Any]:
    return {"noise": "gaussian", "sigma": sigma}


def environments(horizon: int) -> list[dict[str, Any]]:
    """Every family's environments, long enough for ``horizon`` rounds."""
    out: list[dict[str, Any]] = []
    for instance in (1, 2, 3):
        out.append(
            {
                "kind": "single-peaked",
                "label": _label("single-peaked", f"instance {instance}"),
                "instance": instance,
                "length": horizon,
                **_noisy(SIGMA),
            }
        )
    for family in ("inc_1", "inc_2", "inc_3"):
        out.append(
            {
                "kind": "increasing",
                "label": _label("increasing", family),
                "family": family,
                "length": horizon,
                **_noisy(SIGMA),
            }
        )
    for curve in ("score_change", "bank_utility"):
        out.append(
            {
                "kind": "fico",
                "label": _label("FICO", curve.replace("_", " ")),
                "curve": curve,
                "length": horizon,
                **_noisy(SIGMA),
            }
        )
    for letter in ("A", "B", "C"):
        out.append(
            {
                "kind": "recommender",
                "label": _label("recommender", letter),
                "instance": letter,
                "length": horizon,
                **_noisy(SIGMA),
            }
        )
    for name, extra in ROTTING:
        out.append(
            {
                "kind": "rotting",
                "label": _label("rotting", name),
                "length": horizon,
                "scale": 0.05,
                "offset": 0.5,
                "noise": "gaussian",
                "sigma": SIGMA,
                **extra,
            }
        )
    for name, extra in RISING:
        out.append({"kind": "rising", "label": _label("rising", name), "length": horizon, **extra})
    return out


def _sigma(entry: dict[str, Any]) -> float:
    """Sub-Gaussian proxy of the environment's noise, for SPO-δ: σ of Gaussian noise; 1/2 for
    observations within [0, 1] (``"beta-mean"``, Hoeffding's lemma); 0 without noise."""
    noise = entry.get("noise", "none")
    if noise == "beta-mean" or (entry["kind"] == "rising" and "noise" not in entry):
        return 0.5
    return float(entry.get("sigma", 0.0)) if noise != "none" else 0.0


def policies(envs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The algorithms made for rested bandits (the benchmark adds its general baselines, SW-UCB,
    D-UCB, EXP3, R-EXP3, UCB1, KL-UCB, TS, greedy and MOSS); SPO gets one entry per noise level
    (SPO-δ needs σ)."""
    out: list[dict[str, Any]] = []
    by_sigma: dict[float, list[str]] = {}
    for env in envs:
        by_sigma.setdefault(_sigma(env), []).append(env["label"])
    for sigma, labels in sorted(by_sigma.items()):
        entry = {"kind": "spo-delta", "sigma": sigma} if sigma > 0 else {"kind": "spo"}
        out.append({**entry, "label": "SPO", "environments": labels})
    out += [
        {"kind": "patil", "label": "Patil Alg. 1"},
        {"kind": "hkr", "label": "HKR"},
        {"kind": "r-ed-ucb", "label": "R-ed-UCB"},
        {"kind": "fewa", "label": "FEWA", "sigma": SIGMA},
        {"kind": "raw-ucb", "label": "RAW-UCB", "sigma": SIGMA},
        {"kind": "swa", "label": "wSWA", "sigma": SIGMA},
    ]
    return out


def build(quick: bool) -> ExperimentSpec:
    """The view of ``benchmark`` on the rested families: the same environments, algorithms,
    horizons and seeds (so the same cells and numbers), under its own name."""
    from impactbandits.experiments.papers.benchmark import RESTED, spec

    return spec(quick, RESTED, name="rested-benchmark")


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    from impactbandits.experiments.leaderboard import write_leaderboard
    from impactbandits.experiments.tidy import tidy_table

    return write_leaderboard(tidy_table(run_dir), run_dir, output=output)


BENCHMARK = Figure(
    name="rested-benchmark",
    title="Every rested algorithm on every rested family: a leaderboard",
    source="impactbandits' cross-setting benchmark (Lindner et al. 2021; Heidari et al. 2016; "
    "Patil et al. 2023)",
    build=build,
    render=render,
    claims=BENCHMARK_CLAIMS,
)
