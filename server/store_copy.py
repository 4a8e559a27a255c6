"""`rasplay store copy --from STORE --to STORE`: every link and model of one store into another (SQLite
to PostgreSQL, typically), then both sides counted. Exit 0 only when every id of the source is in the
target with the same text; rows already in the target are kept (copying twice adds nothing)."""
from __future__ import annotations

import sys
from pathlib import Path

from .migrations import TABLES
from .store import StoreError, is_database_url, open_store


def _open(location: str, must_exist: bool):
    if not is_database_url(location):
        path = Path(location)
        file = path if path.is_file() else path / "links.sqlite3"
        if must_exist and not file.is_file():
            raise StoreError(f"no store at {location} (a data directory with links.sqlite3, an SQLite file or a "
                             "postgresql://... URL)")
    return open_store(location, Path("."))


def copy_store(source: str, target: str, out=sys.stdout) -> int:
    try:
        src = _open(source, must_exist=True)
        dst = _open(target, must_exist=False)
    except (StoreError, SystemExit) as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    missing = 0
    try:
        print(f"from {src.describe()}\nto   {dst.describe()}", file=out)
        for table in TABLES:
            rows = src.export_rows(table)
            added = dst.import_rows(table, rows)
            there = {row_id: text for row_id, text, _ in dst.export_rows(table)}
            lost = [row_id for row_id, text, _ in rows if there.get(row_id) != text]
            missing += len(lost)
            print(f"{table}: {len(rows)} in the source, {len(there)} in the target ({added} copied now, "
                  f"{len(rows) - added} there already){'' if not lost else f'; {len(lost)} MISSING or different'}",
                  file=out)
            for row_id in lost[:10]:
                print(f"  missing: {row_id}", file=out)
    except StoreError as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    finally:
        src.close()
        dst.close()
    if missing:
        print(f"rasplay: {missing} row(s) of the source are not in the target", file=sys.stderr)
        return 1
    print("every link and model of the source is in the target", file=out)
    return 0
