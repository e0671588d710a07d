"""Lindner et al. (2021)'s claims about their appendix figures (single-peaked instances 1–3,
Heidari et al.'s increasing instances, FICO, the recommender), as checks on the stored
full-scale runs (:mod:`impactbandits.experiments.claims`).

Where the paper's words need a threshold ("comparable", "fail", "close"), the constant below
states the reading; each verdict prints the numbers so that a reader can apply another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from impactbandits.experiments.claims import (
    Claim,
    Verdict,
    below_every,
    ends,
    final,
    not_above_any,
    paired_difference,
    significant,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FICO_CLAIMS", "INCREASING_CLAIMS", "RECOMMENDER_CLAIMS", "SINGLE_PEAKED_CLAIMS"]

#: The baselines of every appendix figure (the increasing figure adds HKR).
BASELINES = ("greedy", "one-step-optimistic", "EXP3", "R-EXP3", "D-UCB", "SW-UCB")
#: "Fail": a baseline's mean per-step regret at the largest T is at least this multiple of SPO's
#: (and SPO is below it, paired over seeds, 95 %).
FAIL_FACTOR = 10.0
#: ... and at least this mean per-step regret (a linear regret of 1 % of the reward range per
#: round: SPO's own per-step regret is ~1e-8 on noise-free panels, where ratios mean little).
FAIL_LEVEL = 0.01
#: A run fails outright when its per-step regret at T is at least this.
FAILED_RUN = 0.1
#: "Comparable": SPO's mean per-step regret at most this much above HKR's.
COMPARABLE = 0.001
#: "Good" / "poor" for D-UCB and SW-UCB: within this of SPO's mean per-step regret / at least
#: ``POOR`` above it.
GOOD, POOR = 0.01, 0.05
#: "Optimal" and "close" on bank utility: mean per-step regret at most this.
NEAR_OPTIMAL = 0.005


def _env(rows: pd.DataFrame) -> pd.Series:
    return rows["environment"].astype(str)


def _means(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean per-step regret per environment (rows) and policy (columns)."""
    return rows.pivot_table(
        index="environment", columns="policy", values="per_step_regret", observed=True
    )


def _horizon(rows: pd.DataFrame) -> str:
    return f"T = {int(rows['horizon'].iloc[0]):,}"


# -- single-peaked instances 1–3 (Appendix D.2, Figures 8–10) ---------------------------------


