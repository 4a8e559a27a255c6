"""`rasplay` as its next release would run, for the rolling-upgrade tests: the same code with one more store
migration (a table of notes beside the links), compatible with this release or not. Run as a script:
`python tests/support/newer_rasplay.py compatible|incompatible serve ...` (the rest is `rasplay`'s command
line)."""
from __future__ import annotations

import sys

from rasplay.server import migrations


def add_migration(compatible: bool) -> int:
    """Declare the next migration (as the next release would); its version."""
    version = migrations.LATEST + 1
    migrations.MIGRATIONS[version] = migrations.Migration(
        "notes beside links (a test's next release)",
        {"sqlite": ["CREATE TABLE IF NOT EXISTS notes (link TEXT PRIMARY KEY, note TEXT)"],
         "postgresql": ["CREATE TABLE IF NOT EXISTS notes (link TEXT PRIMARY KEY, note TEXT)"]},
        oldest=migrations.LATEST if compatible else None)
    migrations.LATEST = version
    return version


if __name__ == "__main__":
    add_migration(sys.argv[1] == "compatible")
    from rasplay.cli.main import main

    sys.exit(main(sys.argv[2:]))
