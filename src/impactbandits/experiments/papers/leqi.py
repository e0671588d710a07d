"""Rebounding bandits: the registered figure ``leqi-rebounding`` (Leqi, Kılınç-Karzan, Lipton &
Montgomery 2021, "Rebounding Bandits for Modeling Satiation Effects", NeurIPS; arXiv
2011.06741), the experiments as far as they could be recovered. The fidelity ledger:
https://impactbandits.readthedocs.io/en/latest/fidelity/

What could be read. The paper's full text is stored in the search corpora (the NeurIPS 2021 text
in the ml-papers-txt collection on object.cloud.sdsc.edu, the arXiv v3 LaTeX and paragraphs in
Google's SPIQA data set on huggingface.co), but every corpus serves a page from its beginning:
the title, the abstract and the first paragraphs of §1, never the experiments section. The
constants of the experiments (arms, b, γ, λ, noise, horizons, runs, w, EEP's exploration
length) could not be read. What was read about them:

- the NeurIPS abstract (papers.nips.cc/paper/2021/hash/2109737282d2c2de4fc5534be26c9bb6-
  Abstract.html): "Unlike classical bandit algorithms, methods for tackling rebounding bandits
  must plan ahead and model-based methods rely on estimating the parameters of the satiation
  dynamics. We characterize the planning problem, showing that the greedy policy is optimal
  when the arms exhibit identical deterministic dynamics. To address stochastic satiation
  dynamics with unknown parameters, we propose Explore-Estimate-Plan …";
- the arXiv v2 abstract (researchtrend.ai/papers/2011.06741v2): "a greedy policy, which plays
  the arms in a cyclic order, is optimal. To handle the case when the parameters governing the
  satiation dynamics can vary across arms, we propose a lookahead policy that generalizes the
  greedy policy";
- a review's summary (liner.com/review/rebounding-bandits-for-modeling-satiation-effects):
  "EEP provides theoretical guarantees for its estimators and achieves a sublinear w-step
  lookahead regret", and, under "Experimental results", "RQ1: How does the greedy policy
  perform compared to the optimal policy when arm dynamics are identical and deterministic?
  RQ2: What is the optimality gap of the w-lookahead policy compare…" (the stored copy ends
  there: the answers, a third question if any, and the figures are not in it);
- an appendix passage of the greedy-optimality proof (quoted in
  :mod:`impactbandits.oracles.rebounding`).

No rate was readable: O(T^{2/3}), the usual rate of explore-then-commit, is in no text found
(the review says "sublinear"), so the regret claims are checked as growth over a decade of
horizons against the geometric midpoint of T^{2/3} (the order of EEP's exploration here,
m ∝ T^{2/3}) and T (:mod:`~impactbandits.experiments.papers.leqi_claims`).

The figure (every constant ours, each an option of the environment or policy):

- three arms with identical deterministic dynamics, b = 2.5, γ = 0.55, λ = 1.1 (the midpoints of
  the ranges below), regret against the 3-lookahead plan (``lookahead = 3``): the first
  question, greedy against the optimum. The exact optimum (``rebounding_optimum``) is a dynamic
  program over 3^T satiation vectors, exact only to T = 13, and a spec's horizons are shared by
  its environments, so it cannot be the oracle of a run that also reaches T = 10⁴: the
  horizon grid holds T = 12, and the claim compares greedy's stored reward there with the exact
  optimum of the same instance;
- five arms with different dynamics, b ~ U[1, 4], γ ~ U[0.2, 0.9], λ ~ U[0.2, 2] drawn by
  ``default_rng(0)``, noise-free, regret against the 2-lookahead plan: the second question,
  w-lookahead against greedy;
- the same arms with satiation noise σ_z = 0.1 (no reward noise: EEP's least squares regresses
  a reward on the previous one, and reward noise in the regressor would bias γ̂): EEP's
  setting, its 2-step lookahead regret.

Every environment tells the planners b, γ, λ (``reveal_parameters``); EEP and the classical
baselines do not read them. Policies: greedy and the 2- and 3-lookahead planners (known
dynamics), EEP with w = 2 and its default exploration ``max(3, ⌈T^{2/3}/K⌉)`` consecutive pulls
per arm, and three classical bandit algorithms that do not plan (UCB1, SW-UCB, D-UCB with their
defaults). T = 12, 100, 10³, 2·10³, 5·10³, 10⁴ (EEP, SW-UCB and D-UCB need the horizon and run
once for each; the others once to 10⁴), 100 runs. ``--quick``: T up to 10³, 5 runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.leqi_claims import (
    BASELINES,
    CLAIMS,
    DIFFERENT,
    DIFFERENT_ENV,
    EEP,
    GREEDY,
    IDENTICAL,
    IDENTICAL_ENV,
    LOOKAHEADS,
    NOISY_ENV,
    SIGMA_Z,
    SMALL_T,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

FULL_T, QUICK_T = 10_000, 1_000
SCALE: dict[str, Any] = {
    "horizons": (
        [SMALL_T, 100, FULL_T // 10, FULL_T // 5, FULL_T // 2, FULL_T],
        [SMALL_T, QUICK_T // 10, QUICK_T // 5, QUICK_T // 2, QUICK_T],
    ),
    "seeds": (100, 5),
    "checkpoints": 100,
}
#: EEP's lookahead, and so the w of the regret benchmark where it learns (ours).
EEP_W = 2
POLICIES: list[dict[str, Any]] = [
    {"kind": "rebounding-lookahead", "lookahead": 1, "label": GREEDY},
    *(
        {"kind": "rebounding-lookahead", "lookahead": w, "label": label}
        for w, label in LOOKAHEADS.items()
    ),
    {"kind": "eep", "lookahead": EEP_W, "label": EEP},
    {"kind": "ucb1", "label": BASELINES[0]},
    {"kind": "sw-ucb", "label": BASELINES[1]},
    {"kind": "d-ucb", "label": BASELINES[2]},
]


def environments() -> list[dict[str, Any]]:
    known = {"kind": "rebounding", "reveal_parameters": True}
    return [
        {**known, "label": IDENTICAL_ENV, **IDENTICAL, "lookahead": max(LOOKAHEADS)},
        {**known, "label": DIFFERENT_ENV, **DIFFERENT, "lookahead": EEP_W},
        {**known, "label": NOISY_ENV, **DIFFERENT, "sigma_z": SIGMA_Z, "lookahead": EEP_W},
    ]


def build(quick: bool) -> ExperimentSpec:
    return scaled_spec(
        "leqi-rebounding",
        quick,
        description="Rebounding bandits: greedy and w-lookahead planning, Explore-Estimate-Plan "
        "and classical bandit algorithms against the w-lookahead plan (Leqi et al. 2021).",
        environments=environments(),
        policies=POLICIES,
        **SCALE,
    )


def render(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """Per environment: regret against round t in the longest runs, and regret per round
    R(T)/T at the end of each horizon T on a log axis (sublinear regret falls towards 0)."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_horizon, plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    ends = table[table["horizon"].isin(spec.horizons)]  # the grid's horizons, not checkpoints
    paths = []
    for number, env in enumerate(spec.environments):
        fig = MplFigure(figsize=(12, 4.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        plot_metric_vs_time(table, left, metric="regret", environment=env.label)
        left.set_title("(a) regret against the w-lookahead plan")
        plot_metric_vs_horizon(
            ends, right, metric="per_step_regret", environment=env.label, log_x=True
        )
        right.set_title("(b) regret per round at the end of each horizon")
        fig.suptitle(f"{spec.name}: {env.label}")
        paths.append(save_png(fig, run_dir, f"{spec.name}-{number}", output))
    return paths


REBOUNDING = Figure(
    "leqi-rebounding",
    "Greedy, w-lookahead and Explore-Estimate-Plan on rebounding (satiating) arms",
    "Leqi, Kılınç-Karzan, Lipton & Montgomery 2021, experiments (set up from the abstracts and "
    "a review's summary; the paper's constants could not be read)",
    build,
    render,
    claims=CLAIMS,
)
