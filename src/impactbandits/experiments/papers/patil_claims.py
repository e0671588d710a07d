"""Patil et al. (2023)'s claims about their figures (§5, Theorems 2 and 4), as checks on the
stored full-scale runs (:mod:`impactbandits.experiments.claims`). Their curves are noise-free:
one seed per run, every number deterministic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, ends, final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["HEIDARI_CLAIMS", "LOWER_BOUND_CLAIMS", "POTENTIAL_CLAIMS", "RANDOM_CLAIMS"]

#: "Match": Algorithm 1's competitive ratio at the largest T within this of HKR's.
MATCH = 0.05
#: "Comparable" on random instances: Algorithm 1's competitive ratio at most this multiple of
#: HKR's (the paper shows no numbers for it; the check states the reading).
COMPARABLE = 1.25


def _ratios(table: pd.DataFrame) -> pd.DataFrame:
    rows = final(table)
    wide = rows.pivot_table(
        index="environment", columns="policy", values="competitive_ratio", observed=True
    )
    return wide


def _share_not_worse(table: pd.DataFrame) -> dict[str, float]:
    """Per environment: the share of horizons where Algorithm 1's regret is ≤ HKR's."""
    rows = ends(table)
    wide = rows.pivot_table(
        index=["environment", "horizon"], columns="policy", values="regret", observed=True
    )
    better = wide["Algorithm 1"] <= wide["HKR"] + 1e-9
    return {str(k): float(v) for k, v in better.groupby(level=0, observed=True).mean().items()}


def _matches_hkr(table: pd.DataFrame) -> Verdict:
    cr = _ratios(table)
    gap = (cr["Algorithm 1"] - cr["HKR"]).abs()
    shares = _share_not_worse(table)
    many = sum(s >= 0.5 for s in shares.values())
    text = ", ".join(
        f"{env} {cr.loc[env, 'Algorithm 1']:.4f}/{cr.loc[env, 'HKR']:.4f}" for env in cr.index
    )
    return Verdict(
        bool((gap <= MATCH).all()) and many >= 1,
        f"competitive ratio at the largest T, Algorithm 1/HKR: {text}; largest gap "
        f"{gap.max():.4f} (match: ≤ {MATCH:g}); Algorithm 1's regret ≤ HKR's at half the "
        f"horizons or more on {many} of {len(shares)} instances (every horizon on "
        f"{sum(s == 1.0 for s in shares.values())})",
    )


def _rr_behind(table: pd.DataFrame) -> Verdict:
    cr = _ratios(table)
    margin = (cr["RR"] - cr[["Algorithm 1", "HKR"]].max(axis=1)).min()
    return Verdict(
        bool(margin > 0),
        f"round robin's competitive ratio at the largest T: {cr['RR'].min():.2f}–"
        f"{cr['RR'].max():.2f}; above both others' on every instance by at least {margin:.3f}",
    )


def _comparable(table: pd.DataFrame) -> Verdict:
    cr = _ratios(table)
    ratio = cr["Algorithm 1"] / cr["HKR"]
    better = int((cr["Algorithm 1"] <= cr["HKR"]).sum())
    return Verdict(
        bool((ratio <= COMPARABLE).all()),
        f"competitive ratio at the largest T: Algorithm 1 {cr['Algorithm 1'].min():.2f}–"
        f"{cr['Algorithm 1'].max():.2f}, HKR {cr['HKR'].min():.2f}–{cr['HKR'].max():.2f}; "
        f"Algorithm 1 / HKR at most {ratio.max():.3f} (comparable: ≤ {COMPARABLE:g}); "
        f"Algorithm 1 lower on {better} of {len(cr)}",
    )


HEIDARI_CLAIMS = (
    Claim(
        "Algorithm 1 (horizon-unaware) can match or even beat the horizon-aware HKR for finite "
        "horizons on many of Heidari et al.'s instances (§5)",
        _matches_hkr,
    ),
    Claim("Round robin is far behind both", _rr_behind),
)

RANDOM_CLAIMS = (
    Claim(
        "On random IMAB instances Algorithm 1 performs comparably to HKR despite not knowing T "
        "(§5)",
        _comparable,
    ),
    Claim("Both beat round robin", _rr_behind),
)


def _k(environment: str) -> int:
    return int(environment.rsplit("=", 1)[1])


def _lower_bound(table: pd.DataFrame, pulls: int) -> Verdict:
    rows = ends(table)
    text, ok = [], True
    for env in sorted(rows["environment"].unique(), key=_k):
        k = _k(env)
        at = rows[(rows["environment"] == env) & (rows["horizon"] == k * pulls)]
        cr = at.set_index("policy")["competitive_ratio"]
        exact = (k * pulls + 1) / (pulls + 1)  # hand-derived: see the claim
        alg = float(cr["Algorithm 1"])
        ok = ok and k / 2 <= alg <= k and abs(alg - exact) < 1e-9
        text.append(f"k = {k}: {alg:.4f}")
    return Verdict(
        ok,
        f"competitive ratio of Algorithm 1 at T = kN (N = {pulls}): "
        + ", ".join(text)
        + "; each between k/2 and k and equal to (kN + 1)/(N + 1) to 1e-9",
    )


def lower_bound_claims(pulls: int) -> tuple[Claim, ...]:
    return (
        Claim(
            "On the family I_m every algorithm's competitive ratio is Ω(k) (Theorem 2: at "
            "least k/2), and Algorithm 1's is O(k) (Theorem 4). By hand: OPT(kN) = (kN + 1)/2 "
            "and an algorithm that has not found arm m by T = kN collects (N + 1)/2, a ratio "
            "of (kN + 1)/(N + 1)",
            lambda table: _lower_bound(table, pulls),
        ),
    )


LOWER_BOUND_CLAIMS = lower_bound_claims(100)


def _pulls_late(table: pd.DataFrame) -> dict[tuple[str, str], tuple[list[int], list[int]]]:
    """Per (environment, policy): every arm's pulls at half the horizon and at its end."""
    out = {}
    for (env, policy), run in table.groupby(["environment", "policy"], observed=True):
        run = run.sort_values("time")
        arms = [c for c in run.columns if c.startswith("pulls_") and run[c].notna().any()]
        end = int(run["time"].max())
        half = run[run["time"] >= end / 2].iloc[0]
        out[(str(env), str(policy))] = (
            [int(half[a]) for a in arms],
            [int(run.iloc[-1][a]) for a in arms],
        )
    return out


