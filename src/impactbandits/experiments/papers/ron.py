"""Ron, Ben-Porat & Shalit (2021), "Corporate Social Responsibility via Multi-Armed Bandits"
(FAccT): the registered figures (the fidelity ledger: https://impactbandits.readthedocs.io/en/latest/fidelity/).

K = 6 Bernoulli arms with μ_i = 0.2 + 0.15(i−1); λ ∈ {0, 0.4, 0.8}; f ∈ {f_uni = 1/K,
f_lin = μ_i/K, f_sft = softmax(c·μ), c = 1}; SRUM (Algorithm 2) with UCB1 as the black box and
the paper's α, β (Theorem 2); horizons 10³, 5·10³, 10⁴, 5·10⁴, 10⁵, 2·10⁵ and 200 repetitions.
``--quick``: horizons 10³, 10⁴, 10⁵ and 10 repetitions (SRUM needs T ≳ 10⁵ to leave its
approximation phases when some gap Δ_i lies within β of λ).

* ``ron-fig1`` (Figure 1): average utility (utility / T) against T, one panel per λ, one line
  per f, the exact Lemma-1 optimum dashed.
* ``ron-fig2`` (Figure 2): the share of rounds spent in each phase of SRUM against T for f_sft,
  one panel per λ (stacked bars of the four phase shares, which sum to 1).

``fig1(quick, variant="authors-code")`` (and ``fig2``) build the same grid with every
behaviour of the authors' code (tomron/CSRviaMAB): SRUM's and the environment's
``variant = "authors-code"`` (UCB1 capped at 1 and kept warm, α with K, L = c for f_sft, the
penalty evaluated at μ̂); the experiment name gets the suffix ``-authors-code``.
``variant="authors-ucb1"`` changes only the black box: the authors' UCB1 (index capped at 1,
ln T of the horizon; SRUM's ``black_box_params = {variant = "authors-code"}``), the reading
under which the published Figure 1 panels are matched at every point (the fidelity ledger).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from impactbandits.errors import SpecError
from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.ron_claims import FIG1_CLAIMS, FIG2_CLAIMS

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

MEANS = [round(0.2 + 0.15 * i, 2) for i in range(6)]
LAMBDAS = (0.0, 0.4, 0.8)
FAIRNESS = ("uniform", "linear", "softmax")
NAMES = {"uniform": "f_uni", "linear": "f_lin", "softmax": "f_sft"}
FULL_HORIZONS = [1_000, 5_000, 10_000, 50_000, 100_000, 200_000]
QUICK_HORIZONS = [1_000, 10_000, 100_000]
FULL_SEEDS, QUICK_SEEDS = 200, 10
VARIANTS = ("paper", "authors-code", "authors-ucb1")
#: SRUM's phases, in the order of the stacked bars of Figure 2.
PHASES = ("phase_1", "phase_2", "phase_3", "phase_4")


def _env(fairness: str, lam: float, variant: str = "paper") -> dict[str, Any]:
    env: dict[str, Any] = {
        "kind": "opportunity",
        "label": f"λ={lam:g}, {NAMES[fairness]}",
        "means": MEANS,
        "fairness": fairness,
        "transfer_cost": lam,
    }
    if variant == "authors-code":
        env["variant"] = variant
    return env


def _spec(
    name: str, description: str, envs: list[dict[str, Any]], quick: bool, variant: str
) -> ExperimentSpec:
    if variant not in VARIANTS:
        raise SpecError("variant", f"unknown variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    policy: dict[str, Any] = {"kind": "srum", "label": "SRUM"}
    if variant == "authors-code":
        policy["variant"] = variant
    if variant == "authors-ucb1":
        policy["black_box_params"] = {"variant": "authors-code"}
    if variant != "paper":
        name = f"{name}-{variant}"
    return scaled_spec(
        name,
        quick,
        horizons=(FULL_HORIZONS, QUICK_HORIZONS),
        seeds=(FULL_SEEDS, QUICK_SEEDS),
        description=description,
        environments=envs,
        policies=[policy],
    )


def fig1(quick: bool, variant: str = "paper") -> ExperimentSpec:
    envs = [_env(f, lam, variant) for lam in LAMBDAS for f in FAIRNESS]
    return _spec(
        "ron-fig1",
        "Ron et al. Figure 1: average utility of SRUM for 9 fairness "
        "policies, with the exact optimum.",
        envs,
        quick,
        variant,
    )


def fig2(quick: bool, variant: str = "paper") -> ExperimentSpec:
    envs = [_env("softmax", lam, variant) for lam in LAMBDAS]
    return _spec(
        "ron-fig2",
        "Ron et al. Figure 2: share of rounds per SRUM phase for f_sft.",
        envs,
        quick,
        variant,
    )


def _legend(axes: Any) -> None:
    """One legend with every labelled artist of the panels (some panels may be empty)."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        axes[-1].legend(
            list(entries.values()), list(entries), fontsize="small", loc="upper left",
            bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
        )  # fmt: skip


