"""Ranks from paired comparisons: policies whose difference is not significant share a rank.

The benchmark's replications are paired: seed ``s`` of every policy meets the same
environment instance and the same reward noise (common random numbers,
:class:`~impactbandits.core.random.CommonNoise`). So two policies are compared on the
per-seed differences of their scores, which removes the noise both share.

Method (stated in every leaderboard that uses it, :data:`METHOD`):

* For each pair of policies, the seeds' differences ``d_s = x_{a,s} − x_{b,s}`` get a two-sided
  paired t-test (:func:`scipy.stats.ttest_rel`). Two special cases are exact, not tested: a
  mean difference within :data:`TIE` (floating-point rounding of the regret's sums) is a tie
  (p = 1); differences with no spread beyond :data:`TIE` and a larger mean (deterministic
  policies on a deterministic environment) are certain (p = 0). With one seed nothing is
  significant.
* The p-values of all pairs of one (setting, horizon) are corrected together with Holm's
  step-down method (family-wise error ``alpha``, default 5 %).
* A policy's rank is 1 + the number of policies that are significantly better (lower mean
  score). Policies that no significant comparison separates therefore share a rank (the rank of
  the best among them; "competition" ranking). Ranks need not be contiguous: 1, 1, 3.
* ``seeds_needed``: the smallest ``n`` such that the ranks computed from the first ``n'`` seeds
  equal the final ranks for every ``n ≤ n' ≤ N`` — how many seeds the ranking needed to settle.

Lower scores are better (regret).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["METHOD", "TIE", "PairedRanking", "holm", "paired_pvalues", "paired_ranking"]

#: Mean differences this small are ties: per-step regrets are differences of sums of ~T rewards
#: divided by T, whose floating-point rounding is ~1e-16 per step (the FICO rows at T = 10,000
#: show ±1e-16 on every seed); a real difference of 1e-12 per step is 1e-8 in total at T = 10⁴.
TIE = 1e-12

METHOD = (
    "rank = 1 + number of policies significantly better, by two-sided paired t-tests on the "
    "per-seed differences (common random numbers), Holm-corrected over all pairs of the "
    "setting and horizon at family-wise level {alpha:g}; mean differences below 1e-12 per step "
    "(floating-point rounding) are ties; policies not separated share a rank"
)


def paired_pvalues(scores: np.ndarray, tie: float = TIE) -> tuple[np.ndarray, np.ndarray]:
    """``(mean_difference, p)``, each ``(P, P)``, for scores ``(P policies, n seeds)``:
    ``mean_difference[a, b]`` is the mean of ``x_a − x_b`` and ``p[a, b]`` the two-sided paired
    t-test's p-value (exact cases as in the module docstring: a mean difference within ``tie``
    is a tie); the diagonal is 0 and 1."""
    x = np.asarray(scores, dtype=float)
    p_count, n = x.shape
    diff = x[:, None, :] - x[None, :, :]
    mean = diff.mean(axis=2)
    p = np.ones((p_count, p_count))
    if n < 2:
        return mean, p
    spread = diff.std(axis=2, ddof=1)
    tied = np.abs(mean) <= tie
    flat = ~tied & (spread <= tie)
    p[flat] = 0.0
    tested = ~tied & ~flat
    if tested.any():
        from scipy import stats

        t = mean[tested] / (spread[tested] / np.sqrt(n))
        p[tested] = 2.0 * stats.t.sf(np.abs(t), df=n - 1)
    np.fill_diagonal(p, 1.0)
    return mean, p


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values of a flat array (monotone, capped at 1)."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class PairedRanking:
    """The ranking of ``P`` policies; pair arrays are ``(P, P)``, ``[a, b]`` is ``a − b``."""

    ranks: np.ndarray
    mean_difference: np.ndarray
    p_value: np.ndarray
    p_holm: np.ndarray
    significant: np.ndarray
    seeds_needed: int


def _ranks(scores: np.ndarray, alpha: float) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    mean, p = paired_pvalues(scores)
    count = scores.shape[0]
    upper = np.triu_indices(count, 1)
    adjusted = np.ones((count, count))
    adjusted[upper] = holm(p[upper])
    adjusted = np.minimum(adjusted, adjusted.T)
    significant = adjusted <= alpha
    np.fill_diagonal(significant, False)
    better = significant & (mean > 0)  # [a, b]: b is significantly better than a
    ranks = 1 + better.sum(axis=1)
    return ranks, (mean, p, adjusted, significant)


def paired_ranking(scores: np.ndarray, alpha: float = 0.05) -> PairedRanking:
    """Rank the rows of ``scores`` (``(P policies, n seeds)``, lower is better; seed ``s`` is
    column ``s`` for every policy) by paired comparisons (module docstring)."""
    x = np.asarray(scores, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("scores must be a non-empty (policies, seeds) array")
    if not np.isfinite(x).all():
        raise ValueError("scores must be finite")
    ranks, (mean, p, adjusted, significant) = _ranks(x, alpha)
    needed = x.shape[1]
    for n in range(x.shape[1] - 1, 0, -1):
        if not np.array_equal(_ranks(x[:, :n], alpha)[0], ranks):
            break
        needed = n
    return PairedRanking(ranks, mean, p, adjusted, significant, needed)