def _keeps_pulling(table: pd.DataFrame) -> Verdict:
    pulls = _pulls_late(table)
    envs = sorted({env for env, _ in pulls})
    ok, parts = True, []
    for env in envs:
        half, end = pulls[(env, "Algorithm 1")]
        h_half, h_end = pulls[(env, "HKR")]
        alg_all = all(e > h for h, e in zip(half, end, strict=True))
        frozen = sum(e == h for h, e in zip(h_half, h_end, strict=True))
        ok = ok and alg_all and frozen > 0
        parts.append(
            f"{env}: Algorithm 1 pulls {half} at T/2 -> {end} at T (every arm pulled in the "
            f"second half: {'yes' if alg_all else 'no'}); HKR {h_half} -> {h_end} ({frozen} of "
            f"{len(h_end)} arms never pulled in the second half)"
        )
    return Verdict(ok, "; ".join(parts))


POTENTIAL_CLAIMS = (
    Claim(
        "Under Algorithm 1 every arm's reward f_i(N_i(t)) approaches its potential a_i "
        "(Theorem 5): every arm keeps being pulled (N_i(t) grows without bound, which with f_i "
        "increasing to a_i gives the limit), unlike HKR, which stops pulling the arms it "
        "eliminates (Figure 12)",
        _keeps_pulling,
        trajectories=True,
    ),
)
