"""The FastAPI dependency of every router: the server's services (settings, evaluation pool, share
store, response cache, training jobs), created with the app and kept on app.state. One dependency,
resolved once per request."""
from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from ..cache import ResponseCache
from ..jobs import JobManager
from ..settings import Settings
from ..store import ShareStore
from ..workers import EvaluationPool


@dataclass
class Services:
    settings: Settings
    pool: EvaluationPool
    store: ShareStore
    cache: ResponseCache
    jobs: JobManager


async def services(request: Request) -> Services:
    return request.app.state.services
