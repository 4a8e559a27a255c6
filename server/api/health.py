"""GET /health."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter, Request

from ..schemas import Health
from .common import torch_available

router = APIRouter(tags=["health"])
# not limits: where the server listens and logs, paths, and URLs with passwords
HIDDEN = {"host", "port", "log_level", "data_dir", "cors_origins", "exercises_dirs", "store", "redis", "broker"}


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
