"""Reward curves from the FICO credit-score data (Lindner et al. 2021, after Liu et al. 2018).

Lindner, Heidari and Krause (IJCAI 2021, "Addressing the long-term impact of ML decisions via
policy regret", Section 5 and Appendix D.4) turn the FICO tables of the Federal Reserve's 2007
report — in the tabulation of Hardt, Price and Srebro (2016) and Liu, Dean, Rolf, Simchowitz and
Hardt (ICML 2018, "Delayed impact of fair machine learning") — into a four-armed rested bandit:
arm i is an ethnic group, and the m-th pull of arm i lends to the m-th most credit-worthy of
``n_applicants`` applicants sampled from that group. The pipeline (the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/) is:

1. the TransRisk score percentiles of the tables (0–100) are mapped to the FICO scale 300–850
   (:func:`transrisk_to_fico`);
2. the repay probability is ``p(s) = 1 − default%/100``, linearly interpolated on that grid
   (:func:`repay_probability`);
3. per group, ``n_applicants`` scores are sampled through the inverse of the piecewise-linear CDF,
   clipped to [300, 850] and sorted best first (:func:`sample_applicants`);
4. the reward of lending to an applicant with score s is either Liu et al.'s expected change of
   the group's score, ``p·(clip(s+75) − s) + (1−p)·(clip(s−150) − s)`` (single-peaked in m), or
   the bank's expected utility ``p·(+1) + (1−p)·(−4)`` (nearly decreasing in m);
5. each group's rewards are divided by that group's maximum and clipped to [0, 1]; pulls after
   the last applicant give 0.

Everything is deterministic given ``seed``: the four groups' applicants are drawn, in the order
:data:`FICO_GROUPS`, from one ``numpy.random.default_rng(seed)``, ``n_applicants`` uniforms per
group, so both reward kinds see the same applicants under the same seed. The tables are read
lazily from the package data (``impactbandits/data/fico``, see its README for provenance) and
cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from impactbandits.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FICO_GROUPS",
    "FICO_KINDS",
    "FICO_MAX",
    "FICO_MIN",
    "FICO_SCORE_DISTRIBUTION",
    "FICO_TMAX",
    "N_APPLICANTS",
    "SCORE_CHANGE_DEFAULT",
    "SCORE_CHANGE_REPAID",
    "UTILITY_DEFAULT",
    "UTILITY_REPAID",
    "FicoTables",
    "bank_utility",
    "expected_score_change",
    "fico_curves",
    "fico_group_rewards",
    "load_fico_tables",
    "repay_probability",
    "sample_applicants",
    "transrisk_to_fico",
]

#: Lowest and highest FICO score; every score and every post-loan outcome is clipped to this range.
FICO_MIN = 300.0
FICO_MAX = 850.0
#: Liu et al. (2018): a repaid loan raises the borrower's score by 75 points, a default lowers it
#: by 150 points (each outcome clipped to [FICO_MIN, FICO_MAX]).
SCORE_CHANGE_REPAID = 75.0
SCORE_CHANGE_DEFAULT = -150.0
#: Liu et al. (2018): the bank's utility of a repaid (+1) and of a defaulted (−4) loan.
UTILITY_REPAID = 1.0
UTILITY_DEFAULT = -4.0
#: Lindner et al. (2021): applicants sampled per group (pulls beyond this give reward 0).
N_APPLICANTS = 1000
#: Lindner et al. (2021): the largest horizon of the FICO experiments (Fig. 3a, Figs 12–13).
FICO_TMAX = 2000
#: The groups (arms) in the paper's order.
FICO_GROUPS: tuple[str, ...] = ("Asian", "Black", "Hispanic", "White")
#: The reward kinds: Liu et al.'s score change (main text) and the bank's utility (App. D.4).
FICO_KINDS: tuple[str, ...] = ("score_change", "bank_utility")

#: (FICO score, % of the population) of Hardt et al.'s / Liu et al.'s conversion table: the share
#: of the population whose score lies in [score, score + 50). The shares sum to 100.
FICO_SCORE_DISTRIBUTION: tuple[tuple[float, float], ...] = (
    (300.0, 2.1),
    (350.0, 4.2),
    (400.0, 5.4),
    (450.0, 6.5),
    (500.0, 7.9),
    (550.0, 9.6),
    (600.0, 12.0),
    (650.0, 13.8),
    (700.0, 17.0),
    (750.0, 15.8),
    (800.0, 5.7),
    (850.0, 0.0),
)

_PERCENT = 100.0
_DATA_PACKAGE = "impactbandits"
_DATA_DIR = ("data", "fico")
_CDF_FILE = "transrisk_cdf_by_race_ssa.csv"
_PERFORMANCE_FILE = "transrisk_performance_by_race_ssa.csv"
_TOTALS_FILE = "totals.csv"
#: Column of each group in the source tables (the white group's spelling is the source's).
_COLUMNS = {
    "Asian": "Asian",
    "Black": "Black",
    "Hispanic": "Hispanic",
    "White": "Non- Hispanic white",
}

FicoKind = Literal["score_change", "bank_utility"]


@lru_cache(maxsize=1)
def _fico_knots() -> tuple[np.ndarray, np.ndarray]:
    """The knots ``(percentile, FICO score)`` of the piecewise-linear TransRisk → FICO map."""
    scores = np.array([score for score, _ in FICO_SCORE_DISTRIBUTION])
    shares = np.array([share for _, share in FICO_SCORE_DISTRIBUTION])
    below = np.concatenate(([0.0], np.cumsum(shares[:-1])))
    # The shares sum to 100; normalising keeps floating-point rounding off the last knot.
    percentiles = _PERCENT * below / below[-1]
    percentiles.flags.writeable = False
    scores.flags.writeable = False
    return percentiles, scores


def transrisk_to_fico(percentile: ArrayLike) -> np.ndarray:
    """Map TransRisk score percentiles (0–100) to the FICO scale (300–850).

    Interpretation of the conversion table :data:`FICO_SCORE_DISTRIBUTION` (fidelity ledger;
    the ``convert_percentiles`` routine of Hardt et al. 2016 / Liu et al. 2018 that
    Lindner et al. 2021 reuse): the entry ``(v, s)`` says that s % of the population has a FICO
    score in ``[v, v + 50)``. A TransRisk score is a population percentile, so the FICO score
    ``v`` sits at the percentile equal to the cumulative share of all *earlier* rows, and the
    map is linear between consecutive knots::

        percentile   0    2.1  6.3  11.7  18.2  26.1  35.7  47.7  61.5  78.5  94.3  100
        FICO       300    350  400   450   500   550   600   650   700   750   800   850

    (the share is spread uniformly over each 50-point bin). The map is strictly increasing,
    sends 0 to 300 and 100 to 850.

    Raises:
        SpecError: if a percentile lies outside [0, 100] or is not finite.
    """
    values = np.asarray(percentile, dtype=float)
    if not np.all(np.isfinite(values)) or np.any((values < 0.0) | (values > _PERCENT)):
        raise SpecError("percentile", "TransRisk percentiles must lie in [0, 100]")
    knots, scores = _fico_knots()
    return np.interp(values, knots, scores)


@dataclass(frozen=True)
class FicoTables:
    """The FICO tables on the FICO scale, one row per group in the order of :data:`FICO_GROUPS`.

    Attributes:
        scores: ``(S,)`` strictly increasing FICO scores of the table rows (TransRisk 0–100 in
            steps of 0.5 with 72.5, 77.5 and 92.5 absent, mapped by :func:`transrisk_to_fico`).
        cdf: ``(4, S)`` fraction of each group with a score at or below ``scores`` (in [0, 1]).
        repay: ``(4, S)`` probability of repaying a loan, ``1 − default%/100``.
        totals: number of people per group in the source sample.
    """

    scores: np.ndarray
    cdf: np.ndarray
    repay: np.ndarray
    totals: dict[str, int]


def _read_table(name: str) -> pd.DataFrame:
    import pandas as pd  # only when the tables are first read

    resource = files(_DATA_PACKAGE).joinpath(*_DATA_DIR, name)
    with resource.open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, index_col=0)


@lru_cache(maxsize=1)
def load_fico_tables() -> FicoTables:
    """Read the packaged FICO tables (cached; the returned arrays are read-only)."""
    cdf_frame = _read_table(_CDF_FILE)
    performance_frame = _read_table(_PERFORMANCE_FILE)
    totals_frame = _read_table(_TOTALS_FILE)
    if not cdf_frame.index.equals(performance_frame.index):
        raise ValueError("FICO tables: the CDF and performance tables have different scores")
    columns = [_COLUMNS[group] for group in FICO_GROUPS]
    scores = transrisk_to_fico(cdf_frame.index.to_numpy(dtype=float))
    cdf = cdf_frame[columns].to_numpy(dtype=float).T / _PERCENT
    repay = 1.0 - performance_frame[columns].to_numpy(dtype=float).T / _PERCENT
    for array in (scores, cdf, repay):
        array.flags.writeable = False
    totals = {group: int(totals_frame.iloc[0][_COLUMNS[group]]) for group in FICO_GROUPS}
    return FicoTables(scores=scores, cdf=cdf, repay=repay, totals=totals)


def _group_index(group: str) -> int:
    try:
        return FICO_GROUPS.index(group)
    except ValueError:
        raise SpecError(
            "group", f"must be one of {', '.join(FICO_GROUPS)}; got {group!r}"
        ) from None


def repay_probability(scores: ArrayLike, group: str) -> np.ndarray:
    """Probability that an applicant of ``group`` with FICO score ``scores`` repays a loan.

    ``1 − default%/100`` of the performance table, linearly interpolated between the table's
    FICO scores (constant beyond its ends). Note that the source's default rates are not
    monotone everywhere: they rise with the score for the Asian group between FICO ≈ 695
    and 725 and for the Black group between FICO ≈ 755 and 786 (TransRisk 60–70 and 80–90).
    """
    tables = load_fico_tables()
    return np.interp(
        np.asarray(scores, dtype=float), tables.scores, tables.repay[_group_index(group)]
    )


def _inverse_cdf(u: np.ndarray, scores: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """Generalised inverse ``inf{s : F(s) ≥ u}`` of the piecewise-linear CDF through the knots.

    Within a rising segment ``cdf[k−1] < u ≤ cdf[k]`` the score is interpolated linearly; flat
    segments (zero mass) are never landed in; ``u ≤ cdf[0]`` gives ``scores[0]`` (the mass at or
    below the lowest score sits on it).
    """
    u = np.clip(u, cdf[0], cdf[-1])
    upper = np.searchsorted(cdf, u, side="left")
    at_bottom = upper == 0
    upper = np.maximum(upper, 1)
    lower = upper - 1
    rise = cdf[upper] - cdf[lower]
    fraction = np.where(at_bottom, 0.0, (u - cdf[lower]) / np.where(at_bottom, 1.0, rise))
    return np.where(
        at_bottom, scores[0], scores[lower] + fraction * (scores[upper] - scores[lower])
    )


def sample_applicants(group: str, n_applicants: int, rng: np.random.Generator) -> np.ndarray:
    """Sample ``n_applicants`` FICO scores of ``group``, sorted best first.

    Inverse-CDF sampling: ``n_applicants`` uniforms ``rng.random(n_applicants)`` are pushed
    through the generalised inverse of the group's CDF, interpolated linearly between the
    table's FICO scores; the scores are clipped to [300, 850] and sorted in decreasing order.
    """
    _check_positive("n_applicants", n_applicants)
    tables = load_fico_tables()
    g = _group_index(group)
    uniforms = rng.random(n_applicants)
    scores = np.clip(_inverse_cdf(uniforms, tables.scores, tables.cdf[g]), FICO_MIN, FICO_MAX)
    return np.sort(scores)[::-1].copy()


def expected_score_change(scores: ArrayLike, repay: ArrayLike) -> np.ndarray:
    """Liu et al. (2018)'s expected change of a borrower's score from a loan.

    ``p·(clip(s + 75) − s) + (1 − p)·(clip(s − 150) − s)`` with each outcome clipped to
    [300, 850]. Near 850 the +75 is mostly clipped away, so the top scores have a negative
    expected change; at exactly 300 a default cannot lower the score, so it is ``75·p > 0``.
    """
    s = np.asarray(scores, dtype=float)
    p = np.asarray(repay, dtype=float)
    gain = np.clip(s + SCORE_CHANGE_REPAID, FICO_MIN, FICO_MAX) - s
    loss = np.clip(s + SCORE_CHANGE_DEFAULT, FICO_MIN, FICO_MAX) - s
    return p * gain + (1.0 - p) * loss


def bank_utility(repay: ArrayLike) -> np.ndarray:
    """Liu et al. (2018)'s expected utility of a loan to the bank: ``p·(+1) + (1 − p)·(−4)``."""
    p = np.asarray(repay, dtype=float)
    return p * UTILITY_REPAID + (1.0 - p) * UTILITY_DEFAULT


