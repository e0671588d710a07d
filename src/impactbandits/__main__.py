"""``python -m impactbandits``: the command line, exactly as the console script runs it.

``python -m`` puts the current directory first on ``sys.path``; the console script does not.
It is taken off before anything else is imported, so that a folder you happen to be in (a
downloaded run directory, say) cannot supply modules: code a spec names is found on
``PYTHONPATH`` (``PYTHONPATH=. python -m impactbandits run spec.toml``) or installed, as for
the console script.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from impactbandits.cli import main  # (imported once the path is safe)

main()
