"""The R-O MAB objective, its exact optimum (Ron, Ben-Porat & Shalit 2021, §2 and Lemma 1) and
the regret oracle built on it, :func:`opportunity_optimum`.

Utility (Eq. 1): U = Σ_t r_t − Σ_i λ_i·max(0, R_i − N_i) with the requirement
R_i = ⌊T·f(μ)_i⌋ — "T f(μ)_i can be non-integer; in this case we assume T f(μ)_i is rounded to
the previous integer" (§2.1). With this convention Lemma 1 is exactly optimal:

    E[U](N) = Σ_i μ_i N_i − Σ_i λ_i max(0, R_i − N_i),  Σ_i N_i = T,

is separable and concave in each N_i: the first R_i pulls of arm i are worth μ_i + λ_i each,
later ones μ_i. Taking the T most valuable pulls gives: a best arm i* fills every round not
given to others (it receives at least R_{i*}, since Σ_i R_i ≤ T·Σ_i f(μ)_i ≤ T); every other
arm receives exactly R_i pulls if Δ_i < λ_i and none if Δ_i > λ_i. If Δ_i = λ_i the two are
worth the same (any count in 0..R_i is optimal): :func:`lemma1_counts` then pulls the arm
(``indifferent="pull"``, default) or not (``"skip"``) — the value is identical.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from impactbandits.core.environment import Environment

__all__ = [
    "lemma1_counts",
    "opportunity_optimum",
    "optimal_utility",
    "penalty",
    "requirements",
]

#: Guard against T·f landing a rounding error below an integer (e.g. 3·(1/3)).
FLOOR_TOLERANCE = 1e-9


def requirements(f_mu: np.ndarray, horizon: np.ndarray | int) -> np.ndarray:
    """R_i = ⌊T·f(μ)_i⌋, broadcast over leading axes (``horizon`` scalar or ``(C,)``)."""
    horizon = np.asarray(horizon, dtype=float)
    scaled = np.asarray(f_mu, dtype=float) * (horizon[..., None] if horizon.ndim else horizon)
    return np.floor(scaled + FLOOR_TOLERANCE)


def penalty(required: np.ndarray, pulls: np.ndarray, transfer_cost: np.ndarray) -> np.ndarray:
    """Σ_i λ_i max(0, R_i − N_i) over the last axis."""
    return (np.asarray(transfer_cost) * np.maximum(0.0, required - pulls)).sum(axis=-1)


def lemma1_counts(
    mu: np.ndarray,
    f_mu: np.ndarray,
    transfer_cost: np.ndarray,
    horizon: int,
    indifferent: Literal["pull", "skip"] = "pull",
) -> np.ndarray:
    """The optimal pull counts of Lemma 1 (ties for the best arm go to the lowest index)."""
    mu = np.asarray(mu, dtype=float)
    lam = np.broadcast_to(np.asarray(transfer_cost, dtype=float), mu.shape)
    required = requirements(f_mu, horizon).astype(np.int64)
    best = int(np.argmax(mu))
    gap = mu[best] - mu
    serve = gap < lam if indifferent == "skip" else gap <= lam
    counts = np.where(serve, required, 0)
    counts[best] = 0
    counts[best] = horizon - counts.sum()
    return counts


def optimal_utility(
    mu: np.ndarray, f_mu: np.ndarray, transfer_cost: np.ndarray, horizon: int
) -> float:
    """E[U] of the Lemma-1 optimum."""
    counts = lemma1_counts(mu, f_mu, transfer_cost, horizon)
    lam = np.broadcast_to(np.asarray(transfer_cost, dtype=float), np.shape(mu))
    required = requirements(f_mu, horizon)
    return float(np.dot(mu, counts) - penalty(required, counts, lam))


def opportunity_optimum(env: Environment, times: np.ndarray) -> np.ndarray:
    """``(R, len(times))`` optimal expected utility at every horizon in ``times`` (Lemma 1)."""
    mu = env.expected_rewards()
    lam = env.transfer_cost  # type: ignore[attr-defined]
    out = np.empty((mu.shape[0], len(times)))
    for r in range(mu.shape[0]):
        f_mu = env.fairness(mu[r])  # type: ignore[attr-defined]
        out[r] = [optimal_utility(mu[r], f_mu, lam, int(t)) for t in times]
    return out
