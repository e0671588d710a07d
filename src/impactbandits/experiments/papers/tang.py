"""Tang, Ho & Liu (2021), "Bandit Learning with Delayed Impact of Actions" (NeurIPS): the
registered figures. The paper gives no simulation constants (REPRODUCTION.md §2); ours are:

* Instances: the police model (Eq. 4), r_k(f) = high_k − f·(high_k − low_k), with
  high = linspace(0.9, 0.6, K), low = linspace(0.3, 0.45, K) — for K = 2, high = (0.9, 0.6)…
  we use (0.9, 0.8) and (0.3, 0.4) for K = 2 so that the optimum p* ≈ (0.45, 0.55) is interior
  (where Lemma 3.1 makes base-arm bandits fail). Independent activation (§2).
* Learners: AD-UCB (Algorithm 1) and the phased HD-UCB (Algorithms 2–3) with the theory's
  defaults (ε = (ln T/T)^{1/3} resp. (ln(ηT)/(ηT))^{1/3}; s_a, L from Theorem 5.1; η = 0.5);
  baselines: CUCB over the discretized arms and EXP3 over the meta-arms (panel a), and UCB1,
  EXP3, D-UCB, SW-UCB over the base arms as one-hot meta-arms.
* ``tang-fig2``: (a) γ = 0, (b–d) γ = 0.2, 0.4, 0.6; T = 5000, 20 seeds.
* ``tang-fig3``: (a–c) K = 3, 4, 5 at γ = 0.2; (d) η ∈ {0.2, 0.4, 0.6, 0.8} with K = 2,
  γ = 0.4; T = 5000, 20 seeds.

Panels show cumulative regret against rounds with 95% bands. ``--quick``: T = 1500, 4 seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure as MplFigure

from impactbandits.experiments.figures import Figure, load_run, save_png, scaled_spec
from impactbandits.experiments.spec import ExperimentSpec

FULL_T, QUICK_T = 5_000, 1_500
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


def fig2(quick: bool) -> ExperimentSpec:
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
        {"kind": "exp3-meta", "label": "EXP3 (meta-arms)", "environments": [a]},
        _base("UCB1", "ucb1", [a]),
        {"kind": "hd-ucb", "label": "ours (HD-UCB)", "environments": history},
        _base("EXP3", "exp3", history),
        _base("D-UCB", "d-ucb", history),
        _base("SW-UCB", "sw-ucb", history),
    ]

    return scaled_spec(
        "tang-fig2",
        quick,
        description="Tang et al. Figure 2.",
        environments=envs,
        policies=policies,
        **SCALE,
    )


def fig3(quick: bool) -> ExperimentSpec:
    panels = [f"({'abc'[i]}) K = {k}, γ = 0.2" for i, k in enumerate(KS)]
    envs = [
        {"kind": "impact", "label": label, "gamma": 0.2, **police(k)}
        for label, k in zip(panels, KS, strict=True)
    ]
    d = "(d) K = 2, γ = 0.4"
    envs.append({"kind": "impact", "label": d, "gamma": 0.4, **police(2)})
    policies = [
        {"kind": "hd-ucb", "label": "ours (HD-UCB)", "environments": panels},
        _base("EXP3", "exp3", panels),
        _base("D-UCB", "d-ucb", panels),
        _base("SW-UCB", "sw-ucb", panels),
    ]
    policies += [
        {"kind": "hd-ucb", "label": f"HD-UCB η = {eta}", "eta": eta, "environments": [d]}
        for eta in ETAS
    ]
    return scaled_spec(
        "tang-fig3",
        quick,
        description="Tang et al. Figure 3.",
        environments=envs,
        policies=policies,
        **SCALE,
    )


def render(run_dir: Path) -> list[Path]:
    """One panel per environment: cumulative regret against rounds."""
    from impactbandits.experiments.plots import plot_metric_vs_time

    spec, table = load_run(run_dir, trajectories=True)
    labels = [env.label for env in spec.environments]
    fig = MplFigure(figsize=(4.8 * len(labels), 4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(labels)))
    for ax, label in zip(axes, labels, strict=True):
        plot_metric_vs_time(table, ax, metric="regret", environment=label)
        ax.set_title(label)
    fig.suptitle(spec.name)
    return [save_png(fig, run_dir, spec.name)]


FIG2 = Figure(
    "tang-fig2",
    "AD-UCB and phased HD-UCB against baselines for γ = 0 … 0.6",
    "Tang, Ho & Liu 2021, Figure 2",
    fig2,
    render,
)
FIG3 = Figure(
    "tang-fig3",
    "Growing K, and the estimation ratio η",
    "Tang, Ho & Liu 2021, Figure 3",
    fig3,
    render,
)
