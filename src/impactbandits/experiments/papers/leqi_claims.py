"""Leqi et al. (2021)'s claims about rebounding bandits, as checks on the stored full-scale run
of ``leqi-rebounding`` (:mod:`impactbandits.experiments.claims`). The claims are the abstracts'
and a review's summary of the paper: its body, and so its experiments section, could not be
read here (see :mod:`impactbandits.experiments.papers.leqi` and the ledger)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from impactbandits.experiments.claims import (
    TIE,
    Claim,
    Verdict,
    ends,
    final,
    not_above_any,
    significant,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BASELINES",
    "CLAIMS",
    "DIFFERENT",
    "DIFFERENT_ENV",
    "EEP",
    "GREEDY",
    "IDENTICAL",
    "IDENTICAL_ENV",
    "LOOKAHEADS",
    "NOISY_ENV",
    "SIGMA_Z",
    "SLOPE",
    "SMALL_T",
]

#: Three arms with identical deterministic dynamics: b, γ, λ at the midpoints of the ranges the
#: different-dynamics arms are drawn from (ours; the paper's constants could not be read).
IDENTICAL: dict[str, Any] = {"base": [2.5] * 3, "retention": [0.55] * 3, "influence": [1.1] * 3}
#: Five arms with different dynamics, drawn by ``numpy.random.default_rng(0)`` as three vectors
#: in this order, b ~ U[1, 4], γ ~ U[0.2, 0.9], λ ~ U[0.2, 2], rounded to 0.01 (ours).
DIFFERENT: dict[str, Any] = {
    "base": [2.91, 1.81, 1.12, 1.05, 3.44],
    "retention": [0.84, 0.62, 0.71, 0.58, 0.85],
    "influence": [1.67, 0.2, 1.74, 0.26, 1.51],
}
#: The satiation noise of the learning instance (ours).
SIGMA_Z = 0.1
#: The horizon at which greedy is compared with the exact optimum (dynamic programming over
#: the 3^T satiation vectors: T = 13 is the largest within the oracle's state limit).
SMALL_T = 12
#: The growth exponent separating T^(2/3) from T over a decade: the geometric midpoint 5/6
#: (10^(2/3) ≈ 4.6 against 10 for linear regret; the boundary is 10^(5/6) ≈ 6.8).
SLOPE = 5.0 / 6.0

#: The figure's environment labels (:func:`impactbandits.experiments.papers.leqi.environments`).
IDENTICAL_ENV = "3 identical arms, deterministic"
DIFFERENT_ENV = "5 arms, different dynamics, deterministic"
NOISY_ENV = f"5 arms, different dynamics, satiation noise σ_z = {SIGMA_Z:g}"
#: The figure's policy labels.
GREEDY = "greedy (w = 1)"
LOOKAHEADS = {2: "2-lookahead", 3: "3-lookahead"}
EEP = "EEP (w = 2)"
BASELINES = ("UCB1", "SW-UCB", "D-UCB")


def _mean(rows: pd.DataFrame, environment: str, policy: str, metric: str) -> float:
    panel = rows[(rows["environment"] == environment) & (rows["policy"] == policy)]
    if panel.empty:
        raise ValueError(f"no rows for {policy!r} on {environment!r}")
    return float(panel[metric].mean())


def _decade(table: pd.DataFrame) -> tuple[int, int]:
    """The largest horizon T and the stored horizon closest to T/10 (on a log scale)."""
    horizons = sorted(int(h) for h in table["horizon"].unique())
    late = horizons[-1]
    early = min(horizons[:-1] or horizons, key=lambda h: abs(math.log(h / (late / 10))))
    return early, late


def _exponent(early: float, late: float, ratio: float) -> float:
    """The growth exponent of regret from ``early`` to ``late`` over a horizon ratio ``ratio``
    (``nan`` when the early regret is not positive)."""
    if early <= 0 or late <= 0:
        return math.nan
    return math.log(late / early) / math.log(ratio)


def _greedy_optimal(table: pd.DataFrame) -> Verdict:
    """On three identical deterministic arms: greedy's expected reward at T = SMALL_T equals
    the exact optimum over all 3^T arm sequences (dynamic programming, computed here on the
    figure's instance), and at every stored horizon no policy of the run — the 2- and
    3-lookahead planners included — earns more than greedy (its regret against the 3-lookahead
    plan is nowhere above any other policy's)."""
    from impactbandits.oracles.rebounding import optimal_values

    rows = ends(table)
    rows = rows[rows["environment"] == IDENTICAL_ENV]
    small = final(rows, SMALL_T)
    greedy = _mean(small, IDENTICAL_ENV, GREEDY, "expected_reward")
    best = float(optimal_values(**IDENTICAL, horizons=[SMALL_T])[0])
    exact = abs(greedy - best) <= 1e-9 * max(1.0, abs(best))
    others = [p for p in rows["policy"].astype(str).unique() if p != GREEDY]
    horizons = sorted(int(h) for h in rows["horizon"].unique())
    worse = []
    for horizon in horizons:  # each horizon on its own: pooled, one could hide in the others
        ok, text = not_above_any(final(rows, horizon), "regret", GREEDY, others)
        if not ok:
            worse.append(f"T = {horizon:,}: {text}")
    nowhere_worse = not worse
    t_max = horizons[-1]
    regret = _mean(final(rows, t_max), IDENTICAL_ENV, GREEDY, "regret")
    text = (
        f"T = {SMALL_T}: greedy {greedy:.6f}, exact optimum {best:.6f} "
        f"(difference {significant(greedy - best)}); T = {t_max:,}: greedy's regret against "
        f"the 3-lookahead plan {significant(regret)}; "
        + (
            f"no policy above greedy at any of the {len(horizons)} horizons"
            if nowhere_worse
            else "above greedy: " + "; ".join(worse)
        )
    )
    return Verdict(exact and nowhere_worse, text)


def _lookahead_helps(table: pd.DataFrame) -> Verdict:
    """On five deterministic arms with different dynamics: the w-lookahead policy with the
    largest w run earns more than greedy at the largest horizon (the rewards are exact
    expected values: no noise)."""
    rows = final(table)
    rows = rows[rows["environment"] == DIFFERENT_ENV]
    t_max = int(rows["horizon"].max())
    greedy = _mean(rows, DIFFERENT_ENV, GREEDY, "expected_reward")
    gains = {
        w: _mean(rows, DIFFERENT_ENV, label, "expected_reward") - greedy
        for w, label in LOOKAHEADS.items()
    }
    w = max(gains)  # the largest lookahead run
    passed = gains[w] > max(TIE, 1e-9 * abs(greedy))  # beyond the rounding of equal sums
    parts = ", ".join(
        f"{w}-lookahead {significant(gain)} ({significant(gain / t_max)} a round)"
        for w, gain in gains.items()
    )
    return Verdict(passed, f"T = {t_max:,}, expected reward minus greedy's: {parts}")


def _sublinear(table: pd.DataFrame) -> Verdict:
    """EEP's mean regret against the w-lookahead plan (w = 2) grows over the last decade of
    horizons by less than T^(5/6) would (:data:`SLOPE`): closer to the T^(2/3) of an
    explore-then-commit learner than to linear growth. Checked in every environment, the
    stochastic one being the paper's setting for EEP."""
    early_t, late_t = _decade(table)
    early_rows, late_rows = final(table, early_t), final(table, late_t)
    ok, parts = True, []
    for env in (NOISY_ENV, DIFFERENT_ENV, IDENTICAL_ENV):
        early = _mean(early_rows, env, EEP, "regret")
        late = _mean(late_rows, env, EEP, "regret")
        exponent = _exponent(early, late, late_t / early_t)
        ok = ok and (late <= 0 if early <= 0 else late <= early * (late_t / early_t) ** SLOPE)
        parts.append(
            f"{env}: R({early_t:,}) = {significant(early)}, R({late_t:,}) = {significant(late)} "
            f"(exponent {significant(exponent)})"
        )
    return Verdict(ok, f"mean regret over seeds, bound exponent {SLOPE:.3f}; " + "; ".join(parts))


def _classical_linear(table: pd.DataFrame) -> Verdict:
    """On the arms with different dynamics, the classical bandit algorithms' mean regret against
    the w-lookahead plan grows over the last decade of horizons at least as T^(5/6)
    (:data:`SLOPE`): closer to linear than to T^(2/3), where EEP's is below it."""
    early_t, late_t = _decade(table)
    early_rows, late_rows = final(table, early_t), final(table, late_t)
    ok, parts = True, []
    for env in (NOISY_ENV, DIFFERENT_ENV):
        for policy in BASELINES:
            early = _mean(early_rows, env, policy, "regret")
            late = _mean(late_rows, env, policy, "regret")
            exponent = _exponent(early, late, late_t / early_t)
            ok = ok and early > 0 and late >= early * (late_t / early_t) ** SLOPE
            parts.append(f"{env}, {policy}: exponent {significant(exponent)}")
    return Verdict(
        ok,
        f"mean regret over seeds from T = {early_t:,} to {late_t:,}, bound exponent "
        f"{SLOPE:.3f}; " + "; ".join(parts),
    )


CLAIMS = (
    Claim(
        "The greedy policy is optimal when the arms exhibit identical deterministic dynamics "
        "(Leqi et al. 2021, abstract; the experiments' first question, as a review summarises "
        "them)",
        _greedy_optimal,
    ),
    Claim(
        "When the satiation dynamics differ across arms, a lookahead policy that generalizes the "
        "greedy policy improves on it (Leqi et al., arXiv v2 abstract)",
        _lookahead_helps,
    ),
    Claim(
        "Explore-Estimate-Plan achieves a sublinear w-step lookahead regret on stochastic "
        "satiation dynamics with unknown parameters (Leqi et al. 2021, as a review summarises "
        "the paper)",
        _sublinear,
    ),
    Claim(
        "Unlike methods that plan, classical bandit algorithms fall behind on rebounding arms: "
        "their regret grows linearly (our reading of the abstract: 'unlike classical bandit "
        "algorithms, methods for tackling rebounding bandits must plan ahead')",
        _classical_linear,
    ),
)
