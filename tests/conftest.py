"""Shared fixtures: small specs and helpers to run them."""

from __future__ import annotations

import pytest

from impactbandits import ExperimentSpec


def small_spec(**changes) -> ExperimentSpec:
    data = dict(
        name="small",
        environments=[
            {"kind": "bernoulli", "label": "b2", "means": [0.3, 0.7]},
            {"kind": "gaussian", "label": "g3", "n_arms": 3, "sigma": 0.5},
        ],
        policies=[
            {"kind": "ucb1"},
            {"kind": "exp3"},
            {"kind": "etc"},
            {"kind": "epsilon-greedy"},
        ],
        horizons=[20, 50, 120],
        seeds=6,
        checkpoints=8,
    )
    data.update(changes)
    return ExperimentSpec.create(**data)


@pytest.fixture
def spec() -> ExperimentSpec:
    return small_spec()


@pytest.fixture(params=["aot", "jit"])
def kernel_backend(request, monkeypatch) -> str:
    """Run the test once with the loops built ahead of time and once with numba's JIT
    (``IMPACTBANDITS_KERNELS``); skipped where that one is not there (``make test`` builds the
    ahead-of-time module first, so there it always runs)."""
    from impactbandits.kernels import aot

    if request.param == "aot" and not aot.current().usable:
        pytest.skip(f"ahead-of-time kernels {aot.current().reason}")
    return _kernels(monkeypatch, request.param)


@pytest.fixture
def jit_backend(monkeypatch) -> str:
    """numba's JIT only: for steps no build holds (a user's)."""
    return _kernels(monkeypatch, "jit")


def _kernels(monkeypatch, choice: str) -> str:
    from importlib.util import find_spec

    from impactbandits import kernels

    if choice == "jit" and find_spec("numba") is None:
        pytest.skip("numba not installed")
    monkeypatch.setenv(kernels.KERNELS_ENV, choice)
    assert kernels.backend() == choice
    return choice
