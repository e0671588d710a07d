"""The textbook claims ``demo-stationary`` shows, as checks on its stored full-scale run
(:mod:`impactbandits.experiments.claims`): UCB1's and EXP3's regret bounds (Auer et al. 2002,
Theorem 1; Auer et al. 2002b, Corollary 3.2) and greedy's lock-in."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, ends, significant

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

__all__ = ["demo_claims"]

#: Logarithmic growth adds the same regret per decade of T; a rate T^a multiplies it by 10^a.
#: The check reads "logarithmic" as a last-decade increment at most this multiple of the one
#: before (10^0.1: slower than any T^0.1).
DECADE_RATIO = 10**0.1


def _regret(table: pd.DataFrame, policy: str) -> pd.DataFrame:
    rows = ends(table)
    rows = rows[rows["policy"] == policy]
    return rows.groupby("horizon", observed=True)["regret"].agg(["mean", "sem"])


def _ucb1_bound(means: Sequence[float]) -> Claim:
    best = max(means)
    gaps = [best - m for m in means if m < best]

    def bound(t: int) -> float:  # Auer, Cesa-Bianchi & Fischer 2002, Theorem 1
        return sum(8 * math.log(t) / d for d in gaps) + (1 + math.pi**2 / 3) * sum(gaps)

    def check(table: pd.DataFrame) -> Verdict:
        r = _regret(table, "UCB1")
        upper = r["mean"] + 1.96 * r["sem"]
        ok = all(upper[t] <= bound(int(t)) for t in r.index)
        t = int(r.index.max())
        return Verdict(
            ok,
            f"UCB1's mean regret (+ 1.96 standard errors) below Theorem 1's bound at all "
            f"{len(r)} horizons: {'yes' if ok else 'no'}; at T = {t:,}: "
            f"{significant(float(r['mean'][t]))} vs bound {significant(bound(t))}",
        )

    return Claim(
        "UCB1's expected regret is at most Σ 8 ln T / Δ_i + (1 + π²/3) Σ Δ_i at every T "
        "(Auer et al. 2002, Theorem 1)",
        check,
    )


def _ucb1_logarithmic(table: pd.DataFrame) -> Verdict:
    r = _regret(table, "UCB1")["mean"]
    horizons = sorted(int(h) for h in r.index)
    last = horizons[-1]
    mid = min(horizons, key=lambda h: abs(h - last / 10))
    first = min(horizons, key=lambda h: abs(h - last / 100))
    late, early = r[last] - r[mid], r[mid] - r[first]
    ratio = late / early
    return Verdict(
        bool(ratio <= DECADE_RATIO),
        f"UCB1's mean regret at T = {first:,} / {mid:,} / {last:,}: {significant(r[first])} / "
        f"{significant(r[mid])} / {significant(r[last])}; the last decade adds "
        f"{significant(late)}, the one before {significant(early)} (ratio {ratio:.3f}; "
        f"logarithmic: 1, T^0.1: {DECADE_RATIO:.3f})",
    )


def _exp3_bound(k: int) -> Claim:
    def bound(t: int) -> float:  # Auer et al. 2002b, Corollary 3.2 with g = T
        return 2 * math.sqrt(math.e - 1) * math.sqrt(t * k * math.log(k))

    def check(table: pd.DataFrame) -> Verdict:
        r = _regret(table, "EXP3")
        upper = r["mean"] + 1.96 * r["sem"]
        ok = all(upper[t] <= bound(int(t)) for t in r.index)
        t = int(r.index.max())
        return Verdict(
            ok,
            f"EXP3's mean regret (+ 1.96 standard errors) below the bound at all {len(r)} "
            f"horizons: {'yes' if ok else 'no'}; at T = {t:,}: "
            f"{significant(float(r['mean'][t]))} vs bound {significant(bound(t))}",
        )

    return Claim(
        "EXP3 tuned to the horizon has regret at most 2√(e − 1) √(T K ln K) (Auer et al. "
        "2002b, Corollary 3.2)",
        check,
    )


def _greedy_locks(gap: float) -> Claim:
    def check(table: pd.DataFrame) -> Verdict:
        rows = ends(table)
        rows = rows[(rows["policy"] == "greedy") & (rows["horizon"] == rows["horizon"].max())]
        stuck = rows[rows["per_step_regret"] >= 0.9 * gap]
        return Verdict(
            len(stuck) > 0,
            f"greedy at T = {int(rows['horizon'].iloc[0]):,}: {len(stuck)} of {len(rows)} runs "
            f"with per-step regret >= 0.9 x the smallest gap {gap:g} (locked onto a suboptimal "
            f"arm); median run {significant(float(rows['per_step_regret'].median()))}",
        )

    return Claim("Greedy can lock onto a suboptimal arm: linear regret on some runs", check)


def demo_claims(means: Sequence[float]) -> tuple[Claim, ...]:
    """The demo's claims on a Bernoulli bandit with these arm means."""
    ordered = sorted(means)
    return (
        _ucb1_bound(means),
        Claim(
            "UCB1's regret grows logarithmically in T (Auer et al. 2002, Theorem 1)",
            _ucb1_logarithmic,
        ),
        _exp3_bound(len(means)),
        _greedy_locks(ordered[-1] - ordered[-2]),
    )
