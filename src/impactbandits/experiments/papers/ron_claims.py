"""Ron, Ben-Porat & Shalit (2021)'s claims about their Figures 1 and 2 (§4, the paragraph after
Figure 1), as checks on the stored full-scale runs (:mod:`impactbandits.experiments.claims`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, ends, paired_difference, significant

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIG1_CLAIMS", "FIG2_CLAIMS", "PAPER_PANELS"]

NAN = float("nan")
#: The paper's Figure 1, read off the authors' published panels (tomron/CSRviaMAB@cb90260,
#: ``resources/lam_{0.0,0.4,0.8}.jpg``, drawn by their ``templates/lam_0.0.tex``) by
#: ``benchmarks/fidelity/ron_panels.py``: average utility at T = 10³, 5·10³, 10⁴, 5·10⁴, 10⁵,
#: 2·10⁵ per (λ, f); nan where the line is hidden under another (at λ = 0 the three coincide).
PANEL_HORIZONS = (1_000, 5_000, 10_000, 50_000, 100_000, 200_000)
PAPER_PANELS = {
    (0, "f_uni"): (NAN, NAN, NAN, NAN, NAN, NAN),
    (0, "f_lin"): (0.802, 0.909, NAN, NAN, 0.947, NAN),
    (0, "f_sft"): (0.803, 0.914, 0.930, 0.945, 0.947, 0.949),
    (0.4, "f_uni"): (0.575, 0.575, NAN, 0.587, 0.615, 0.634),
    (0.4, "f_lin"): (0.574, 0.575, 0.576, 0.636, 0.728, 0.777),
    (0.4, "f_sft"): (0.530, 0.531, 0.531, 0.589, 0.652, 0.671),
    (0.8, "f_uni"): (0.573, 0.575, NAN, 0.575, 0.575, 0.575),
    (0.8, "f_lin"): (0.580, 0.575, 0.575, 0.632, 0.727, 0.778),
    (0.8, "f_sft"): (0.488, 0.487, 0.487, 0.566, 0.638, 0.639),
}
#: Agreement with a panel: one line's thickness on the published image (~6 pixels of 0.0008).
PANEL_TOLERANCE = 0.01

FUNCTIONS = ("f_uni", "f_lin", "f_sft")
#: "No phase 4" as a bar chart shows it: a share of rounds below this is invisible in Figure 2.
INVISIBLE = 0.001


def _env(lam: float, f: str) -> str:
    return f"λ={lam:g}, {f}"


def _gap(rows: pd.DataFrame, a: str, b: str, horizon: int) -> tuple[float, float]:
    """Mean and 95 % half-width of average utility in environment a minus b at ``horizon``,
    paired by seed (the runs share their seeds)."""
    gap = paired_difference(
        rows[rows["horizon"] == horizon], "average_utility", a, b, column="environment"
    )
    return gap.mean, gap.half


def _equal_at_zero(table: pd.DataFrame) -> Verdict:
    rows = ends(table)
    worst, text = 0.0, []
    for t in sorted(int(h) for h in rows["horizon"].unique()):
        gaps = [_gap(rows, _env(0, a), _env(0, b), t) for a, b in (("f_lin", "f_uni"),
                ("f_sft", "f_uni"), ("f_lin", "f_sft"))]  # fmt: skip
        worst = max(worst, max(abs(m) - h for m, h in gaps))
        text.append(f"T = {t:,}: {max(abs(m) for m, _ in gaps):.4f}")
    return Verdict(
        worst <= 0,
        "λ = 0, largest difference of average utility between two functions, paired by seed: "
        + "; ".join(text)
        + " (equal: every 95 % interval holds 0)",
    )


def _decreasing_in_lambda(table: pd.DataFrame) -> Verdict:
    rows = ends(table)
    higher, strict = [], 0
    cases = 0
    for t in sorted(int(h) for h in rows["horizon"].unique()):
        for f in FUNCTIONS:
            for lo, hi in ((0, 0.4), (0.4, 0.8)):
                mean, half = _gap(rows, _env(hi, f), _env(lo, f), t)
                cases += 1
                strict += mean + half < 0
                if mean - half > 0:
                    higher.append(f"{f} λ {lo:g}→{hi:g} at T = {t:,} (+{mean:.4f})")
    return Verdict(
        not higher,
        f"of {cases} steps up in λ (0→0.4, 0.4→0.8, per function and T), {strict} lower "
        f"significantly, the rest equal within their 95 % intervals; higher: "
        + (", ".join(higher) if higher else "none"),
    )


def _increasing_in_t(table: pd.DataFrame) -> Verdict:
    rows = ends(table)
    horizons = sorted(int(h) for h in rows["horizon"].unique())
    first, last = horizons[0], horizons[-1]
    means = rows.groupby(["environment", "horizon"], observed=True)["average_utility"].mean()
    lower, text = [], []
    for lam in (0, 0.4, 0.8):
        for f in FUNCTIONS:
            env = _env(lam, f)
            a, b = float(means[(env, first)]), float(means[(env, last)])
            text.append(f"{env} {a:.3f} → {b:.3f}")
            if b < a - 0.005:
                lower.append(env)
    return Verdict(
        not lower,
        f"average utility at T = {first:,} → {last:,}: "
        + "; ".join(text)
        + " (increasing: never lower by more than 0.005)",
    )


def _lin_above_uni(table: pd.DataFrame) -> Verdict:
    rows = ends(table)
    horizons = sorted(int(h) for h in rows["horizon"].unique())
    text, ok = [], True
    for lam in (0.4, 0.8):
        for t in horizons:
            mean, half = _gap(rows, _env(lam, "f_lin"), _env(lam, "f_uni"), t)
            text.append(f"λ = {lam:g}, T = {t:,}: {mean:+.4f} ± {half:.4f}")
            if t == horizons[-1]:
                ok = ok and mean - half > 0
    return Verdict(
        ok,
        "average utility f_lin − f_uni, paired by seed: "
        + "; ".join(text)
        + f" (the claim checked at the largest T, {horizons[-1]:,})",
    )


def _matches_panels(table: pd.DataFrame) -> Verdict:
    rows = ends(table)
    means = rows.groupby(["environment", "horizon"], observed=True)["average_utility"].mean()
    off, worst, compared = [], 0.0, 0
    for (lam, f), values in PAPER_PANELS.items():
        for t, paper in zip(PANEL_HORIZONS, values, strict=True):
            key = (_env(lam, f), t)
            if paper != paper or key not in means.index:  # nan: hidden on the panel
                continue
            compared += 1
            gap = float(means[key]) - paper
            worst = max(worst, abs(gap))
            if abs(gap) > PANEL_TOLERANCE:
                off.append(f"λ = {lam:g}, {f}, T = {t:,}: {float(means[key]):.3f} vs {paper:.3f}")
    return Verdict(
        not off,
        f"{compared} points read off the published panels; largest difference {worst:.3f} "
        f"(agreement: within {PANEL_TOLERANCE:g}, a line's thickness); beyond it: "
        + ("; ".join(off) if off else "none"),
    )


PANELS = (
    "The average utilities of Figure 1 as published (read off the authors' panels, "
    "tomron/CSRviaMAB resources/lam_*.jpg)"
)

FIG1_CLAIMS = (
    Claim(
        "λ = 0 (Fig. 1a): the average utility of all the fairness functions is the same (ALG "
        "plays every round)",
        _equal_at_zero,
    ),
    Claim("The average utility decreases as the transfer cost λ increases", _decreasing_in_lambda),
    Claim(
        "The average utility increases with the horizon (the share of approximation rounds falls)",
        _increasing_in_t,
    ),
    Claim("The utility of f_lin is greater than f_uni's for λ > 0", _lin_above_uni),
    Claim(PANELS, _matches_panels),
    Claim(PANELS, _matches_panels, variant="authors-code", option="--variant authors-code"),
    Claim(PANELS, _matches_panels, variant="authors-ucb1", option="--variant authors-ucb1"),
)


def _shares(table: pd.DataFrame) -> pd.DataFrame:
    rows = ends(table)
    phases = [f"phase_{p}" for p in range(1, 5)]
    return rows.groupby(["environment", "horizon"], observed=True)[phases].mean()


def _alg_at_zero(table: pd.DataFrame) -> Verdict:
    shares = _shares(table).loc[_env(0, "f_sft")]
    low = float(shares["phase_4"].min())
    return Verdict(
        low == 1.0,
        f"λ = 0: smallest share of phase 4 (ALG) over the horizons {significant(low)}",
    )


def _approximation_falls(table: pd.DataFrame) -> Verdict:
    shares = _shares(table)
    text, ok = [], True
    for lam in (0.4, 0.8):
        s = shares.loc[_env(lam, "f_sft")].sort_index()
        approx = (s["phase_1"] + s["phase_2"]).to_numpy()
        third = s["phase_3"].to_numpy()
        ok = ok and bool((approx[1:] <= approx[:-1]).all() and (third[1:] >= third[:-1]).all())
        ok = ok and approx[-1] < approx[0] and third[-1] > third[0]
        text.append(
            f"λ = {lam:g}: phases 1–2 "
            + " / ".join(f"{x:.3f}" for x in approx)
            + ", phase 3 "
            + " / ".join(f"{x:.3f}" for x in third)
        )
    horizons = ", ".join(f"{int(h):,}" for h in shares.loc[_env(0.4, "f_sft")].index)
    return Verdict(
        ok,
        f"shares at T = {horizons}: "
        + "; ".join(text)
        + " (non-increasing and non-decreasing in T, with a change)",
    )


def _opportunities_at_high_cost(table: pd.DataFrame) -> Verdict:
    shares = _shares(table)
    high = float(shares.loc[_env(0.8, "f_sft")]["phase_4"].max())
    mid = shares.loc[_env(0.4, "f_sft")].sort_index()["phase_4"]
    last = float(mid.iloc[-1])
    return Verdict(
        high <= INVISIBLE and last > INVISIBLE,
        f"share of phase 4 (ALG): λ = 0.8 at most {significant(high)} at any T; λ = 0.4 "
        f"{significant(last)} at T = {int(mid.index[-1]):,} (a share below {INVISIBLE:g} is "
        "invisible in the paper's bar chart)",
    )


FIG2_CLAIMS = (
    Claim("λ = 0: Algorithm 2 always invokes the black box ALG (phase 4)", _alg_at_zero),
    Claim(
        "λ = 0.4 and 0.8: the share of approximation rounds (phases 1–2) decreases and the "
        "share of phase 3 increases as the horizon grows",
        _approximation_falls,
    ),
    Claim(
        "λ = 0.8 dedicates all rounds to opportunities (no phase 4); λ = 0.4 leaves rounds to "
        "phase 4 (ALG)",
        _opportunities_at_high_cost,
    ),
)
