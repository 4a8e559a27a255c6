"""GET /health (liveness, with the server's limits and figures), /live, /ready (readiness: server/readiness.py)
and /metrics (Prometheus, at the root: server/metrics.py)."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from .. import readiness
from ..metrics import CONTENT_TYPE
from ..schemas import Health, Live, Ready
from .common import torch_available

router = APIRouter(tags=["health"])
metrics_router = APIRouter()
# not limits: where the server listens and logs, paths, and URLs with passwords
HIDDEN = {"host", "port", "log_level", "log_format", "access_log", "data_dir", "cors_origins", "exercises_dirs", "store", "redis", "broker"}


def _version() -> str:
    try:
        return version("rasplay")
    except PackageNotFoundError:
        return "dev"


@router.get("/health", response_model=Health, summary="Is the server up, and with which limits")
async def health(request: Request):
    svc = request.app.state.services
    settings = svc.settings
    limits = settings.model_dump(mode="json", exclude=HIDDEN)
    return {"status": "ok", "version": _version(), "workers": svc.pool.alive(), "limits": limits,
            "training": {**svc.jobs.stats(), "available": bool(settings.broker) or torch_available()}, "cache": svc.cache.stats(),
            "pools": {"evaluation": svc.pool.stats(), "heavy": svc.heavy.stats()},
            "assets": request.app.state.assets.stats(),
            "responses": {"sending": request.app.state.send_limits.sending,
                          "started": request.app.state.send_limits.started, **svc.outgoing.stats()}}


@router.get("/live", response_model=Live, summary="Liveness: the server answers (nothing else is checked)")
async def live():
    return {"status": "ok"}


@router.get("/ready", response_model=Ready, responses={503: {"model": Ready, "description": "not ready: `error` "
                                                                  "says why, `checks` has each dependency"}},
            summary="Readiness: whether this replica can serve now, dependency by dependency")
async def ready(request: Request):
    """The store, the broker and its workers per queue (with --broker), this server's own worker processes
    (without), the shared write buckets (with --redis), training, and whether the server is stopping. A 503
    when a required check fails (training and --redis are reported, not required)."""
    ok, checks = await readiness.check(request.app)
    if ok:
        return {"status": "ready", "checks": checks}
    body = {"status": "unavailable", "checks": checks,
            "error": {"kind": "unavailable", "message": "not ready: " + readiness.reasons(checks)}}
    return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})


@metrics_router.get("/metrics", include_in_schema=False)
async def metrics(request: Request):
    """Prometheus' text format (docs/deploy.md, "Health, metrics and logs")."""
    return Response(await request.app.state.metrics.render(request.app), media_type=CONTENT_TYPE)
