"""Patil, Nair, Ghalme & Khan (2023), "Mitigating disparity while maximizing reward: tight
anytime guarantee for improving bandits" (IJCAI): the registered figures.

No public code exists (the fidelity ledger); the choices below are ours and documented:

* ``patil-heidari`` (their Fig. 10): Heidari et al.'s families inc_1–inc_3 with the α values of
  Lindner et al.'s Figs 4–6; Algorithm 1 vs HKR vs round robin; per-step regret and competitive
  ratio against T (T ≤ 10⁴, 50 horizons).
* ``patil-random`` (Fig. 11): random IMAB instances with k = 5 arms from
  :func:`~impactbandits.envs.improving.random_imab_curves`: seeds 0–3 of the ``"uniform"`` family
  (mostly easy: only seed 3 has an arm that starts behind and becomes the best arm within T) and
  seeds 0–3 of the ``"late-bloomer"`` family (by construction the arm with the highest potential
  starts behind an early riser and is the best arm only for long horizons: the paper's
  motivating case, §1).
* ``patil-potential`` (Fig. 12): f_i(N_i(t)) of every arm against t, beside its true potential
  a_i = lim f_i(n) (closed form, not the table's last value), for Algorithm 1 and HKR (at the
  longest horizon) on uniform random instance 0, late-bloomer instance 0 and inc_1 α=0.5.
* ``patil-lower-bound``: the competitive ratio at T = kN against k on the family I_m (m the last
  arm), k = 2 … 64, N = 100, for Algorithm 1 and round robin, log-log, beside k/2 and k.

Curves are noise-free, so every policy is deterministic: one seed suffices.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from impactbandits.experiments.figures import (
    Figure,
    built_in_environment,
    load_run,
    quick_name,
    save_png,
)
from impactbandits.experiments.papers.patil_claims import (
    HEIDARI_CLAIMS,
    POTENTIAL_CLAIMS,
    RANDOM_CLAIMS,
    lower_bound_claims,
)

if TYPE_CHECKING:
    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec

POLICIES: list[dict[str, Any]] = [
    {"kind": "patil", "label": "Algorithm 1"},
    {"kind": "hkr", "label": "HKR"},
    {"kind": "round-robin", "label": "RR"},
]
HEIDARI_ALPHAS = {
    "inc_1": (0.1, 0.5, 1.0, 5.0),
    "inc_2": (0.03, 0.1, 0.4, 1.0),
    "inc_3": (0.1, 0.5, 1.0, 5.0),
}
LOWER_BOUND_KS = (2, 4, 8, 16, 32, 64)
RANDOM_LABELS = {"uniform": "random", "late-bloomer": "late bloomer"}
LOWER_BOUND_PULLS = 100


def _grid(t_max: int, count: int) -> list[int]:
    return sorted({int(x) for x in np.floor(np.linspace(10, t_max, count))})


def heidari(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    t_max = 2_000 if quick else 10_000
    envs = [
        {
            "kind": "increasing",
            "label": f"{fam} α={a:g}",
            "family": fam,
            "alpha": a,
            "length": t_max,
        }
        for fam, alphas in HEIDARI_ALPHAS.items()
        for a in alphas
    ]
    return ExperimentSpec.create(
        name=quick_name("patil-heidari", quick),
        description="Patil et al. Fig. 10: Algorithm 1 vs HKR vs RR on Heidari et al.'s families.",
        environments=envs,
        policies=POLICIES,
        horizons=_grid(t_max, 8 if quick else 50),
        seeds=1,
    )


def random_instances(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    t_max = 2_000 if quick else 10_000
    envs = [
        {
            "kind": "imab",
            "label": f"{RANDOM_LABELS[family]} k=5 seed {s}",
            "family": "random",
            "random_family": family,
            "k": 5,
            "seed": s,
            "length": t_max,
        }
        for family in RANDOM_LABELS
        for s in range(4)
    ]
    return ExperimentSpec.create(
        name=quick_name("patil-random", quick),
        description=(
            "Patil et al. Fig. 11: random IMAB instances (saturating exponentials), uniform and "
            "late-bloomer families."
        ),
        environments=envs,
        policies=POLICIES,
        horizons=_grid(t_max, 8 if quick else 50),
        seeds=1,
    )


def potential(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    t_max = 3_000 if quick else 20_000
    envs = [
        *(
            {
                "kind": "imab",
                "label": f"{RANDOM_LABELS[family]} k=5 seed 0",
                "family": "random",
                "random_family": family,
                "k": 5,
                "seed": 0,
                "length": t_max,
            }
            for family in RANDOM_LABELS
        ),
        {
            "kind": "increasing",
            "label": "inc_1 α=0.5",
            "family": "inc_1",
            "alpha": 0.5,
            "length": t_max,
        },
    ]
    return ExperimentSpec.create(
        name=quick_name("patil-potential", quick),
        description="Patil et al. Fig. 12: each arm's f_i(N_i(t)) approaching its potential a_i.",
        environments=envs,
        policies=POLICIES[:2],
        horizons=[t_max],
        seeds=1,
        checkpoints=200,
    )


def lower_bound(quick: bool) -> ExperimentSpec:
    from impactbandits.experiments.spec import ExperimentSpec

    ks = LOWER_BOUND_KS[:4] if quick else LOWER_BOUND_KS
    pulls = 25 if quick else LOWER_BOUND_PULLS
    envs = [
        {
            "kind": "imab",
            "label": f"I_m k={k}",
            "family": "lower-bound",
            "k": k,
            "m": k - 1,
            "horizon": k * pulls,
            "length": max(ks) * pulls,
        }
        for k in ks
    ]
    policies = [POLICIES[0], POLICIES[2]]
    return ExperimentSpec.create(
        name=quick_name("patil-lower-bound", quick),
        description="Competitive ratio at T = kN on the lower-bound family I_m, against k.",
        environments=envs,
        policies=policies,
        horizons=[k * pulls for k in ks],
        seeds=1,
    )


def render_curves_and_ratio(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    from impactbandits.experiments.rested_figures import render_rested

    return render_rested(
        run_dir, metrics=("per_step_regret", "competitive_ratio"), pulls_panel=False, output=output
    )


def render_potential(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """f_i(N_i(t)) against t per arm and policy, with the true potentials a_i = lim f_i(n)
    dashed (closed form: :func:`~impactbandits.envs.improving.true_potentials`)."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.envs.improving import true_potentials
    from impactbandits.experiments.plots import outside_legend, readable_ticks

    spec, table = load_run(run_dir, trajectories=True)
    paths: list[Path] = []
    for env_spec in spec.environments:
        env = built_in_environment(env_spec)
        curves = np.asarray(env.curves)  # type: ignore[attr-defined]
        potentials = true_potentials(env)  # a_i = lim f_i(n), not the table's last value
        rows = table[table["environment"] == env_spec.label]
        policies = list(dict.fromkeys(rows["policy"]))
        fig = MplFigure(figsize=(5.5 * len(policies), 3.8), layout="constrained")
        axes = np.atleast_1d(fig.subplots(1, len(policies)))
        for ax, policy in zip(axes, policies, strict=True):
            run = rows[
                (rows["policy"] == policy) & (rows["run_horizon"] == rows["run_horizon"].max())
            ]
            run = run.sort_values("time")
            for arm in range(curves.shape[0]):
                pulls = run[f"pulls_{arm}"].to_numpy(dtype=np.int64)
                current = curves[arm, np.clip(pulls - 1, 0, curves.shape[1] - 1)]
                (line,) = ax.plot(run["time"], current, lw=1.3, label=f"arm {arm}")
                ax.axhline(potentials[arm], color=line.get_color(), ls="--", lw=0.8)
            ax.set_title(f"{policy}: f_i(N_i(t)) vs potential a_i (dashed)")
            ax.set_xlabel("round t")
            ax.set_ylabel("current reward of arm")
            readable_ticks(ax, "x")  # "20k": five-digit rounds ran into each other
            ax.grid(alpha=0.3)
            outside_legend(ax)
        fig.suptitle(f"{spec.name}: {env_spec.label}")
        paths.append(save_png(fig, run_dir, f"potential-{len(paths)}", output))
    return paths


