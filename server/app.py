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
from .api import compile, evaluate, examples, exercises, health, language, learned, limits, share, train
from .bodies import RequestBody
from .drain import Drain, DrainRequests
from .metrics import Metrics, RequestMetrics
from .responses import SendLimits
from .security import SecurityHeaders
from .services import close_services, make_services
from .settings import Settings
from .store_base import StoreFull, StoreUnavailable

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
    from ..engine.exercises import CheckLimits, load_catalog

    catalog, problems = load_catalog(settings.exercises_dirs, CheckLimits(seconds=settings.check_seconds))
    if problems:
        raise ExercisesRefused(problems)
    return catalog


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        svc = make_services(settings)
        app.state.services = svc
        await asyncio.gather(svc.pool.start(), svc.heavy.start())
        svc.jobs.fill_spares()
        if settings.store:   # a shared store: do the replicas agree on its cap?
            from .course.agreement import check_store

            app.state.store_agreement = await asyncio.to_thread(check_store, svc.store, settings)
        if settings.redis and not settings.broker:   # live workers in its Redis: was --broker forgotten?
            from .course.agreement import start_check

            app.state.agreement_check = start_check(settings)
        # the server's long-lived objects (app, routes, models) never need collecting: freeze them, and
        # collect the young generation less often, so that no request waits for a long collection
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 50, 100)
        try:
            yield
        finally:
            await close_services(svc)

    app = FastAPI(
        title="rasplay", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
        description="A visual playground for RASP: evaluate programs, analyse their layers and heads, "
                    "browse examples and share links. Errors are 4xx with "
                    '`{"error": {"kind", "message", "line"?, "col"?}}`.',
    )
    app.state.settings = settings
    app.state.drain = Drain(settings.shutdown_seconds)   # begun by the server at SIGTERM (serve.py)
    app.state.metrics = Metrics()
    app.state.exercises = load_exercises(settings)
    errors.install(app)
    install_storage_errors(app)
    web = install_routes(app)
    declare_limits(app, settings)
    install_middleware(app, settings, web)
    return app


def install_routes(app: FastAPI):
    """The API routers under /api/v1 (unknown API paths JSON 404/405), short links, the API reference, the
    embedded page; the app's files at / come last (returned: the routes above serve pages through it)."""
    api_routers = (evaluate.router, compile.router, examples.router, exercises.router, share.router, train.router,
                   health.router, language.router, limits.router, learned.router)
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

    web = assets.install(app, WEB_DIR)   # the app's files at / (after every other route)
    return web


def install_middleware(app: FastAPI, settings: Settings, web) -> None:
    """CORS (when origins are given), the request body's limits, compression; security headers go around
    everything, even Starlette's own error middleware (so a 500 has them too); around them, answers
    leave in chunks a client must take in time (server/responses.py)."""
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"])
    app.add_middleware(RequestBody, max_bytes=settings.max_body_bytes, seconds=settings.body_seconds)
    app.add_middleware(DrainRequests, drain=app.state.drain)
    # inside compression: it reads the reasons of 429s and 503s in their JSON bodies
    app.add_middleware(RequestMetrics, metrics=app.state.metrics, access_log=settings.access_log,
                       prefix=API_PREFIX)
    assets.compression_middleware(app)
    build_stack = app.build_middleware_stack

    def build_with_limits():
        app.state.send_limits = SendLimits(SecurityHeaders(build_stack(), embed_origins=settings.embed_origins),
                                           settings.send_seconds)
        return app.state.send_limits
    app.build_middleware_stack = build_with_limits