def render_fig1(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.metrics import summarise

    _, table = load_run(run_dir)
    table = table.assign(optimal_average=table["optimum"] / table["horizon"])
    fig = MplFigure(figsize=(15, 4.2), layout="constrained")
    axes = fig.subplots(1, len(LAMBDAS), sharey=True)
    for ax, lam in zip(axes, LAMBDAS, strict=True):
        for fairness in FAIRNESS:
            rows = table[table["environment"] == f"λ={lam:g}, {NAMES[fairness]}"]
            if rows.empty:
                continue
            s = summarise(rows, "average_utility", by=("horizon",)).sort_values("horizon")
            (line,) = ax.plot(s["horizon"], s["mean"], "o-", label=NAMES[fairness])
            ax.fill_between(
                s["horizon"],
                s["mean"] - s["ci"],
                s["mean"] + s["ci"],
                color=line.get_color(),
                alpha=0.2,
                lw=0,
            )
            opt = rows.groupby("horizon")["optimal_average"].mean()
            ax.plot(
                opt.index,
                opt.to_numpy(),
                "--",
                color=line.get_color(),
                lw=1,
                label=f"{NAMES[fairness]} optimum",
            )
        ax.set_xscale("log")
        ax.set_title(f"λ = {lam:g}")
        ax.set_xlabel("horizon T")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("average utility U/T")
    _legend(axes)
    return [save_png(fig, run_dir, "ron-fig1", output)]


def render_fig2(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    from matplotlib.figure import Figure as MplFigure

    _, table = load_run(run_dir)
    # only SRUM's four phase shares: the tidy table's other phase_* column, phase_switches, is
    # a count of policy switches, not a share of rounds
    phases = [c for c in PHASES if c in table.columns]
    fig = MplFigure(figsize=(15, 4.2), layout="constrained")
    axes = fig.subplots(1, len(LAMBDAS), sharey=True)
    for ax, lam in zip(axes, LAMBDAS, strict=True):
        rows = table[table["environment"] == f"λ={lam:g}, f_sft"]
        if rows.empty:
            continue
        shares = rows.groupby("horizon")[phases].mean().sort_index()
        x = np.arange(len(shares))
        bottom = np.zeros(len(shares))
        for column in phases:
            ax.bar(x, shares[column], bottom=bottom, label=f"phase {column.removeprefix('phase_')}")
            bottom += shares[column].to_numpy()
        # short labels, level: a rotated label would need room the fixed layout does not give
        ax.set_xticks(x, [f"{h / 1000:g}k" if h >= 1000 else f"{h:g}" for h in shares.index])
        ax.set_ylim(0.0, 1.0)
        ax.set_title(f"λ = {lam:g}, f_sft")
        ax.set_xlabel("horizon T")
    axes[0].set_ylabel("share of rounds")
    _legend(axes)
    return [save_png(fig, run_dir, "ron-fig2", output)]


FIG1 = Figure(
    "ron-fig1",
    "Average utility of SRUM for nine fairness policies",
    "Ron, Ben-Porat & Shalit 2021, Figure 1",
    fig1,
    render_fig1,
    variants=VARIANTS,
    claims=FIG1_CLAIMS,
)
FIG2 = Figure(
    "ron-fig2",
    "Share of rounds per SRUM phase (f_sft)",
    "Ron, Ben-Porat & Shalit 2021, Figure 2",
    fig2,
    render_fig2,
    variants=VARIANTS,
    claims=FIG2_CLAIMS,
)
