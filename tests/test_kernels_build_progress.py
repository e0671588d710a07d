"""The ahead-of-time build says what it is doing: one line per entry as the compiling child
starts on it, a line when it links the module, and a line saying it is still working after each
:data:`~impactbandits.kernels.build.HEARTBEAT` of silence (numba optimising a large module).
The child here is a stand-in that writes the same progress lines with pauses between them."""

from __future__ import annotations

import os
import sys
import textwrap

from impactbandits.kernels import build

CHILD = textwrap.dedent(f"""
    import sys, time
    P = {build._PROGRESS!r}
    time.sleep(0.5)  # importing: silent
    for i, name in enumerate(["loop_a", "loop_b"], 1):
        print(f"{{P}} {{i}}/2 {{name}}", file=sys.stderr, flush=True)
        time.sleep(0.05)
    print(f"{{P}} 2/2", file=sys.stderr, flush=True)
    time.sleep(0.7)  # optimising and linking: silent
    print("numba says something", file=sys.stderr, flush=True)
    print('["out.so", ["loop_a", "loop_b"]]')
""")


def test_the_build_reports_each_entry_and_never_stays_silent(monkeypatch, capsys):
    monkeypatch.setattr(build, "HEARTBEAT", 0.2)
    status, stdout, stderr = build._run_reporting([sys.executable, "-c", CHILD], dict(os.environ))
    shown = capsys.readouterr().out.splitlines()
    assert status == 0
    assert stdout.strip() == '["out.so", ["loop_a", "loop_b"]]'
    assert stderr == "numba says something\n"  # what is not progress is kept for the error
    assert "  [1/2] loop_a" in shown and "  [2/2] loop_b" in shown
    assert "  optimising and linking the module ..." in shown
    linking = shown.index("  optimising and linking the module ...")
    still = [line for line in shown if line.startswith("  ... still ")]
    assert any("importing" in line for line in still[:1]), shown  # before the first entry
    assert any("optimising and linking" in line for line in shown[linking + 1 :]), shown
    assert shown.index("  [1/2] loop_a") < shown.index("  [2/2] loop_b") < linking


def test_a_failing_child_gives_its_status_and_its_error():
    code = "import sys; print('boom', file=sys.stderr); sys.exit(3)"
    status, stdout, stderr = build._run_reporting([sys.executable, "-c", code], dict(os.environ))
    assert (status, stdout, stderr) == (3, "", "boom\n")
    assert build._cause(stderr) == "boom"
