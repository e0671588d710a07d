"""Without numba, a large sweep says on stderr, in one line, that it runs on the readable loops
(the same numbers at about 3x the CPU); a small sweep, a sweep with the compiled loops switched
off on purpose, and a sweep with numba say nothing.

Each run is the command line in a fresh interpreter in which ``import numba`` fails (as after
a ``pip install --no-deps``, or on a platform without numba's wheels)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from impactbandits.kernels.dispatch import NOTICE_WORK

#: A spec whose planned work (rounds x (replications + the per-round overhead of a batch))
#: reaches NOTICE_WORK: 20,000 rounds of 300 replications.
LARGE = """
name = "large"
horizons = [20000]
seeds = 300
[[environments]]
kind = "bernoulli"
means = [0.2, 0.8]
[[policies]]
kind = "ucb1"
"""
SMALL = LARGE.replace("20000", "50").replace("300", "4")


def _run(tmp_path, spec: str, numba: bool, kernels: str) -> list[str]:
    """stderr lines of ``impactbandits run`` of ``spec`` (serial: this interpreter only)."""
    path = tmp_path / "spec.toml"
    path.write_text(spec, encoding="utf-8")
    code = textwrap.dedent(f"""
        import sys
        if not {numba!r}:
            sys.modules["numba"] = None  # import numba fails; find_spec("numba") is None
        from impactbandits.cli import main
        sys.argv = ["impactbandits", "run", {str(path)!r}, "--out", {str(tmp_path / "run")!r},
                    "--backend", "serial"]
        main()
    """)
    env = {**os.environ, "IMPACTBANDITS_KERNELS": kernels}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stderr
    return result.stderr.splitlines()


def test_the_large_spec_is_large_and_the_small_one_small():
    # the work the runner plans when the loops are not compiled (numba missing)
    import dataclasses
    import tomllib

    from impactbandits.experiments.cells import expand
    from impactbandits.experiments.runner import plan, planned_work
    from impactbandits.experiments.spec import spec_from_mapping

    for text, large in ((LARGE, True), (SMALL, False)):
        spec = spec_from_mapping(tomllib.loads(text))
        cells = [dataclasses.replace(c, compiled=False) for c in expand(spec)]
        work = planned_work(plan(cells, [list(range(spec.seeds))] * len(cells), 1))
        assert (work >= NOTICE_WORK) == large, (spec.name, work)


def test_a_large_sweep_without_numba_says_so_in_one_line(tmp_path):
    # IMPACTBANDITS_KERNELS=jit: not the module built ahead of time (which runs without numba)
    lines = _run(tmp_path, LARGE, numba=False, kernels="jit")
    notices = [line for line in lines if "numba" in line]
    assert len(notices) == 1, lines
    assert notices[0].startswith("warning: numba is not installed: "), notices
    assert "readable" in notices[0] and "pip install numba" in notices[0]


@pytest.mark.parametrize(
    ("spec", "numba", "kernels"),
    [(SMALL, False, "jit"), (LARGE, False, "0"), (LARGE, True, "jit")],
    ids=["small", "switched-off", "with-numba"],
)
def test_no_notice_when_it_does_not_apply(tmp_path, spec, numba, kernels):
    lines = _run(tmp_path, spec, numba=numba, kernels=kernels)
    assert not [line for line in lines if "numba" in line], lines
