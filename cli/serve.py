"""`rasplay serve`: the playground and its REST API on one machine (or a replica of a course, with
--store, --redis and --broker). Its options are the server's settings (server/settings.py: each flag
also read from its RASPLAY_* environment variable); the server is put together in server/serve.py."""
from __future__ import annotations

from .settings_options import add_settings_options, settings_from


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="run the playground and its REST API")
    add_settings_options(p, "serve")
    p.set_defaults(func=run)


def run(args) -> int:
    from rasplay.server.serve import serve

    return serve(settings_from(args, "serve"))