def fico_group_rewards(
    group: str, kind: FicoKind, n_applicants: int, rng: np.random.Generator
) -> np.ndarray:
    """Rescaled rewards of lending to ``group``'s applicants, best applicant first.

    Samples the applicants (:func:`sample_applicants`), evaluates the reward of ``kind`` and
    rescales as in Lindner et al.'s code: divide by the group's maximum over its applicants,
    then clip to [0, 1]. Consequence for ``"score_change"``: every applicant whose expected
    score change is negative — the low-score tail (for scores in [450, 775] the expected change
    is ``225·p − 150``, negative where ``p < 2/3``) and the very top near 850 (where the gain is
    clipped away) — gets reward
    exactly 0, so the curve starts low (or at 0), rises to 1 and falls to a flat 0; how harmful
    such a loan would be is lost. For ``"bank_utility"`` loans with ``p < 0.8`` get 0.

    Raises:
        ValueError: if no applicant has a positive reward (the rescaling is undefined); this
            only happens for tiny ``n_applicants``.
    """
    if kind not in FICO_KINDS:
        raise SpecError("kind", f"must be one of {', '.join(FICO_KINDS)}; got {kind!r}")
    scores = sample_applicants(group, n_applicants, rng)
    repay = repay_probability(scores, group)
    raw = expected_score_change(scores, repay) if kind == "score_change" else bank_utility(repay)
    peak = raw.max()
    if not peak > 0.0:
        raise ValueError(
            f"FICO group {group}: no sampled applicant has a positive {kind} reward, "
            "so dividing by the group's maximum is undefined; sample more applicants"
        )
    return np.clip(raw / peak, 0.0, 1.0)


