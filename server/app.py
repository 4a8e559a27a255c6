"""The FastAPI application factory: API routers under /api/v1, short links, the browser app in web/
(versioned, cached and compressed by assets.py), the API reference at /docs from local assets, security
headers, limits and stores."""
from __future__ import annotations

import asyncio
import errno
import gc
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute

from . import assets, errors
from .api import compile, evaluate, examples, exercises, health, language, share, train
from .api.deps import Services
from .bodies import RequestBody
from .cache import ResponseCache
from .drain import Drain, DrainRequests
from .metrics import Metrics, RequestMetrics
from .training_jobs import JobManager
from .security import SecurityHeaders
from .settings import Settings
from .quotas import ConcurrencyLimit
from .quotas_shared import rate_limit
from .responses import Outgoing, SendLimits
from .store import StoreFull, StoreUnavailable, open_store
from .process_pool import WorkerPool

WEB_DIR = Path(str(resources.files("rasplay.web")))
API_PREFIX = "/api/v1"


def install_storage_errors(app: FastAPI) -> None:
    """A full disk or store is a 507, any other failure to write a 503: clear messages, never a 500."""

    @app.exception_handler(StoreFull)
    async def store_full(request: Request, exc: StoreFull):
        return errors.error_response(507, "storage_full", f"{exc}; new links and models cannot be stored now "
                                                          "(everything else still works)")

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(request: Request, exc: StoreUnavailable):
        return errors.error_response(503, "unavailable", f"{exc}; try again later", headers={"Retry-After": "30"})

    @app.exception_handler(OSError)
    async def os_error(request: Request, exc: OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return errors.error_response(507, "storage_full", "the server's disk is full; try again later")
        errors.log.exception("unexpected error on %s", request.url.path)
        return errors.error_response(503, "unavailable", f"the server could not do this ({exc.strerror or exc}); "
                                                         "try again later", headers={"Retry-After": "30"})


# request fields and the limits (Settings attributes) that bound them, declared in the OpenAPI schema
_SCHEMA_LIMITS = {
    "EvaluateRequest": {"source": ("maxLength", "max_source_chars"), "inputs": ("maxItems", "max_inputs")},
    "AnalyzeRequest": {"source": ("maxLength", "max_source_chars")},
    "CompileRequest": {"source": ("maxLength", "max_source_chars"), "max_len": ("maximum", "compile_max_len")},
    "RunRequest": {"inputs": ("maxItems", "max_inputs")},
    "TrainRequest": {"source": ("maxLength", "max_source_chars")},
    "OverlayRequest": {"source": ("maxLength", "max_source_chars")},
}


def declare_limits(app: FastAPI, settings: Settings) -> None:
    """The OpenAPI schema states this server's limits (maxLength, maxItems, maximum), so clients and
    fuzzers see them; the server still answers a request over a limit with a clear 422 `limit`."""
    build = app.openapi

    def openapi():
        if app.openapi_schema is None:
            schema = build()
            models = schema.get("components", {}).get("schemas", {})
            for model, fields in _SCHEMA_LIMITS.items():
                props = models.get(model, {}).get("properties", {})
                for name, (keyword, attribute) in fields.items():
                    if name in props:
                        props[name][keyword] = getattr(settings, attribute)
            eval_props = models.get("EvaluateRequest", {}).get("properties", {})
            for item in eval_props.get("inputs", {}).get("items", {}).get("anyOf", []):
                if item.get("type") in ("string", "array"):
                    item["maxLength" if item["type"] == "string" else "maxItems"] = settings.max_input_length
        return app.openapi_schema
    app.openapi = openapi


class ExercisesRefused(Exception):
    """A teacher's exercise folder holds files that do not parse or whose reference fails its own check."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def load_exercises(settings: Settings):
    """The shipped exercises and the teacher's folders, validated now (before the server starts):
    any refused file stops the server with every problem listed."""
    from rasplay.engine.exercises import CheckLimits, load_catalog

    catalog, problems = load_catalog(settings.exercises_dirs, CheckLimits(seconds=settings.check_seconds))
    if problems:
        raise ExercisesRefused(problems)
    return catalog


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        memory = dict(memory_bytes=settings.worker_memory, keep_bytes=settings.worker_keep,
                      share=settings.client_workers, reply_bytes=settings.max_response_bytes)
        if settings.broker:   # training and compiler work through Celery, run by `rasplay worker` (celery_app.py)
            from .heavy_queue import RemotePool
            from .training_board import SharedJobs
            heavy = RemotePool(settings.broker, settings.compile_seconds, settings.queue_seconds)
            jobs = SharedJobs(settings.broker, settings.train_queue, settings.client_jobs, settings.train_seconds,
                              orphan_after=settings.train_orphan_seconds, memory_bytes=settings.train_memory)
        else:
            heavy = WorkerPool(settings.heavy_pool_size, settings.compile_seconds, settings.queue_seconds,
                               depth=1, name="rasplay-heavy", **memory)
            jobs = JobManager("rasplay.server.training_run.run", settings.train_jobs, settings.train_queue,
                              settings.train_seconds, memory_bytes=settings.train_memory,
                              workroot=settings.data_dir / "jobs",
                              warm=settings.train_warm if train.torch_available() else 0,   # no torch: no spares
                              per_client=settings.client_jobs, orphan_after=settings.train_orphan_seconds)
        svc = Services(settings=settings,
                       pool=WorkerPool(settings.workers, settings.eval_seconds, settings.queue_seconds,
                                       name="rasplay-eval", **memory),
                       heavy=heavy, store=open_store(settings.store, settings.data_dir, settings.max_store_bytes),
                       cache=ResponseCache(), jobs=jobs,
                       heavy_per_client=ConcurrencyLimit(settings.client_heavy, "compiler requests"),
                       writes_per_client=rate_limit(settings.redis, settings.writes_per_minute, "new links and models"),
                       checks_per_client=rate_limit(settings.redis, settings.checks_per_minute, "exercise checks"),
                       outgoing=Outgoing(settings.client_pending_bytes, settings.data_dir))
        app.state.services = svc
        await asyncio.gather(svc.pool.start(), svc.heavy.start())
        svc.jobs.fill_spares()
        # the server's long-lived objects (app, routes, models) never need collecting: freeze them, and
        # collect the young generation less often, so that no request waits for a long collection
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 50, 100)
        try:
            yield
        finally:
            await svc.jobs.close()
            await svc.pool.close()
            await svc.heavy.close()
            svc.store.close()

    app = FastAPI(
        title="rasplay", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
        description="A visual playground for RASP: evaluate programs, analyse their layers and heads, "
                    "browse examples and share links. Errors are 4xx with "
                    '`{"error": {"kind", "message", "line"?, "col"?}}`.',
    )
    app.state.settings = settings
    app.state.drain = Drain(settings.shutdown_seconds)   # begun by the server at SIGTERM (cli/serve.py)
    app.state.metrics = Metrics()
    app.state.exercises = load_exercises(settings)
    errors.install(app)
    install_storage_errors(app)
    api_routers = (evaluate.router, compile.router, examples.router, exercises.router, share.router, train.router,
                   health.router, language.router)
    for router in api_routers:
        app.include_router(router, prefix=API_PREFIX)
    api_routes = [r for router in api_routers for r in router.routes if isinstance(r, APIRoute)]
    app.include_router(share.redirects)
    app.include_router(health.metrics_router)

    @app.api_route(API_PREFIX + "/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS",
                                                         "TRACE", "CONNECT"], include_in_schema=False)
    async def api_fallback(request: Request, rest: str):
        """Unknown API paths are JSON 404s, and known paths with the wrong method JSON 405s
        (rather than falling through to the static files)."""
        path = request.url.path
        for route in api_routes:
            if route.path_regex.match(path[len(API_PREFIX):]):
                allowed = ", ".join(sorted(route.methods))
                return errors.error_response(405, "method_not_allowed",
                                             f"{request.method} is not allowed on {path}; use {allowed}",
                                             headers={"Allow": allowed})
        return errors.error_response(404, "not_found", f"nothing at {path}")

    @app.get("/docs", include_in_schema=False)
    async def api_reference(request: Request):
        """The API reference: Swagger UI from web/vendor/swagger-ui (offline, under the page's CSP)."""
        return await web.page(request, "apidocs.html")

    @app.get("/redoc", include_in_schema=False)
    async def redoc():
        return RedirectResponse("/docs", status_code=308)

    @app.api_route("/embed", methods=["GET", "HEAD"], include_in_schema=False)
    async def embed(request: Request):
        return await web.page(request, "index.html")

    declare_limits(app, settings)
    web = assets.install(app, WEB_DIR)   # the app's files at / (after every other route)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"])
    app.add_middleware(RequestBody, max_bytes=settings.max_body_bytes, seconds=settings.body_seconds)
    app.add_middleware(DrainRequests, drain=app.state.drain)
    # inside compression: it reads the reasons of 429s and 503s in their JSON bodies
    app.add_middleware(RequestMetrics, metrics=app.state.metrics, access_log=settings.access_log,
                       prefix=API_PREFIX)
    assets.compression_middleware(app)
    # security headers go around everything, even Starlette's own error middleware (so a 500 has them too);
    # around them, answers leave in chunks a client must take in time (server/responses.py)
    build_stack = app.build_middleware_stack

    def build_with_limits():
        app.state.send_limits = SendLimits(SecurityHeaders(build_stack(), embed_origins=settings.embed_origins),
                                           settings.send_seconds)
        return app.state.send_limits
    app.build_middleware_stack = build_with_limits
    return app
