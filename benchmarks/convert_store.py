"""Rewrite the JSON payloads of a results store as binary blobs, in place (Store.migrate), then
VACUUM it; prints the rows rewritten, the time taken and the file size before and after.

Work on a copy: .venv/bin/python benchmarks/convert_store.py runs/copy-of-run-dir
"""

from __future__ import annotations

import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

from impactbandits.experiments.store import STORE_FILE, Store


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: convert_store.py RUN_DIR")
    run_dir = Path(sys.argv[1])
    db_path = run_dir / STORE_FILE
    before = db_path.stat().st_size
    start = time.perf_counter()
    with Store.open_existing(run_dir) as store:
        rows = store.migrate()
    converted = time.perf_counter() - start
    with closing(sqlite3.connect(db_path)) as db:
        db.execute("VACUUM")
    after = db_path.stat().st_size
    print(
        f"{rows} payloads rewritten in {converted:.1f} s; "
        f"{before / 2**20:.0f} MB -> {after / 2**20:.0f} MB after VACUUM"
    )


if __name__ == "__main__":
    main()
