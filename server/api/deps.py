"""FastAPI dependencies: settings, the evaluation pool and the share store live on app.state."""
from __future__ import annotations

from fastapi import Request

from ..cache import ResponseCache
from ..settings import Settings
from ..store import ShareStore
from ..workers import EvaluationPool


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_pool(request: Request) -> EvaluationPool:
    return request.app.state.pool


async def get_store(request: Request) -> ShareStore:
    return request.app.state.store


async def get_cache(request: Request) -> ResponseCache:
    return request.app.state.cache
