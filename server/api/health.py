"""GET /health."""
from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter, Request

from ..schemas import Health
from .common import torch_available

router = APIRouter(tags=["health"])


def _version() -> str:
    try:
        return version("rasplay")
    except PackageNotFoundError:
        return "dev"


@router.get("/health", response_model=Health, summary="Is the server up, and with which limits")
async def health(request: Request):
    svc = request.app.state.services
    settings = svc.settings
    hidden = ("data_dir", "cors_origins", "exercises_dirs", "store", "redis", "broker")   # paths, and URLs with passwords
    limits = {k: v for k, v in asdict(settings).items() if k not in hidden}
    return {"status": "ok", "version": _version(), "workers": svc.pool.alive(), "limits": limits,
            "training": {**svc.jobs.stats(), "available": bool(settings.broker) or torch_available()}, "cache": svc.cache.stats(),
            "pools": {"evaluation": svc.pool.stats(), "heavy": svc.heavy.stats()},
            "assets": request.app.state.assets.stats(),
            "responses": {"sending": request.app.state.send_limits.sending,
                          "started": request.app.state.send_limits.started, **svc.outgoing.stats()}}
