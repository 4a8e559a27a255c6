"""The server put together and run (what `rasplay serve` does, cli/serve.py): the store checked and
migrated before serving, the app made (teachers' exercises checked), uvicorn with rasplay's HTTP
protocol (connections.py), and one line saying where it serves once the port is bound."""
from __future__ import annotations

import sys

from .settings import Settings


def problem(settings: Settings) -> str | None:
    """A setting that cannot work, said in one line (before anything starts)."""
    from .store import is_database_url

    if settings.store and not is_database_url(settings.store):
        return (f"--store takes a postgresql://... URL (got {settings.store.split('://')[0]!r}); without it the "
                "store is SQLite in --data-dir")
    if settings.broker:
        try:
            import celery  # noqa: F401
            import redis  # noqa: F401
        except ImportError as e:
            return f"--broker needs the course extra ({e}): pip install 'rasplay[course]'"
    return None


def make_app(settings: Settings):
    """The app, or the exit code after saying what stops it (a damaged or unreachable store, refused
    exercise files)."""
    from .app import ExercisesRefused, create_app
    from .store import StoreCorrupt, StoreUnavailable, open_store

    try:   # a damaged or unreachable store: one clear line, before serving (migrations are applied here)
        open_store(settings.store, settings.data_dir, settings.max_store_bytes).close()
    except (StoreCorrupt, StoreUnavailable) as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    try:
        app = create_app(settings)
    except ExercisesRefused as e:
        for refused in e.problems:
            print(f"rasplay: {refused}", file=sys.stderr)
        print(f"rasplay: {len(e.problems)} exercise file(s) refused; fix them (docs/exercises.md) or move them "
              "out of the folder", file=sys.stderr)
        return 2
    if settings.exercises_dirs:
        print(f"exercises: {len(app.state.exercises.exercises)} "
              f"({', '.join(map(str, settings.exercises_dirs))} checked)", flush=True)
    return app


def serve(settings: Settings) -> int:
    import uvicorn

    from .clients import proxies
    from .connections import protocol
    from .logs import configure

    refused = problem(settings)
    if refused:
        print(f"rasplay: {refused}", file=sys.stderr)
        return 1
    app = make_app(settings)
    if isinstance(app, int):
        return app
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    banner = f"rasplay is serving at http://{host}:{settings.port}/  (API docs: /docs; data: {settings.data_dir})"

    class AnnouncingServer(uvicorn.Server):
        """Prints where rasplay serves only once the port is bound (a port in use prints uvicorn's error)."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                print(banner, flush=True)

        async def shutdown(self, sockets=None) -> None:
            app.state.drain.begin()   # requests in flight: settings.shutdown_seconds, then a 503 (drain.py)
            await super().shutdown(sockets)

    http = protocol(settings.header_seconds, settings.client_connections,
                    proxies(settings.trusted_proxies, settings.proxy_header), settings.proxy_keep_alive_seconds)
    log_config = configure(settings.log_level, settings.log_json, settings.access_log)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level, http=http,
                            ws="none", access_log=False, proxy_headers=False, log_config=log_config,
                            timeout_graceful_shutdown=settings.shutdown_seconds + 5)
    server = AnnouncingServer(config)
    server.run()
    return 0 if server.started else 1