def _check_positive(field: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise SpecError(field, f"must be a positive integer; got {value!r}")


def fico_curves(
    kind: FicoKind = "score_change",
    horizon: int = FICO_TMAX,
    seed: int = 0,
    n_applicants: int = N_APPLICANTS,
) -> tuple[np.ndarray, list[str]]:
    """The FICO credit-lending bandit of Lindner et al. (2021), Fig. 3a (and Fig. 13).

    Args:
        kind: ``"score_change"`` (Liu et al. 2018's expected change of the group's mean score,
            +75 for a repaid and −150 for a defaulted loan; single-peaked) or ``"bank_utility"``
            (+1 / −4; nearly decreasing, Lindner et al. Appendix D.4).
        horizon: number of pulls per arm to tabulate (the paper's largest horizon is 2000).
        seed: seed of the ``numpy.random.default_rng`` that samples the applicants; the groups
            are sampled in the order of :data:`FICO_GROUPS`, ``n_applicants`` uniforms each.
        n_applicants: applicants sampled per group (pulls beyond it give reward 0).

    Returns:
        ``(curves, groups)``: ``curves[i, m − 1] = f_i(m)`` for m = 1..horizon, a ``(4, horizon)``
        float array in [0, 1] (zero for m > n_applicants; rescaled over all n_applicants
        applicants, so a shorter horizon gives a prefix of a longer one), and the group names
        ``["Asian", "Black", "Hispanic", "White"]``.
    """
    _check_positive("horizon", horizon)
    _check_positive("n_applicants", n_applicants)
    if kind not in FICO_KINDS:
        raise SpecError("kind", f"must be one of {', '.join(FICO_KINDS)}; got {kind!r}")
    rng = np.random.default_rng(seed)
    curves = np.zeros((len(FICO_GROUPS), horizon))
    length = min(horizon, n_applicants)
    for i, group in enumerate(FICO_GROUPS):
        curves[i, :length] = fico_group_rewards(group, kind, n_applicants, rng)[:length]
    return curves, list(FICO_GROUPS)
