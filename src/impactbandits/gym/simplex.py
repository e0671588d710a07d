"""Tang et al.'s meta-arms as a Gymnasium space: probability vectors inside ``Box(0, 1, (K,))``.

:class:`SimplexBox` is a :class:`gymnasium.spaces.Box` (so wrappers and agents that handle boxes
handle it) whose members are the points of the probability simplex — on the ε-grid when the
environment has one (``resolution`` = 1/ε) — with the membership rule of the library's
:class:`~impactbandits.core.spaces.Simplex`, and whose :meth:`SimplexBox.sample` draws such
points. :func:`project_to_simplex` maps any vector onto the simplex (and its grid), for
:class:`~impactbandits.gym.env.BanditEnv` with ``project_actions=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from impactbandits.core.spaces import Simplex
from impactbandits.errors import SpecError

__all__ = ["SimplexBox", "project_to_simplex"]


class SimplexBox(spaces.Box):
    """``Box(0, 1, (n,), float64)`` restricted to probability vectors (sum 1; multiples of
    1/``resolution`` when given), the action space of Tang et al.'s impact bandit.

    :meth:`contains` applies the library's own rule (:meth:`Simplex.validate
    <impactbandits.core.spaces.Simplex.validate>`, the check the runner makes) on top of the
    box's bounds. :meth:`sample` draws uniformly from the simplex (Dirichlet(1, …, 1)), or
    uniformly from the grid points when ``resolution`` is set.
    """

    def __init__(self, n: int, resolution: int | None = None, seed: Any = None) -> None:
        self.simplex = Simplex(int(n), resolution=resolution)
        super().__init__(0.0, 1.0, (int(n),), np.float64, seed)

    @property
    def resolution(self) -> int | None:
        """1/ε of the grid (``None``: the whole simplex)."""
        return self.simplex.resolution

    def sample(self, mask: None = None, probability: None = None) -> np.ndarray:
        """A random member: uniform on the simplex, or on its grid points."""
        if mask is not None or probability is not None:
            raise NotImplementedError("SimplexBox.sample takes no mask or probability")
        n = self.shape[0]
        grid = self.resolution
        if grid is None:
            x = self.np_random.exponential(size=n)  # normalised: Dirichlet(1, …, 1)
            return np.asarray(x / x.sum(), dtype=np.float64)
        # stars and bars: n − 1 bars among grid + n − 1 slots give a uniform composition
        bars = np.sort(self.np_random.choice(grid + n - 1, size=n - 1, replace=False))
        edges = np.concatenate([[-1], bars, [grid + n - 1]])
        return (np.diff(edges) - 1).astype(np.float64) / grid

    def contains(self, x: Any) -> bool:
        """Inside the box and a probability vector (on the grid, if any)."""
        if not super().contains(x):
            return False
        try:
            self.simplex.validate(np.asarray(x, dtype=float)[None], 1)
        except SpecError:
            return False
        return True

    def __repr__(self) -> str:
        grid = "" if self.resolution is None else f", resolution={self.resolution}"
        return f"SimplexBox({self.shape[0]}{grid})"

    def __eq__(self, other: object, /) -> bool:
        return (
            isinstance(other, SimplexBox)
            and other.shape == self.shape
            and other.resolution == self.resolution
        )


def project_to_simplex(vector: Any, n: int, resolution: int | None = None) -> np.ndarray:
    """A point of the simplex from any vector of length ``n``: negative and non-finite entries
    count as 0, the rest is normalised to sum to 1 (all zeros: the uniform vector), and with
    ``resolution`` rounded to the grid by largest remainders (so that it still sums to 1)."""
    x = np.asarray(vector, dtype=float)
    if x.shape != (n,):
        raise SpecError("action", f"must be a vector of length {n}, got shape {x.shape}")
    x = np.where(np.isfinite(x) & (x > 0), x, 0.0)
    total = x.sum()
    p = x / total if total > 0 else np.full(n, 1.0 / n)
    if resolution is None:
        return p
    scaled = p * resolution
    units = np.floor(scaled).astype(np.int64)
    missing = int(resolution - units.sum())
    order = np.argsort(-(scaled - units), kind="stable")
    units[order[:missing]] += 1
    return units.astype(float) / resolution