def _spo_matches_or_beats(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    ok, worse = not_above_any(rows, "per_step_regret", "SPO", BASELINES)
    best = []
    for env, m in _means(rows).iterrows():
        other = str(m[list(BASELINES)].idxmin())
        best.append(
            f"{env}: SPO {significant(m['SPO'])}, best other {other} {significant(m[other])}"
        )
    text = f"mean per-step regret at {_horizon(rows)}: " + "; ".join(best)
    tail = (
        f"SPO above (paired, 95 %): {worse}"
        if worse
        else ("SPO is above no baseline on any panel (paired over seeds, 95 %)")
    )
    return Verdict(ok, f"{text}. {tail}")


def _each_baseline_fails_somewhere(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    means = _means(rows)
    where = {}
    for b in BASELINES:
        failing = [
            env
            for env in means.index
            if means.loc[env, b] >= max(FAIL_FACTOR * means.loc[env, "SPO"], FAIL_LEVEL)
            and paired_difference(rows[_env(rows) == env], "per_step_regret", "SPO", b).below
        ]
        if failing:
            env = max(failing, key=lambda e: means.loc[e, b])
            where[b] = (
                f"{b} on {len(failing)} (worst {env}: {significant(means.loc[env, b])} vs SPO "
                f"{significant(means.loc[env, 'SPO'])})"
            )
    missing = [b for b in BASELINES if b not in where]
    return Verdict(
        not missing,
        f"at {_horizon(rows)}, panels where each baseline fails (per-step regret >= "
        f"{FAIL_LEVEL:g} and >= {FAIL_FACTOR:g}x SPO's, SPO below it paired, 95 %): "
        + "; ".join(where.values())
        + (f"; none for {', '.join(missing)}" if missing else ""),
    )


SINGLE_PEAKED_CLAIMS = (
    Claim(
        "SPO matches or beats every baseline on all three single-peaked instances and every "
        "noise level (Figures 8–10)",
        _spo_matches_or_beats,
    ),
    Claim(
        "The baselines fail on some instances: each has a panel where it stays an order of "
        "magnitude above SPO",
        _each_baseline_fails_somewhere,
    ),
)


# -- increasing instances inc_1–inc_3 (Appendix D.1, Figures 4–7) -----------------------------


def _panels(rows: pd.DataFrame, prefix: str, noisy: bool) -> list[str]:
    envs = sorted(_env(rows).unique())
    return [e for e in envs if e.startswith(prefix) and ("σ" in e) == noisy]


def _comparable_on_inc1(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    parts, ok = [], True
    for env in _panels(rows, "inc_1", noisy=False):
        gap = paired_difference(rows[_env(rows) == env], "per_step_regret", "SPO", "HKR")
        ok = ok and gap.mean <= COMPARABLE
        parts.append(f"{env} {gap}")
    return Verdict(
        ok,
        f"per-step regret at {_horizon(rows)}, SPO minus HKR (comparable: mean at most "
        f"{COMPARABLE:g}): " + "; ".join(parts),
    )


def _below_hkr(panels_of: str, noisy: bool) -> Callable[[pd.DataFrame], Verdict]:
    """The check "SPO below HKR, paired, 95 %" on the panels of the instances ``panels_of``
    (space-separated prefixes), noise-free or noisy."""

    def check(table: pd.DataFrame) -> Verdict:
        rows = final(table)
        envs = [e for p in panels_of.split() for e in _panels(rows, p, noisy)]
        panel = rows[_env(rows).isin(envs)]
        ok, text = below_every(panel, "per_step_regret", "SPO", ["HKR"])
        counts = []
        for env in envs:
            wide = panel[_env(panel) == env].pivot_table(
                index="seed", columns="policy", values="per_step_regret", observed=True
            )
            d = wide["SPO"] - wide["HKR"]
            failed = int((wide["HKR"] >= FAILED_RUN).sum())
            counts.append(
                f"{env}: SPO lower on {(d < 0).sum()} of {d.size} seeds, HKR failed "
                f"(>= {FAILED_RUN:g}) on {failed}"
            )
        return Verdict(
            ok,
            f"per-step regret at {_horizon(rows)}, SPO minus HKR, paired over seeds (95 %): "
            f"{text}. Per seed: {'; '.join(counts)}",
        )

    return check


def _exp3_poor(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    ok, text = below_every(rows, "per_step_regret", "SPO", ["EXP3", "R-EXP3"])
    m = _means(rows)
    ratio = (m[["EXP3", "R-EXP3"]].min(axis=1) / m["SPO"]).min()
    return Verdict(
        ok,
        f"SPO below EXP3 and R-EXP3 on every panel at {_horizon(rows)} (paired, 95 %): "
        f"{'yes' if ok else text}; their lowest panel means: EXP3 "
        f"{significant(float(m['EXP3'].min()))}, R-EXP3 {significant(float(m['R-EXP3'].min()))}"
        f"; the smaller of the two is at least {significant(float(ratio))}x SPO's on every panel",
    )


def _ucb_good_on_some_only(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    wide = _means(rows)
    ucb = wide[["D-UCB", "SW-UCB"]].min(axis=1) - wide["SPO"]
    good = [str(e) for e in ucb.index if ucb[e] <= GOOD]
    poor = [str(e) for e in ucb.index if ucb[e] >= POOR]
    return Verdict(
        bool(good) and bool(poor),
        f"the better of D-UCB and SW-UCB minus SPO, mean per-step regret at {_horizon(rows)}: "
        f"good (<= {GOOD:g}) on {len(good)} of {len(ucb)} panels ({', '.join(good)}); poor "
        f"(>= {POOR:g}) on {len(poor)} ({', '.join(poor)})",
    )


INCREASING_CLAIMS = (
    Claim("SPO performs comparably to HKR on inc_1 (Figure 4)", _comparable_on_inc1),
    Claim(
        "SPO is significantly better than HKR on inc_2 and inc_3 (Figures 5 and 6)",
        _below_hkr("inc_2 inc_3", noisy=False),
    ),
    Claim(
        "SPO is significantly better than HKR with noise (Figure 7: inc_1, α = 0.1)",
        _below_hkr("inc_1", noisy=True),
    ),
    Claim("EXP3 and R-EXP3 perform poorly on every instance", _exp3_poor),
    Claim("D-UCB and SW-UCB are good on some instances only", _ucb_good_on_some_only),
)


# -- FICO (Figure 3a, Appendix D.4, Figures 12–13) --------------------------------------------


def _score_panels(table: pd.DataFrame) -> pd.DataFrame:
    return table[_env(table).str.contains("score change")]


def _spo_best_long(table: pd.DataFrame) -> Verdict:
    rows = final(_score_panels(table))
    ok, text = below_every(rows, "per_step_regret", "SPO", BASELINES, closest=True)
    return Verdict(
        ok,
        f"score change, per-step regret at {_horizon(rows)}, SPO minus baseline, paired over "
        f"seeds (95 %): {text}",
    )


def _others_better_short(table: pd.DataFrame) -> Verdict:
    runs = ends(_score_panels(table))
    short = int(runs["horizon"].max()) // 4
    found = []
    early = runs[runs["horizon"] <= short]
    for (env, horizon), panel in early.groupby(["environment", "horizon"], observed=True):
        for b in BASELINES:
            gap = paired_difference(panel, "per_step_regret", b, "SPO")
            if gap.below:
                found.append((str(env), int(str(horizon)), b, gap))
    found.sort(key=lambda item: item[1])
    text = "; ".join(f"{e}, T = {h}: {b} minus SPO {g}" for e, h, b, g in found[-3:])
    return Verdict(
        bool(found),
        f"score change, horizons up to {short}: {len(found)} (panel, horizon, baseline) with the "
        f"baseline below SPO, paired (95 %)" + (f", e.g. {text}" if found else ""),
    )


def _greedy_optimal_bank(table: pd.DataFrame) -> Verdict:
    rows = final(table[_env(table).str.contains("bank utility")])
    m = _means(rows)
    ok = bool((m["greedy"] <= NEAR_OPTIMAL).all() and (m["SPO"] <= NEAR_OPTIMAL).all())
    text = "; ".join(
        f"{e}: greedy {significant(m.loc[e, 'greedy'])}, SPO {significant(m.loc[e, 'SPO'])}"
        for e in m.index
    )
    return Verdict(
        ok,
        f"bank utility, mean per-step regret at {_horizon(rows)} (near-optimal: at most "
        f"{NEAR_OPTIMAL:g}): {text}",
    )


FICO_CLAIMS = (
    Claim(
        "SPO strictly outperforms the baselines over long horizons (score change, Figure 3a)",
        _spo_best_long,
    ),
    Claim("For short horizons greedy or UCB variants can be better than SPO", _others_better_short),
    Claim(
        "On bank utility (nearly decreasing) greedy is optimal and SPO close (Figure 13)",
        _greedy_optimal_bank,
    ),
)


# -- recommender (Figure 3b, Appendix D.5, Figures 14–16) -------------------------------------


def _spo_best_everywhere(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    ok, text = below_every(rows, "per_step_regret", "SPO", BASELINES, closest=True)
    return Verdict(
        ok,
        f"per-step regret at {_horizon(rows)}, SPO minus baseline, paired over seeds (95 %): "
        f"{text}",
    )


RECOMMENDER_CLAIMS = (
    Claim(
        "SPO outperforms all alternatives significantly on every instance and noise level "
        "(except for very short horizons)",
        _spo_best_everywhere,
    ),
)
