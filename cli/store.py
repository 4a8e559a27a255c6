"""`rasplay store copy --from STORE --to STORE`: move the links and models of a store (e.g. from SQLite to
PostgreSQL), then count both sides (server/store_copy.py)."""
from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("store", help="move a store of links and models (e.g. from SQLite to PostgreSQL)")
    store_sub = p.add_subparsers(dest="store_command", required=True)
    q = store_sub.add_parser("copy", help="copy every link and model from one store to another, then count both sides")
    q.add_argument("--from", dest="source", required=True, metavar="STORE",
                   help="a data directory (its links.sqlite3), an SQLite file or a postgresql://... URL")
    q.add_argument("--to", dest="target", required=True, metavar="STORE", help="the same kinds as --from")
    q.set_defaults(func=run)


def run(args) -> int:
    from ..server.store_copy import copy_store

    return copy_store(args.source, args.target)

