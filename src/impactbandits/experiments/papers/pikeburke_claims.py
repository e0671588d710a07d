"""Pike-Burke & Grünewälder (2019)'s claims about recovering bandits, as checks on the stored
full-scale run of ``pikeburke-recovering`` (:mod:`impactbandits.experiments.claims`).

Only the paper's abstract and introduction could be read ("methods need to plan ahead and
estimate many more quantities than in the classical bandit setting … We complement these
discussions with regret bounds and empirical studies"); the claims are our reading of those
sentences, checked on the authors' own GP-sampled instances, with the paper's regret (the
d-step lookahead regret, the metric ``lookahead_regret``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, below_every, final, significant

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLAIMS", "LENGTHSCALES", "LOOKAHEADS", "METRIC", "env_label", "learner"]

#: The authors' GP setups: smooth, medium and spiky recovery functions.
LENGTHSCALES = (5.0, 2.0, 0.5)
LOOKAHEADS = (1, 2, 3)
#: The paper's regret: the d-step lookahead regret, from the learner's own state.
METRIC = "lookahead_regret"
BASELINE = "UCB1"


def env_label(lengthscale: float, d: int) -> str:
    return f"GP ℓ = {lengthscale:g}, d = {d}"


def learner(kind: str, d: int) -> str:
    """The paper's names: ``dRGP-UCB`` / ``dRGP-TS``."""
    return f"{d}RGP-{'UCB' if kind == 'rgp-ucb' else 'TS'}"


def _one_step(table: pd.DataFrame) -> pd.DataFrame:
    rows = final(table)
    wanted = [env_label(scale, 1) for scale in LENGTHSCALES]
    return rows[rows["environment"].astype(str).isin(wanted)]


def _beats_the_classical_bandit(table: pd.DataFrame) -> Verdict:
    rows = _one_step(table)
    parts, ok = [], True
    for name in (learner("rgp-ucb", 1), learner("rgp-ts", 1)):
        below, text = below_every(rows, METRIC, name, (BASELINE,))
        ok = ok and below
        parts.append(f"{name} minus {BASELINE}: {text}")
    return Verdict(
        ok,
        f"1-step lookahead regret at T = {int(rows['horizon'].iloc[0]):,}, paired over seeds "
        "(95 %): " + " | ".join(parts),
    )


def _sublinear(table: pd.DataFrame) -> Verdict:
    """Regret of every dRGP learner grows less over the second half of the run than over the
    first: R(T) − R(T/2) < R(T/2) (concave growth), on the mean over seeds."""
    horizons = sorted(int(h) for h in table["horizon"].unique())
    longest = horizons[-1]
    if longest // 2 not in horizons:
        return Verdict(False, f"no checkpoint at T/2 = {longest // 2}")
    late, early = final(table, longest), final(table, longest // 2)
    parts, ok = [], True
    for (env, policy), group in late.groupby(["environment", "policy"], observed=True):
        if str(policy) == BASELINE:
            continue
        first = early[(early["environment"] == env) & (early["policy"] == policy)][METRIC]
        half, whole = float(first.mean()), float(group[METRIC].mean())
        ratio = (whole - half) / half if half > 0 else float("inf")
        ok = ok and ratio < 1.0
        parts.append(f"{policy} on {env}: {significant(ratio)}")
    return Verdict(
        ok,
        f"second-half over first-half growth of the mean regret, T = {longest:,} "
        "(< 1 is sublinear): " + "; ".join(parts),
    )


CLAIMS = (
    Claim(
        "Planning with GP estimates of the recovery functions beats a classical bandit that "
        "ignores recovery (our reading of the abstract's 'methods need to plan ahead and "
        "estimate many more quantities'; the paper's experiments could not be read): 1RGP-UCB "
        "and 1RGP-TS below UCB1 on every GP instance",
        _beats_the_classical_bandit,
    ),
    Claim(
        "The d-step lookahead regret of dRGP-UCB and dRGP-TS is sublinear (the paper's regret "
        "bounds, whose rates could not be read): it grows less over the second half of the run "
        "than over the first, for d = 1, 2, 3 and every GP instance",
        _sublinear,
    ),
)
