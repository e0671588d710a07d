"""Improving multi-armed bandit (IMAB) instances (Heidari et al. 2016; Patil et al. 2023).

An IMAB curve is bounded in [0, 1], nondecreasing and has diminishing returns
(f(n+1) − f(n) ≤ f(n) − f(n−1)). Families, each returning an ``(k, length)`` array of f_i(m)
for m = 1..length:

* :func:`lower_bound_instance` — the family I_m of Patil et al. §3 (Theorem 2): with
  N = ⌈T/k⌉, every arm rises as n/(kN); the others stop at 1/k after N pulls, arm m keeps rising
  to 1 at kN pulls. No algorithm can tell arm m apart before it has N pulls.
* :func:`linear_vs_flat` — the proof of Theorem 3 (round robin is Θ(k²)): one arm rises linearly
  to 1 over ``ramp`` pulls, the others are flat.
* :func:`random_imab_curves` — a documented random generator of bounded, increasing, concave
  curves (saturating exponentials with random asymptote and rate), in two families:
  ``"uniform"`` (independent arms) and ``"late-bloomer"`` (one arm with the highest potential
  that starts behind an early riser and overtakes it only late in the horizon).
* :func:`saturating_curves` — concave quadratics reaching their asymptote a_i exactly after L_i
  pulls and flat afterwards (instances for Theorem 5 with a known saturation point).

The *true potential* of an arm is its asymptote a_i = lim_{n→∞} f_i(n) (Patil et al. §2 and
Theorem 5), not the last value of a finite table: :func:`imab_potentials` gives it in closed form
for every family above, and :func:`true_potentials` for any rested environment.

:func:`validate_imab` rejects curves that break the assumptions, naming the arm and the first
violating index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from impactbandits.envs.validation import validate_curves
from impactbandits.errors import SpecError

__all__ = [
    "IMAB_TOLERANCE",
    "RANDOM_FAMILIES",
    "imab_potentials",
    "late_bloomer_report",
    "linear_vs_flat",
    "lower_bound_instance",
    "random_imab_curves",
    "random_imab_parameters",
    "saturating_curves",
    "true_potentials",
    "validate_imab",
]

#: Slack for floating-point rounding in the monotonicity and concavity checks.
IMAB_TOLERANCE = 1e-12
#: Random generator ranges: asymptote a ~ U(A_MIN, 1); rate r log-uniform in [R_MIN, R_MAX]/length.
A_MIN = 0.1
RATE_LOW, RATE_HIGH = 2.0, 200.0
#: Families of :func:`random_imab_curves`.
RANDOM_FAMILIES = ("uniform", "late-bloomer")
RandomFamily = Literal["uniform", "late-bloomer"]
#: Late-bloomer family (see :func:`random_imab_parameters`): the late bloomer's asymptote and
#: scaled rate, the early riser's asymptote (as a fraction of the late bloomer's) and rate, and
#: the other arms' asymptote fractions and rates.
LATE_ASYMPTOTE = (0.7, 1.0)
LATE_RATE = (5.0, 12.0)
EARLY_FRACTION = (0.55, 0.75)
EARLY_RATE = (200.0, 2000.0)
OTHER_FRACTION = (0.1, 0.75)
OTHER_RATE = (2.0, 2000.0)
#: The early phase of a late-bloomer instance: the first length/EARLY_PHASE pulls.
EARLY_PHASE = 20


def validate_imab(curves: np.ndarray, field: str = "curves") -> np.ndarray:
    """Check bounded, nondecreasing and diminishing returns; one-line error otherwise."""
    curves = validate_curves(curves, field)  # finite, within [0, 1]
    step = np.diff(curves, axis=1)
    falling = step < -IMAB_TOLERANCE
    if falling.any():
        arm, index = (int(x) for x in np.argwhere(falling)[0])
        raise SpecError(
            field, f"arm {arm} decreases at index {index + 1} (IMAB curves must be nondecreasing)"
        )
    convex = np.diff(step, axis=1) > IMAB_TOLERANCE
    if convex.any():
        arm, index = (int(x) for x in np.argwhere(convex)[0])
        raise SpecError(
            field,
            f"arm {arm} has increasing returns at index {index + 2} (IMAB "
            "curves must have diminishing returns)",
        )
    return curves


def lower_bound_instance(k: int, m: int, horizon: int, length: int | None = None) -> np.ndarray:
    """Instance I_m of Patil et al. (2023, §3) for ``k`` arms and horizon T (arm ``m`` is
    0-based here; the paper's m ∈ [k] is m + 1)."""
    if not 0 <= m < k:
        raise ValueError(f"m must be in 0..{k - 1}, got {m}")
    length = length or horizon
    n_cap = math.ceil(horizon / k)
    n = np.arange(1, length + 1, dtype=float)
    others = np.where(n <= n_cap, n / (k * n_cap), 1.0 / k)
    best = np.where(n <= k * n_cap, n / (k * n_cap), 1.0)
    curves = np.tile(others, (k, 1))
    curves[m] = best
    return curves


def linear_vs_flat(k: int, ramp: int, length: int, flat: float = 0.0) -> np.ndarray:
    """Arm 0 rises as min(1, n/ramp); arms 1..k−1 stay at ``flat`` (Theorem 3's proof)."""
    n = np.arange(1, length + 1, dtype=float)
    curves = np.full((k, length), float(flat))
    curves[0] = np.minimum(1.0, n / ramp)
    return curves


def _log_uniform(rng: np.random.Generator, bounds: tuple[float, float], size: Any = None) -> Any:
    return np.exp(rng.uniform(math.log(bounds[0]), math.log(bounds[1]), size))


def random_imab_parameters(
    k: int, seed: int, family: RandomFamily = "uniform"
) -> tuple[np.ndarray, np.ndarray]:
    """Asymptotes a_i and scaled rates ρ_i of a random instance (see :func:`random_imab_curves`).

    ``"uniform"``: a_i ~ U(0.1, 1) and ρ_i log-uniform in [2, 200], independently; drawn from
    ``numpy.random.default_rng(seed)``, the k asymptotes first, then the k rates.

    ``"late-bloomer"`` (k ≥ 2), drawn from ``default_rng(seed)`` in this order: the late bloomer
    ℓ (uniform over the arms) and the early riser e (uniform over the others); a_ℓ ~ U(0.7, 1),
    ρ_ℓ log-uniform in [5, 12]; a_e = a_ℓ·U(0.55, 0.75), ρ_e log-uniform in [200, 2000]; every
    other arm j: a_j = a_ℓ·U(0.1, 0.75), ρ_j log-uniform in [2, 2000]. With T = ``length`` and
    N ≤ T/20, by construction:

    1. ℓ has the unique highest potential (every other a_j ≤ 0.75·a_ℓ);
    2. ℓ starts behind: f_ℓ(N) ≤ a_ℓ(1 − e^{−12/20}) < 0.452·a_ℓ while e has already saturated;
    3. a myopic or short-horizon view prefers e: Rew_e(N) ≥ ∫₀^N f_e ≥ 0.9·a_e·N ≥ 0.495·a_ℓ·N
       > N·f_ℓ(N) ≥ Rew_ℓ(N), so ℓ is not OPT(N)'s arm (Proposition 1);
    4. ℓ is the best arm for the whole horizon: Rew_ℓ(T) ≥ ∫₀^T f_ℓ ≥ (1 − 1/5)·a_ℓ·T
       > 0.75·a_ℓ·T ≥ Rew_j(T) for every j ≠ ℓ.

    So OPT's arm switches from e to ℓ somewhere in (T/20, T]: a learner that judges arms by their
    current rewards (or by a short horizon) is misled into the early riser, which is the
    situation Patil et al. (§1) call a late bloomer. :func:`late_bloomer_report` checks 1–4.
    """
    rng = np.random.default_rng(seed)
    if family == "uniform":
        a = rng.uniform(A_MIN, 1.0, k)
        rho = _log_uniform(rng, (RATE_LOW, RATE_HIGH), k)
        return a, rho
    if family != "late-bloomer":
        raise SpecError("random_family", f"must be one of {RANDOM_FAMILIES}, got {family!r}")
    if k < 2:
        raise SpecError("k", "the late-bloomer family needs at least 2 arms")
    late = int(rng.integers(k))
    early = int(rng.choice([i for i in range(k) if i != late]))
    a_late = rng.uniform(*LATE_ASYMPTOTE)
    a = a_late * rng.uniform(*OTHER_FRACTION, k)
    rho = _log_uniform(rng, OTHER_RATE, k)
    a[late], rho[late] = a_late, _log_uniform(rng, LATE_RATE)
    a[early], rho[early] = a_late * rng.uniform(*EARLY_FRACTION), _log_uniform(rng, EARLY_RATE)
    return a, rho


def random_imab_curves(
    k: int, length: int, seed: int, family: RandomFamily = "uniform"
) -> np.ndarray:
    """Saturating exponentials ``f_i(n) = a_i (1 − exp(−r_i n))`` — bounded, increasing and
    concave — with r_i = ρ_i / length and (a_i, ρ_i) from :func:`random_imab_parameters`.

    ``"uniform"`` (default): a_i ~ U(0.1, 1), ρ_i log-uniform in [2, 200], so arms saturate
    anywhere between the first 0.5% and half of the horizon. Mostly easy: the arm with the
    highest potential often also leads from the start (of seeds 0–3 at k = 5, T = 10⁴, only
    seed 3 has an arm that starts behind and becomes OPT's arm within T).

    ``"late-bloomer"``: one late bloomer, one early riser that looks better for at least the
    first T/20 pulls, and the late bloomer optimal for the full horizon T = ``length``."""
    a, rho = random_imab_parameters(k, seed, family)
    n = np.arange(1, length + 1, dtype=float)
    return a[:, None] * -np.expm1(-(rho[:, None] / length) * n[None, :])


def late_bloomer_report(curves: np.ndarray, potentials: Sequence[float]) -> dict[str, Any]:
    """Check the late-bloomer properties 1–4 of :func:`random_imab_parameters` on any instance
    (T = the curves' length, N = ⌊T/20⌋): the arm ℓ of highest potential is unique, some other
    arm e has f_e(n) > f_ℓ(n) for every n ≤ N, OPT(N)'s arm is not ℓ, and OPT(T)'s arm is ℓ.
    Returns the flags, ℓ, and the last horizon at which ℓ is not OPT's arm."""
    curves = np.asarray(curves, dtype=float)
    a = np.asarray(potentials, dtype=float)
    k, length = curves.shape
    late = int(np.argmax(a))
    unique = bool(np.sum(a >= a[late]) == 1)
    early_n = max(1, length // EARLY_PHASE)
    ahead = np.all(curves[:, :early_n] > curves[late, :early_n], axis=1)
    cumulative = np.cumsum(curves, axis=1)
    leader = np.argmax(cumulative, axis=0)
    others = np.delete(cumulative, late, axis=0)
    behind = np.flatnonzero(cumulative[late] <= others.max(axis=0)) if k > 1 else np.array([])
    report = {
        "late": late,
        "unique_best_potential": unique,
        "starts_behind": bool(ahead.any()),
        "misleads_short_horizon": bool(leader[early_n - 1] != late),
        "best_at_full_horizon": bool(cumulative[late, -1] > others[:, -1].max()) if k > 1 else True,
        "overtakes_at": int(behind[-1] + 2) if behind.size else 1,
    }
    report["late_bloomer"] = all(
        report[key]
        for key in (
            "unique_best_potential",
            "starts_behind",
            "misleads_short_horizon",
            "best_at_full_horizon",
        )
    )
    return report


def saturating_curves(
    asymptotes: Sequence[float], saturation: Sequence[int], length: int, start: float = 0.0
) -> np.ndarray:
    """``f_i(n) = s + (a_i − s)·(1 − (1 − min(n, L_i)/L_i)²)``: concave, increasing, equal to
    a_i exactly from pull L_i on (a known saturation point, for Theorem 5)."""
    n = np.arange(1, length + 1, dtype=float)
    rows = []
    for a, sat in zip(asymptotes, saturation, strict=True):
        x = np.minimum(n, sat) / sat
        rows.append(start + (a - start) * (1.0 - (1.0 - x) ** 2))
    return np.stack(rows)


def imab_potentials(family: str, curves: np.ndarray, **params: Any) -> np.ndarray:
    """The true potentials a_i = lim_{n→∞} f_i(n) (Patil et al. §2, Theorem 5) of an
    :class:`~impactbandits.envs.rested_families.ImprovingBandit` instance, in closed form:

    * ``"random"``: a_i of :func:`random_imab_parameters` (``k``, ``seed``, ``random_family``);
    * ``"lower-bound"``: 1 for arm ``m`` (it reaches 1 at kN pulls), 1/k for the others;
    * ``"linear-vs-flat"``: 1 for arm 0, ``flat`` (default 0) for the others;
    * ``"saturating"``: the given ``asymptotes`` (reached exactly at pull L_i);
    * ``"curves"`` (explicit finite tables): the last value f_i(L). A finite table has no limit;
      under the IMAB assumptions a_i ≥ f_i(L), with equality when the curve is flat at its end,
      and f_i(L) is the most that any number of pulls within the table can reach.
    """
    curves = np.asarray(curves, dtype=float)
    k = curves.shape[0]
    if family == "random":
        return random_imab_parameters(
            k, int(params["seed"]), params.get("random_family", "uniform")
        )[0]
    if family == "lower-bound":
        out = np.full(k, 1.0 / k)
        out[int(params["m"])] = 1.0
        return out
    if family == "linear-vs-flat":
        out = np.full(k, float(params.get("flat", 0.0)))
        out[0] = 1.0
        return out
    if family == "saturating":
        return np.asarray(params["asymptotes"], dtype=float)
    return curves[:, -1].copy()


def true_potentials(env: Any) -> np.ndarray:
    """a_i of a rested environment: its ``asymptotes`` attribute when it knows them in closed
    form (:class:`~impactbandits.envs.rested_families.ImprovingBandit`,
    :class:`~impactbandits.envs.rested_families.IncreasingBandit`), else the last value of each
    curve (data or user curves: see :func:`imab_potentials`, family ``"curves"``)."""
    known = getattr(env, "asymptotes", None)
    if known is not None:
        return np.asarray(known, dtype=float)
    return np.asarray(env.curves, dtype=float)[:, -1].copy()