def render_lower_bound(run_dir: Path, output: FigureOutput | None = None) -> list[Path]:
    """CR at T = kN against k (log-log) with the lower bound k/2 and k."""
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import outside_legend

    spec, table = load_run(run_dir)
    fig = MplFigure(figsize=(6, 4.5), layout="constrained")
    ax = fig.subplots()
    ks = [int(env_spec.params["k"]) for env_spec in spec.environments]
    for policy in dict.fromkeys(table["policy"]):
        values = []
        for env_spec in spec.environments:
            row = table[
                (table["environment"] == env_spec.label)
                & (table["policy"] == policy)
                & (table["horizon"] == env_spec.params["horizon"])
            ]
            values.append(float(row["competitive_ratio"].mean()))
        label = str(policy)
        if len(ks) > 1:
            label += f" (slope {np.polyfit(np.log(ks), np.log(values), 1)[0]:.2f})"
        ax.loglog(ks, values, "o-", label=label)
    k_grid = np.array(ks, dtype=float)
    ax.loglog(k_grid, k_grid / 2, "k:", label="k/2 (lower bound)")
    ax.loglog(k_grid, k_grid, "k--", lw=0.8, label="k")
    # the k of the instances as plain numbers; no labels on minor ticks: a log axis over less
    # than two decades labels them ("2×10⁰ 3×10⁰ …", one over the other), and the figure's
    # layout leaves room for the major ones only
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.tick_params(which="minor", labelbottom=False, labelleft=False)
    ax.set_xlabel("number of arms k")
    ax.set_ylabel("competitive ratio at T = kN")
    ax.set_title("Instances I_m (Patil et al. §3)")
    ax.grid(alpha=0.3, which="both")
    outside_legend(ax)
    return [save_png(fig, run_dir, "lower-bound", output)]


HEIDARI = Figure(
    "patil-heidari",
    "Algorithm 1 vs HKR vs RR on Heidari et al.'s instances",
    "Patil et al. 2023, Appendix F, Figure 10",
    heidari,
    render_curves_and_ratio,
    claims=HEIDARI_CLAIMS,
)
RANDOM = Figure(
    "patil-random",
    "Algorithm 1 vs HKR vs RR on random IMAB instances",
    "Patil et al. 2023, Appendix F, Figure 11",
    random_instances,
    render_curves_and_ratio,
    claims=RANDOM_CLAIMS,
)
POTENTIAL = Figure(
    "patil-potential",
    "Arms approaching their true potential",
    "Patil et al. 2023, Appendix F, Figure 12 (Theorem 5)",
    potential,
    render_potential,
    claims=POTENTIAL_CLAIMS,
)
LOWER_BOUND = Figure(
    "patil-lower-bound",
    "Competitive ratio against k on the family I_m",
    "Patil et al. 2023, Section 3 (Theorems 2 and 3)",
    lower_bound,
    render_lower_bound,
    claims=lower_bound_claims(LOWER_BOUND_PULLS),
)
