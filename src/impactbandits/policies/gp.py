"""Gaussian-process posteriors on a finite grid, batched over replications and arms.

The recovering-bandit learners (:mod:`impactbandits.policies.recovering`) put a GP prior with
mean 0 and a squared-exponential kernel on each arm's recovery function ``f_i`` and observe
``y = f_i(z) + N(0, σ²)`` with ``z`` in the grid ``{0, …, z_max}`` (Pike-Burke & Grünewälder
2019; the authors' code fits one ``GPy.models.GPRegression`` per arm, with fixed
hyper-parameters: it never calls ``optimize``). Because the inputs live on a finite grid, the
posterior *on the grid* is exact in closed form, and it depends on the data only through the
number ``n_z`` and the sum ``s_z`` of the observations at each grid point (``n`` observations
at ``z`` with mean ``ȳ`` are one observation ``ȳ`` with variance ``σ²/n``). With ``K`` the
``(G, G)`` kernel matrix of the grid, ``c_z = √n_z / σ`` (0 where unobserved) and
``b_z = s_z / (σ √n_z)``,

    B = I + diag(c) K diag(c),    μ = K diag(c) B⁻¹ b,    Σ = K − K diag(c) B⁻¹ diag(c) K,

(Rasmussen & Williams 2006, Algorithm 3.1's ``B = I + W^½ K W^½``, here with ``W = diag(n)/σ²``),
which is the textbook ``μ = k_*ᵀ (K_XX + σ²I)⁻¹ y``, ``Σ = K_** − k_*ᵀ (K_XX + σ²I)⁻¹ k_*`` over
the raw observations (checked against that formula computed with ``np.linalg.inv``, and against
scikit-learn's ``GaussianProcessRegressor`` when installed).
``B ⪰ I``, so its Cholesky factor exists and is well conditioned even where the kernel matrix
itself is numerically singular (the SE kernel with ``ℓ = 5`` on 31 points is), and the cost is
fixed, ``O(G³)``, however many observations there are. Why not a library GP: no scikit-learn or
GPy dependency, the result is exact on the grid, and it is batched — one Cholesky factor
``B = L Lᵀ`` (``numpy.linalg.cholesky``) and one solve with it (``numpy.linalg.solve``) for
every replication at once (SciPy's ``cho_solve`` / ``solve_triangular`` take stacks of
matrices only from SciPy 1.15; the project supports 1.11).

:class:`GridGP` keeps ``n`` and ``s`` of every (replication, arm) and the posterior mean and
variance on the grid (and the covariance when asked), recomputing only the arm pulled.
:func:`sample_root` gives the matrix ``A`` with ``A Aᵀ = Σ`` used to draw joint samples.
"""

from __future__ import annotations

import numpy as np

from impactbandits.oracles.recovering import se_kernel

__all__ = ["GridGP", "grid_posterior", "sample_root"]


# tests/test_recovering.py checks grid_posterior against the textbook formula (np.linalg.inv)
# and against scikit-learn's GaussianProcessRegressor (module docstring).
def grid_posterior(
    kernel: np.ndarray, counts: np.ndarray, sums: np.ndarray, noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean ``(n, G)`` and covariance ``(n, G, G)`` on the grid, for ``n`` independent
    data sets given by their ``counts`` and ``sums`` per grid point (``(n, G)`` each), the prior
    covariance ``kernel (G, G)`` and the noise standard deviation ``noise > 0``: with
    ``B = L Lᵀ`` and ``[V | w] = L⁻¹ [diag(c) K | b]``, ``μ = Vᵀ w`` and ``Σ = K − Vᵀ V``."""
    counts = np.asarray(counts, dtype=np.float64)
    size = kernel.shape[0]
    root = np.sqrt(counts)
    c = root / noise
    b = np.where(counts > 0, np.asarray(sums, dtype=np.float64) / (noise * np.maximum(root, 1.0)),
                 0.0)  # fmt: skip
    left = c[:, :, None] * kernel[None, :, :]  # diag(c) K
    factor = np.linalg.cholesky(left * c[:, None, :] + np.eye(size))  # B = I + diag(c) K diag(c)
    solved = np.linalg.solve(factor, np.concatenate((left, b[:, :, None]), axis=2))
    v, w = solved[:, :, :size], solved[:, :, size]
    vt = np.swapaxes(v, 1, 2)
    return (vt @ w[:, :, None])[:, :, 0], kernel[None, :, :] - vt @ v


def sample_root(cov: np.ndarray) -> np.ndarray:
    """``A`` with ``A Aᵀ = cov`` for every matrix of the stack ``(..., G, G)``: the symmetric
    eigen-decomposition with negative rounding-level eigenvalues set to 0 (a posterior
    covariance may be numerically singular, so no Cholesky factor need exist)."""
    eigenvalues, vectors = np.linalg.eigh(cov)
    return vectors * np.sqrt(np.maximum(eigenvalues, 0.0))[..., None, :]


class GridGP:
    """GP posteriors of ``arms`` arms in each of ``rows`` replications on ``0 … z_max``: prior
    mean 0, SE kernel (``lengthscale``, ``variance``), Gaussian noise ``noise``. :attr:`mean`
    and :attr:`var` are ``(R, K, G)``; :attr:`cov` ``(R, K, G, G)`` when ``full_cov``."""

    def __init__(
        self,
        rows: int,
        arms: int,
        z_max: int,
        lengthscale: float,
        variance: float,
        noise: float,
        full_cov: bool,
    ) -> None:
        self.kernel = se_kernel(z_max, lengthscale, variance)
        self.noise = float(noise)
        size = self.kernel.shape[0]
        self.counts = np.zeros((rows, arms, size))
        self.sums = np.zeros((rows, arms, size))
        self.mean = np.zeros((rows, arms, size))
        self.var = np.tile(np.diag(self.kernel).copy(), (rows, arms, 1))
        self.cov = np.tile(self.kernel, (rows, arms, 1, 1)) if full_cov else None
        self._rows = np.arange(rows)

    def observe(self, arms: np.ndarray, z: np.ndarray, y: np.ndarray) -> None:
        """Add one observation ``y[r]`` of arm ``arms[r]`` at ``z[r]`` in every replication and
        recompute those arms' posteriors."""
        rows = self._rows
        self.counts[rows, arms, z] += 1.0
        self.sums[rows, arms, z] += y
        mean, cov = grid_posterior(
            self.kernel, self.counts[rows, arms], self.sums[rows, arms], self.noise
        )
        self.mean[rows, arms] = mean
        self.var[rows, arms] = np.diagonal(cov, axis1=1, axis2=2)
        if self.cov is not None:
            self.cov[rows, arms] = cov
