"""``python -m impactbandits.cli``: the command line, as the console script runs it (kept working
since ``impactbandits.cli`` became a package; ``python -m impactbandits`` is the documented
form, and also keeps the current directory off ``sys.path``)."""

from impactbandits.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
