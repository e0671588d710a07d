"""Tang, Ho & Liu (2021), "Bandit Learning with Delayed Impact of Actions" (NeurIPS): the
registered figures. The paper gives no simulation constants and no code (the fidelity ledger);
ours are:

* Instances: the police model (Eq. 4), r_k(f) = high_k − f·(high_k − low_k), with
  high = linspace(0.9, 0.6, K), low = linspace(0.3, 0.45, K) — for K = 2 we use (0.9, 0.8) and
  (0.3, 0.4) so that the optimum p* ≈ (0.45, 0.55) is interior (where Lemma 3.1 makes base-arm
  bandits fail). Independent activation (§2).
* Learners: AD-UCB (Algorithm 1) and the phased HD-UCB (Algorithms 2–3). Figure 2 and Figure
  3(d) use the theory's defaults (ε = (ln T/T)^{1/3} resp. (ln(ηT)/(ηT))^{1/3} with constant 1,
  1/ε rounded up; s_a, L from Theorem 5.1; η = 0.5). Figure 3(a–c) fixes 1/ε = 20 for every K
  (:data:`FIG3_RESOLUTION`, see below). Baselines: CUCB over the discretized arms, EXP3 over the
  base arms (one-hot meta-arms) and EXP3 over the meta-arms ("mEXP3") in panel 2(a) — the
  paper's legend; EXP3, D-UCB, SW-UCB over the base arms elsewhere.
* ``tang-fig2``: (a) γ = 0, (b–d) γ = 0.2, 0.4, 0.6; T = 20,000, 20 seeds.
* ``tang-fig3``: (a–c) K = 3, 4, 5 at γ = 0.2; (d) η ∈ {0.2, 0.4, 0.6, 0.8} with K = 2,
  γ = 0.4; T = 20,000, 20 seeds.
* Horizon: the paper's axes end near 5,000 (Figure 2, 3(d)) and 10,000 (3(a–c)); ours is longer
  so that the learners' curves bend (see below). ``fig2_spec(quick, horizon=5000)`` and
  ``fig3_spec(quick, horizon=10000)`` give the paper's lengths (experiments ``…-T5000`` etc.).

Why 1/ε = 20 in Figure 3(a–c): the theory's ε depends on T and η only (Θ(·) leaves its
constant free), so with constant 1 it is 1/7 at T = 5,000 for every K; the grid's shares are
positive multiples of ε (§4), so at K = 5 only 15 near-uniform meta-arms remain, all within
0.038 per round of U(p*) (0.166 at K = 2), and the regret *falls* with K — against the paper's
"the slope of the regret curve is proportionally increasing along with increasing K". With a
K-independent 1/ε = 20 (the theory's rate with constant ≈ 2.9 at ηT = 2,500, ≈ 1.8 at
ηT = 10,000) the number of discretized arms is 20K — linear in K like Theorem 5.1's bound —
and the regret rises with K. ``fig3_spec(resolution=None)`` gives the theory's ε (the old
behaviour).

What the figures show about the theory: HD-UCB's ``err = Kγ^{s_{a}}(L + 1)`` is the same for
every meta-arm, so it never changes the argmax; at these settings s_a = 1 or 2 and L = 2 … 5
(Figure 2: s_a = 1, L = 2 at γ = 0.2 and s_a = 2, L = 4 at γ = 0.4, 0.6). With the UCB bonus
√(3K ln t / n) the learners are still exploring at these horizons: each panel's legend gives
the local slope d log R / d log t over the last doubling of rounds (1 = linear, 2/3 = the
T^{2/3} regime).

Panels show cumulative regret against rounds with 95% bands; panels that compare settings of
one question (2(b–d): γ; 3(a–c): K) share their y-axis, and one more panel shows our learner
across them on its own scale (the baselines' regret is 5–10× larger and would flatten its
trend). ``--quick``: T = 1500, 4 seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.papers.tang_claims import FIG2_CLAIMS, FIG3_CLAIMS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.figure_output import FigureOutput
    from impactbandits.experiments.spec import ExperimentSpec, SpecRecord

FULL_T, QUICK_T = 20_000, 1_500  # the paper: about 5,000 (Fig. 2) and 10,000 (Fig. 3)
FULL_SEEDS, QUICK_SEEDS = 20, 4
CHECKPOINTS = 60
#: horizons and seeds as (full, quick) pairs, for :func:`scaled_spec`
SCALE: dict[str, Any] = {
    "horizons": ([FULL_T], [QUICK_T]),
    "seeds": (FULL_SEEDS, QUICK_SEEDS),
    "checkpoints": CHECKPOINTS,
}
GAMMAS = (0.2, 0.4, 0.6)
KS = (3, 4, 5)
ETAS = (0.2, 0.4, 0.6, 0.8)
#: 1/ε of HD-UCB in Figure 3(a–c), the same for every K (module docstring: why)
FIG3_RESOLUTION = 20


FIG2_DESCRIPTION = (
    "Tang et al. Figure 2: (a) γ = 0, AD-UCB (Algorithm 1, theory ε) against CUCB over the "
    "discretized arms, EXP3 over the base arms and EXP3 over the meta-arms (mEXP3), the paper's "
    "legend; (b–d) γ = 0.2, 0.4, 0.6, the phased HD-UCB (Algorithms 2–3, η = 0.5, theory ε) "
    "against EXP3, D-UCB and SW-UCB over the base arms; police instance K = 2, p* ≈ (0.45, 0.55). "
    "HD-UCB's err = Kγ^{s_{a}}(L + 1) is the same for every meta-arm and never changes the argmax; "
    "here s_a = 1, L = 2 (γ = 0.2) and s_a = 2, L = 4 (γ = 0.4, 0.6). Legends give each policy's "
    "local slope d log R/d log t over the last doubling of rounds (1 = linear, 2/3 = the T^{2/3} "
    "regime): at T = 20,000 (20 seeds) AD-UCB 0.69, CUCB 0.67, mEXP3 0.63, HD-UCB 0.86–0.89 — "
    "HD-UCB, with its bonus √(3K ln t/n) and discarded approaching rounds, is still exploring; "
    "the base-arm baselines are linear (0.93–1.02). "
    "AD-UCB and CUCB use the same discretized arms and importance-weighted estimates and differ "
    "only in the bonus. CUCB is Chen et al.'s bound on each group's reward share (Σ_k "
    '√(1.5 ln t/n_k), bonus = "range-scaled", the default); drawn beside it, the p-weighted '
    'reading Σ_k p_k √(1.5 ln t/n_k) (bonus = "weighted"), which under-explores, and CUCB '
    "for probabilistically triggered arms (Chen et al. 2016, §4: an arm counts only the rounds "
    'its group is activated, with unweighted outcomes; bonus = "triggered"). The fidelity '
    "ledger checks the paper's ordering under each reading."
)
FIG3_DESCRIPTION = (
    "Tang et al. Figure 3: (a–c) K = 3, 4, 5 at γ = 0.2 (police instances), shared y-axis, the "
    "phased HD-UCB with 1/ε = 20 for every K against EXP3, D-UCB and SW-UCB over the base arms; "
    "(d) K = 2, γ = 0.4, HD-UCB with η = 0.2 … 0.8 (theory ε). The regret's rise with K depends "
    "on ε: the theory's ε = (ln ηT/ηT)^{1/3} depends on T and η only (1/ε = 7 at T = 5,000 for "
    "every K), and with shares in {ε, …, 1} the K = 5 grid has 15 near-uniform meta-arms, all "
    "within 0.038 per round of the optimum, so regret falls with K; a K-independent 1/ε = 20 "
    "(the theory's rate with a larger constant) gives 20K discretized arms and a regret rising "
    "with K as in the paper. HD-UCB's err term is a constant (never changes the argmax); "
    "s_a = 1, L = 2 (K = 3) and s_a = 2, L = 4 (K = 4, 5) in (a–c); s_a = 1–2, L = 3–5 in (d). "
    "Legends give each policy's local slope "
    "d log R/d log t over the last doubling of rounds (1 = linear, 2/3 = T^{2/3}): at T = 20,000 "
    "(20 seeds) HD-UCB 0.90–0.94 in (a–c), 0.81–0.86 in (d) — still exploring (bonus "
    "√(3K ln t/n)); baselines 0.96–1.01."
)


def police(k: int) -> dict[str, Any]:
    if k == 2:
        return {"high": [0.9, 0.8], "low": [0.3, 0.4]}
    return {
        "high": np.round(np.linspace(0.9, 0.6, k), 4).tolist(),
        "low": np.round(np.linspace(0.3, 0.45, k), 4).tolist(),
    }


#: K = 2 instances for the regret-exponent study (``benchmarks/tang_exponents.py``), all with an
#: interior optimum, so one-hot (base-arm) learners have linear regret (Lemma 3.1):
#:
#: * ``figures``: the figures' police instance; U(p) = U* − (x − 0.45)² near p* (flat top);
#: * ``sharp``: r = 0.9 − 0.8f for both groups; U = 0.5 − 1.6δ² around p* = (½, ½);
#: * ``peaked``: saturating police model, r = 1 − clip(4f − 1.5, 0, 1); U = 0.5 − 8δ² for
#:   |δ| ≤ 1/8, then linear;
#: * ``plateau``: r = 1 − clip(4(f − 0.6), 0, 1): every p with both shares ≤ 0.6 is optimal
#:   (U = 1 on x ∈ [0.4, 0.6], which every grid with 1/ε ≥ 5 meets), gaps linear outside.
#:
#: Curved tops keep the phased HD-UCB pre-asymptotic up to T = 10⁵ (its bonus √(3K ln t/n)
#: and the discarded approaching rounds cost it a factor of about 6 in samples against AD-UCB);
#: on ``plateau`` the T^{2/3}-or-better regime starts within [10³, 10⁵].
EXPONENT_INSTANCES: dict[str, dict[str, Any]] = {
    "figures": {"high": [0.9, 0.8], "low": [0.3, 0.4]},
    "sharp": {"high": [0.9, 0.9], "low": [0.1, 0.1]},
    "peaked": {"high": [1.0, 1.0], "low": [0.0, 0.0], "start": [0.375] * 2, "stop": [0.625] * 2},
    "plateau": {"high": [1.0, 1.0], "low": [0.0, 0.0], "start": [0.6] * 2, "stop": [0.85] * 2},
}


def _base(label: str, kind: str, only: list[str], **params: Any) -> dict[str, Any]:
    return {
        "kind": "one-hot",
        "label": label,
        "base": kind,
        "base_params": params,
        "environments": only,
    }


def _scale(horizon: int) -> dict[str, Any]:
    return {**SCALE, "horizons": ([horizon], [QUICK_T])}


def _name(base: str, *changes: str) -> str:
    """Non-default settings get their own experiment name (and store)."""
    return "-".join([base, *(c for c in changes if c)])


#: Figure 3(a–c)'s HD-UCB with the theory's ε, drawn beside the chosen 1/ε = 20.
THEORY_LEARNER = "ours (HD-UCB, theory ε)"
#: Figure 2(a)'s CUCB with the p-weighted bonus (``bonus = "weighted"``), beside the default.
WEIGHTED_CUCB = "CUCB (p-weighted bonus)"
#: ... and CUCB for probabilistically triggered arms (``bonus = "triggered"``).
TRIGGERED_CUCB = "CUCB (triggered arms)"


def fig2(quick: bool) -> ExperimentSpec:
    return fig2_spec(quick)


def fig2_spec(quick: bool, horizon: int = FULL_T) -> ExperimentSpec:
    """Figure 2 at full horizon ``horizon`` (the paper's axes: about 5,000)."""
    a = "(a) action-dependent, γ = 0"
    history = [f"({'bcd'[i]}) γ = {g}" for i, g in enumerate(GAMMAS)]
    envs = [{"kind": "impact", "label": a, "gamma": 0.0, **police(2)}]
    envs += [
        {"kind": "impact", "label": label, "gamma": g, **police(2)}
        for label, g in zip(history, GAMMAS, strict=True)
    ]
    policies = [
        {"kind": "ad-ucb", "label": "ours (AD-UCB)", "environments": [a]},
        {"kind": "cucb", "label": "CUCB", "environments": [a]},
        # drawn beside: the reading of CUCB's bonus this library used before (p-weighted)
        {"kind": "cucb", "label": WEIGHTED_CUCB, "bonus": "weighted", "environments": [a]},
        # and Chen et al.'s CMAB-T reading: counts and means over the rounds a group is activated
        {"kind": "cucb", "label": TRIGGERED_CUCB, "bonus": "triggered", "environments": [a]},
        _base("EXP3", "exp3", [a]),
        {"kind": "exp3-meta", "label": "mEXP3 (meta-arms)", "environments": [a]},
        {"kind": "hd-ucb", "label": "ours (HD-UCB)", "environments": history},
        _base("EXP3", "exp3", history),
        _base("D-UCB", "d-ucb", history),
        _base("SW-UCB", "sw-ucb", history),
    ]

    return scaled_spec(
        _name("tang-fig2", "" if horizon == FULL_T else f"T{horizon}"),
        quick,
        description=FIG2_DESCRIPTION,
        environments=envs,
        policies=policies,
        **_scale(horizon),
    )


def fig3(quick: bool) -> ExperimentSpec:
    return fig3_spec(quick)


def fig3_spec(
    quick: bool, resolution: int | None = FIG3_RESOLUTION, horizon: int = FULL_T
) -> ExperimentSpec:
    """Figure 3 at full horizon ``horizon`` (the paper's axes: about 10,000); ``resolution`` is
    HD-UCB's 1/ε in panels (a–c) (``None``: the theory's ε, 1/ε = 7 at T = 5,000 for every K —
    regret then falls with K)."""
    panels = [f"({'abc'[i]}) K = {k}, γ = 0.2" for i, k in enumerate(KS)]
    envs = [
        {"kind": "impact", "label": label, "gamma": 0.2, **police(k)}
        for label, k in zip(panels, KS, strict=True)
    ]
    d = "(d) K = 2, γ = 0.4"
    envs.append({"kind": "impact", "label": d, "gamma": 0.4, **police(2)})
    learner: dict[str, Any] = {"kind": "hd-ucb", "label": "ours (HD-UCB)", "environments": panels}
    if resolution is not None:
        learner["resolution"] = resolution
    theory = (
        []
        if resolution is None
        else [  # drawn beside: the theory's ε
            {"kind": "hd-ucb", "label": THEORY_LEARNER, "environments": panels}
        ]
    )
    policies = [
        learner,
        *theory,
        _base("EXP3", "exp3", panels),
        _base("D-UCB", "d-ucb", panels),
        _base("SW-UCB", "sw-ucb", panels),
    ]
    policies += [
        {"kind": "hd-ucb", "label": f"HD-UCB η = {eta}", "eta": eta, "environments": [d]}
        for eta in ETAS
    ]
    description = (
        FIG3_DESCRIPTION
        if resolution == FIG3_RESOLUTION
        else (f"Tang et al. Figure 3 with HD-UCB's 1/ε = {resolution or 'theory'} in (a–c).")
    )
    return scaled_spec(
        _name(
            "tang-fig3",
            "" if resolution == FIG3_RESOLUTION else f"res{resolution or 'theory'}",
            "" if horizon == FULL_T else f"T{horizon}",
        ),
        quick,
        description=description,
        environments=envs,
        policies=policies,
        **_scale(horizon),
    )


def local_slope(rows: pd.DataFrame) -> float:
    """d log R / d log t over the last doubling of rounds, log(R(t)/R(t/2))/log 2 (t = the last
    checkpoint), from the mean regret over seeds of one policy's trajectory rows: 1 = linear
    regret, 2/3 = the T^{2/3} regime of Theorems 4.2 and 5.1. NaN when undefined."""
    mean = rows.groupby("time")["regret"].mean()
    times = mean.index.to_numpy(dtype=float)
    if times.size < 2:
        return float("nan")
    half = int(np.argmin(np.abs(times - times[-1] / 2)))
    low, high = float(mean.iloc[half]), float(mean.iloc[-1])
    if half == times.size - 1 or low <= 0 or high <= 0 or times[half] <= 0:
        return float("nan")
    return float(np.log(high / low) / np.log(times[-1] / times[half]))


def _legend_with_slopes(ax: Any, data: pd.DataFrame, by: str) -> None:
    slopes = {str(k): local_slope(g) for k, g in data.groupby(by, observed=True, sort=False)}
    handles, names = ax.get_legend_handles_labels()
    names = [f"{n} (slope {slopes.get(n, float('nan')):.2f})" for n in names]
    ax.legend(
        handles, names, fontsize="small", title="d log R / d log t, last doubling",
        loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
    )  # fmt: skip


def draw(
    spec: ExperimentSpec | SpecRecord, table: pd.DataFrame, shared: list[list[str]]
) -> MplFigure:
    """One panel per environment (cumulative regret against rounds, 95% bands); the panels of
    each group in ``shared`` get one y-range, and each group gets one more panel with our
    learner (the policy labelled ``ours …``) across the group's settings, on its own y-range —
    the learner's trend is visible there even where baselines set the shared range. Legends
    carry each line's :func:`local_slope`."""
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

    from impactbandits.experiments.plots import plot_metric_vs_time, readable_ticks

    labels = [env.label for env in spec.environments]
    groups = [[label for label in group if label in labels] for group in shared]
    groups = [group for group in groups if len(group) > 1]
    count = len(labels) + len(groups)
    fig = MplFigure(figsize=(4.8 * count, 4.2), layout="constrained")
    order: list[str | int] = []  # environment labels, and group indices for summary panels
    for label in labels:
        order.append(label)
        order += [i for i, group in enumerate(groups) if group[-1] == label]
    placed = dict(zip(order, np.atleast_1d(fig.subplots(1, count)), strict=True))
    axes = {label: placed[label] for label in labels}
    longest_by_env = {}
    for label, ax in axes.items():
        rows = table[table["environment"] == label]
        longest = rows[rows["run_horizon"] == rows["run_horizon"].max()]
        longest_by_env[label] = longest
        plot_metric_vs_time(longest, ax, metric="regret")
        _legend_with_slopes(ax, longest, "policy")
        ax.set_title(label)
        readable_ticks(ax, "x")
    for index, group in enumerate(groups):
        summary = placed[index]
        members = [axes[label] for label in group]
        top = max(ax.get_ylim()[1] for ax in members)
        bottom = min(ax.get_ylim()[0] for ax in members)
        for ax in members:
            ax.set_ylim(bottom, top)
        ours = pd.concat(
            [
                longest_by_env[label][
                    longest_by_env[label]["policy"].astype(str).str.startswith("ours")
                ]
                for label in group
            ]
        )
        if ours.empty:
            continue
        learner = str(ours["policy"].iloc[0])
        ours = ours[ours["policy"].astype(str) == learner]  # one learner per summary
        ours = ours.assign(policy=ours["environment"].astype(str))
        plot_metric_vs_time(ours, summary, metric="regret")
        _legend_with_slopes(summary, ours, "policy")
        summary.set_title(f"{learner} across {group[0][:3]}–{group[-1][:3]}")
        readable_ticks(summary, "x")
    note = "; ".join(f"y-axis shared by {g[0][:3]}–{g[-1][:3]}" for g in groups)
    fig.suptitle(f"{spec.name} ({note})" if note else spec.name, fontsize="medium")
    return fig


def _shared(labels: list[str]) -> list[list[str]]:
    """Panels compared against each other: 2(b–d) (γ) and 3(a–c) (K)."""
    gammas = [label for label in labels if label[3:].startswith(" γ = ")]
    ks = [label for label in labels if " K = " in label and not label.startswith("(d)")]
    return [group for group in (gammas, ks) if len(group) > 1]


def render(run_dir: Path, note: str = "", output: FigureOutput | None = None) -> list[Path]:
    """One panel per environment: cumulative regret against rounds; shared y within 2(b–d) and
    3(a–c); ``note``: a second title line."""
    spec, table = load_run(run_dir, trajectories=True)
    fig = draw(spec, table, _shared([env.label for env in spec.environments]))
    if note:
        fig.suptitle(f"{fig.get_suptitle()}\n{note}", fontsize="medium")
    return [save_png(fig, run_dir, spec.name, output)]


FIG2 = Figure(
    "tang-fig2",
    "AD-UCB and phased HD-UCB against baselines for γ = 0 … 0.6",
    "Tang, Ho & Liu 2021, Figure 2",
    fig2,
    render,
    claims=FIG2_CLAIMS,
)
FIG3 = Figure(
    "tang-fig3",
    "Growing K, and the estimation ratio η",
    "Tang, Ho & Liu 2021, Figure 3",
    fig3,
    render,
    claims=FIG3_CLAIMS,
    notes={
        "paper": "With the theory's ε (drawn beside) HD-UCB's regret does not rise with K, the "
        "paper's expectation; it rises with the chosen 1/ε = 20"
    },
)
