"""`rasplay serve`: the playground and its REST API on one machine (or a replica of a course, with
--store, --redis and --broker); its options are the server's limits (server/settings.py)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="run the playground and its REST API")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default 8000); "
                   "\"serving at\" is printed once it is bound")
    p.add_argument("--data-dir", help="where share links are stored (default ~/.local/share/rasplay)")
    p.add_argument("--workers", type=int, help="evaluation worker processes (default: 2 per core, 2 to 8)")
    p.add_argument("--cors-origin", action="append", help="allow this origin to call the API (repeatable)")
    p.add_argument("--embed-origin", action="append", type=embed_origin, metavar="ORIGIN",
                   help="only this site may frame /embed, e.g. https://course.example.edu (repeatable; "
                        "default: any site; other pages can never be framed)")
    p.add_argument("--eval-seconds", type=float, default=5.0, help="time limit of one evaluation (default 5)")
    p.add_argument("--max-input-length", type=int, default=256, help="tokens per input (default 256)")
    p.add_argument("--max-inputs", type=int, default=16, help="inputs per request (default 16)")
    p.add_argument("--max-source-chars", type=int, default=250_000, help="program size (default 250000)")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20, help="request body size (default 1 MiB)")
    p.add_argument("--train-jobs", type=int, help="training jobs at once (default: one per two cores, "
                   "at least two on two cores: a model and its ablation side by side)")
    p.add_argument("--train-warm", type=int, default=2, help="spare training processes kept started with "
                   "PyTorch loaded, so that a job starts at once (default 2: a model and its ablation; 0: none)")
    p.add_argument("--train-queue", type=int, default=4, help="training jobs that may wait (default 4)")
    p.add_argument("--train-seconds", type=float, default=600, help="time limit of a training job (default 600)")
    p.add_argument("--train-orphan-seconds", type=float, default=30, help="a training job that no page follows (no "
                   "event stream, no status asked) for this long is cancelled: its page was closed (default 30)")
    p.add_argument("--train-memory", default="2GiB",
                   help="memory of a training job: estimated before queueing (422 when over) and enforced (default 2GiB)")
    p.add_argument("--queue-seconds", type=float, default=10.0,
                   help="longest wait for a free worker before a 503 (default 10)")
    p.add_argument("--heavy-workers", type=int,
                   help="worker processes for compile/run/soft study/weights (default: half of --workers, at least 1)")
    p.add_argument("--worker-memory", default="1GiB",
                   help="memory one request may take in a worker, over its idle size (default 1GiB; 422 when over)")
    p.add_argument("--worker-keep", default="256MiB",
                   help="memory a worker may keep in caches between requests (default 256MiB)")
    p.add_argument("--client-heavy", type=int, default=2,
                   help="compiler requests one client address may have running at once (default 2; 0: no limit)")
    p.add_argument("--client-workers", type=int, default=0,
                   help="workers of each pool one client address's requests may hold at once; its other requests "
                        "wait in its own queue, clients take turns (default 0: all the workers but one)")
    p.add_argument("--client-jobs", type=int, default=2,
                   help="training jobs one client address may have queued or running (default 2; never all "
                        "the places: one is always left for others)")
    p.add_argument("--writes-per-minute", type=int, default=60,
                   help="new short links and compiled models per client address per minute (default 60; 0: no limit)")
    p.add_argument("--max-store-bytes", default="1GiB", help="size cap of the store of links and models (default 1GiB)")
    p.add_argument("--store", default=os.environ.get("RASPLAY_STORE"), metavar="URL",
                   help="keep links and models in PostgreSQL at this postgresql://... URL, shared by replicas "
                        "(default: $RASPLAY_STORE, else SQLite in --data-dir; needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--redis", default=os.environ.get("RASPLAY_REDIS"), metavar="URL",
                   help="share the per-client write buckets (--writes-per-minute, --checks-per-minute) with the "
                        "other replicas through Redis at this redis://... URL (default: $RASPLAY_REDIS, else "
                        "this server's own; needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--broker", default=os.environ.get("RASPLAY_BROKER"), metavar="URL",
                   help="run training and compiler work in `rasplay worker` processes through Celery with Redis at "
                        "this redis://... URL, shared by replicas (default: $RASPLAY_BROKER, else in this server; "
                        "needs rasplay[course]; docs/deploy.md)")
    p.add_argument("--trusted-proxy", action="append", type=networks, metavar="ADDRESSES",
                   help="reverse proxies in front of rasplay, e.g. 127.0.0.1,10.0.0.0/8 (repeatable; default: "
                        "$RASPLAY_TRUSTED_PROXY, else none): for their connections the client is the right-most "
                        "address in --proxy-header that is not one of them (docs/security.md)")
    p.add_argument("--proxy-header", choices=["x-forwarded-for", "forwarded"], default="x-forwarded-for",
                   help="the header the trusted proxies write the client's address in (default x-forwarded-for)")
    p.add_argument("--max-response-bytes", default="32MiB",
                   help="size of any one answer, every value counted (default 32MiB; larger is a 422)")
    p.add_argument("--client-pending-bytes", default="128MiB",
                   help="large answers one client address has not read yet, held on disk (default 128MiB; "
                        "more is a 429)")
    p.add_argument("--client-connections", type=int, default=64,
                   help="connections one client address may have open (default 64; more are refused)")
    p.add_argument("--header-seconds", type=float, default=10.0,
                   help="time a request's headers may take to arrive (default 10; then 408 and closed)")
    p.add_argument("--proxy-keep-alive-seconds", type=float, default=130.0,
                   help="idle time after which a trusted proxy's kept-alive connection is closed (default 130: "
                        "above nginx's 60 s and Caddy's 120 s, so the proxy closes it first)")
    p.add_argument("--body-seconds", type=float, default=30.0,
                   help="time a request's body may take to arrive (default 30; then 408)")
    p.add_argument("--send-seconds", type=float, default=30.0,
                   help="time a client may take to read each 64 KiB of an answer (default 30; then closed)")
    p.add_argument("--exercises", action="append", metavar="DIR",
                   help="a folder of .exercise files to offer besides the shipped ones (repeatable); checked at start")
    p.add_argument("--check-seconds", type=float, default=10.0, help="time limit of one exercise check (default 10)")
    p.add_argument("--checks-per-minute", type=int, default=30,
                   help="exercise checks per client address per minute (default 30; 0: no limit)")
    p.add_argument("--log-level", default="warning")
    # operations (docs/deploy.md, "Health, metrics and logs" and "Restarts")
    p.add_argument("--access-log", action="store_true", default=bool(os.environ.get("RASPLAY_ACCESS_LOG")),
                   help="log one line per request: client, method, path, status, milliseconds (default: off, "
                        "or on when $RASPLAY_ACCESS_LOG is set)")
    p.add_argument("--log-format", choices=["text", "json"], default=os.environ.get("RASPLAY_LOG_FORMAT") or "text",
                   help="log lines as text or as one JSON object each; both with UTC timestamps (default: "
                        "$RASPLAY_LOG_FORMAT, else text)")
    p.add_argument("--shutdown-seconds", type=float, default=20.0,
                   help="at SIGTERM, requests in flight get this long to finish; later ones are a 503 (default 20)")
    p.set_defaults(func=run)


def embed_origin(text: str) -> str:
    from rasplay.server.security import check_origin

    try:
        return check_origin(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def networks(text: str) -> str:
    from rasplay.server.clients import parse_networks

    try:
        parse_networks(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def trusted_proxies(args) -> tuple[str, ...]:
    """--trusted-proxy, else $RASPLAY_TRUSTED_PROXY (checked here: a bad value stops the server with one line)."""
    if args.trusted_proxy:
        return tuple(args.trusted_proxy)
    text = os.environ.get("RASPLAY_TRUSTED_PROXY", "").strip()
    try:
        return (networks(text),) if text else ()
    except argparse.ArgumentTypeError as e:
        raise SystemExit(f"rasplay: RASPLAY_TRUSTED_PROXY: {e}") from None


def run(args) -> int:
    import uvicorn

    from rasplay.server.app import create_app
    from rasplay.server.process_pool import default_workers
    from rasplay.server.settings import Settings, default_data_dir, parse_bytes
    from rasplay.server.store import StoreCorrupt, StoreUnavailable, is_database_url, open_store

    try:
        sizes = {name: parse_bytes(getattr(args, name)) for name in
                 ("worker_memory", "worker_keep", "train_memory", "max_store_bytes", "max_response_bytes",
                  "client_pending_bytes")}
    except ValueError as e:
        raise SystemExit(f"rasplay: {e}")
    settings = Settings(
        data_dir=Path(args.data_dir) if args.data_dir else default_data_dir(),
        workers=args.workers or default_workers(),
        eval_seconds=args.eval_seconds, max_input_length=args.max_input_length, max_inputs=args.max_inputs,
        max_source_chars=args.max_source_chars, max_body_bytes=args.max_body_bytes,
        cors_origins=tuple(args.cors_origin or ()), embed_origins=tuple(args.embed_origin or ()),
        train_jobs=args.train_jobs or Settings().train_jobs, train_queue=args.train_queue,
        train_seconds=args.train_seconds, train_orphan_seconds=args.train_orphan_seconds, train_warm=args.train_warm, heavy_workers=args.heavy_workers or 0,
        client_heavy=args.client_heavy, queue_seconds=args.queue_seconds, writes_per_minute=args.writes_per_minute,
        client_jobs=args.client_jobs, client_workers=args.client_workers, checks_per_minute=args.checks_per_minute,
        header_seconds=args.header_seconds, proxy_keep_alive_seconds=args.proxy_keep_alive_seconds, body_seconds=args.body_seconds, send_seconds=args.send_seconds, client_connections=args.client_connections,
        exercises_dirs=tuple(Path(d) for d in args.exercises or ()), check_seconds=args.check_seconds, **sizes,
        store=args.store or None, redis=args.redis or None, broker=args.broker or None,
        trusted_proxies=trusted_proxies(args), proxy_header=args.proxy_header,
        access_log=args.access_log, log_json=args.log_format == "json", shutdown_seconds=args.shutdown_seconds,
    )
    from rasplay.server.logs import configure
    log_config = configure(args.log_level, settings.log_json, settings.access_log)
    if settings.store and not is_database_url(settings.store):
        print(f"rasplay: --store takes a postgresql://... URL (got {settings.store.split('://')[0]!r}); "
              "without it the store is SQLite in --data-dir", file=sys.stderr)
        return 1
    if settings.broker:
        try:
            import celery  # noqa: F401
            import redis  # noqa: F401
        except ImportError as e:
            print(f"rasplay: --broker needs the course extra ({e}): pip install 'rasplay[course]'", file=sys.stderr)
            return 1
    try:   # a damaged or unreachable store: one clear line, before serving (migrations are applied here)
        open_store(settings.store, settings.data_dir, settings.max_store_bytes).close()
    except (StoreCorrupt, StoreUnavailable) as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    from rasplay.server.app import ExercisesRefused
    try:
        app = create_app(settings)
    except ExercisesRefused as e:
        for problem in e.problems:
            print(f"rasplay: {problem}", file=sys.stderr)
        print(f"rasplay: {len(e.problems)} exercise file(s) refused; fix them (docs/exercises.md) or move them "
              "out of the folder", file=sys.stderr)
        return 2
    if args.exercises:
        print(f"exercises: {len(app.state.exercises.exercises)} ({', '.join(args.exercises)} checked)", flush=True)
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    banner = f"rasplay is serving at http://{shown_host}:{args.port}/  (API docs: /docs; data: {settings.data_dir})"

    class AnnouncingServer(uvicorn.Server):
        """Prints where rasplay serves only once the port is bound (a port in use prints uvicorn's error)."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                print(banner, flush=True)

        async def shutdown(self, sockets=None) -> None:
            app.state.drain.begin()   # requests in flight: settings.shutdown_seconds, then a 503 (server/drain.py)
            await super().shutdown(sockets)

    from rasplay.server.clients import proxies
    from rasplay.server.connections import protocol
    http = protocol(settings.header_seconds, settings.client_connections,
                    proxies(settings.trusted_proxies, settings.proxy_header), settings.proxy_keep_alive_seconds)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, http=http, ws="none",
                            access_log=False, proxy_headers=False, log_config=log_config,
                            timeout_graceful_shutdown=settings.shutdown_seconds + 5)
    server = AnnouncingServer(config)
    server.run()
    return 0 if server.started else 1

