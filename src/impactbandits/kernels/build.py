"""Build the compiled loops ahead of time: ``python -m impactbandits.kernels.build``.

Compiles every entry point of :mod:`impactbandits.kernels.signatures` (the numba functions of
:mod:`impactbandits.kernels.loops`, :mod:`~impactbandits.kernels.srum` and
:mod:`~impactbandits.kernels.fewa`, with everything they call) for exactly the argument types
listed there, with numba's ahead-of-time compiler (``numba.pycc``), into the extension module
``impactbandits/kernels/_aot`` plus the stamp :data:`~impactbandits.kernels.aot.STAMP`
(:mod:`impactbandits.kernels.aot` says how they are used). Needs numba and a C compiler; takes
about a minute. Does nothing if the module is up to date (``--force`` rebuilds).

The compilation runs in a child process with an empty numba cache, so that no function cached
on disk from an older source ends up in the module. ``numba.pycc`` has been "pending
deprecation" since numba 0.57 without a replacement; if it goes, this build fails with a clear
message and the library keeps using numba's JIT, which compiles the same source.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from impactbandits.kernels import aot
from impactbandits.kernels.signatures import ENTRIES, Arg

__all__ = ["main"]

_HERE = Path(__file__).resolve().parent
_SHIM = _HERE / "aot_shim.c"


def _numba_type(arg: Arg, readonly: bool) -> object:
    from numba import types

    dtype = getattr(types, arg.dtype)
    if arg.ndim == 0:
        return dtype
    return types.Array(dtype, arg.ndim, arg.layout, readonly=readonly)


def compile_into(directory: Path) -> Path:
    """Compile the module into ``directory`` (in this process); the path of the file."""
    import importlib

    from numba.core.errors import NumbaPendingDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba import types
        from numba.pycc import CC
        from numba.pycc import compiler as pycc_compiler

    class _ReleasingTheGil(pycc_compiler.Flags):  # type: ignore[misc]
        """pycc's compilation flags, with the GIL released around each call, as the JIT's
        ``@njit(nogil=True)`` dispatchers do: threads of one process (a Dask worker with
        several threads) then run kernels side by side. This child process only."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = _ReleasingTheGil

    class _WithShim(CC):  # type: ignore[misc]
        def _get_mixin_sources(self) -> list[str]:
            return [*super()._get_mixin_sources(), str(_SHIM)]

    cc = _WithShim(aot.MODULE.rsplit(".", 1)[1])
    cc.output_dir = str(directory)
    cc.target_cpu = "host"  # as numba's JIT compiles (the stamp records the CPU)
    for name, entry in ENTRIES.items():
        function = getattr(importlib.import_module(f"impactbandits.kernels.{entry.module}"),
                           entry.function)  # fmt: skip
        args = [_numba_type(arg, readonly=not arg.writes) for arg in entry.args]
        returns = types.void if entry.returns is None else _numba_type(entry.returns, False)
        cc.export(name, returns(*args))(function.py_func)
    cc.compile()
    return directory / cc.output_file


def _cause(stderr: str) -> str:
    """The exception line of a failed build's traceback (a compiler's own message may follow
    it over several lines), else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b", line)]
    return (raised or lines or ["no output"])[-1]


def _build(force: bool) -> int:
    state = aot.status()
    if state.usable and not force:
        aot.STAMP.touch()  # for make: the stamp is newer than the sources it was checked against
        print(f"impactbandits kernels: up to date ({aot.STAMP.with_suffix('').name})")
        return 0
    start = time.perf_counter()
    stamp = aot.fingerprint()  # of the sources the child process is about to compile
    with tempfile.TemporaryDirectory(prefix="impactbandits-aot-") as scratch:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(scratch) / "numba-cache")}
        out = Path(scratch) / "out"
        out.mkdir()
        code = (
            "import sys; from pathlib import Path; "
            "from impactbandits.kernels.build import compile_into; "
            "print(compile_into(Path(sys.argv[1])))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            print(
                f"impactbandits kernels: the ahead-of-time build failed ({_cause(done.stderr)});"
                " numba's JIT will be used (the same numbers, more memory and start-up time)",
                file=sys.stderr,
            )
            return 1
        built = Path(done.stdout.strip().splitlines()[-1])
        target = _HERE / built.name
        aot.STAMP.unlink(missing_ok=True)  # no stamp until the new module is in place
        shutil.copy2(built, target.with_suffix(".tmp"))
        os.replace(target.with_suffix(".tmp"), target)
        aot.STAMP.write_text(json.dumps(stamp, indent=1) + "\n")
    print(
        f"impactbandits kernels: built {target.name} in {time.perf_counter() - start:.0f} s "
        f"({len(ENTRIES)} entry points)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m impactbandits.kernels.build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--check", action="store_true", help="only say whether the module is usable (exit 1 if not)"
    )
    options = parser.parse_args(argv)
    if options.check:
        state = aot.status()
        print(f"impactbandits kernels: {state.reason}")
        return 0 if state.usable else 1
    return _build(options.force)


if __name__ == "__main__":
    sys.exit(main())
