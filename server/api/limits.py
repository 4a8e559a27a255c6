"""GET /limits: the bounds of the page's compile and training forms, as this server enforces them (its
settings, and the request models' field bounds), so that web/js repeats none of them."""
from __future__ import annotations

from typing import Optional

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ..schemas import TrainRequest
from ..settings import Settings

router = APIRouter(tags=["limits"])
TRAIN_FIELDS = ("min_len", "max_len", "layers", "heads", "d_model", "steps", "time_budget", "batch_size", "lr",
                "num_heads", "mlps")


class Bounds(BaseModel):
    min: Optional[float] = Field(None, description="the smallest value allowed")
    max: Optional[float] = Field(None, description="the largest value allowed")
    exclusive_min: bool = Field(False, description="`min` itself is not allowed (a value must be above it)")


class CompileLimits(BaseModel):
    max_len: int = Field(description="the longest input a model may be compiled for (--compile-max-len)")
    max_vocab: int = Field(description="tokens in a compiled model's vocabulary (--compile-max-vocab)")
    seconds: float = Field(description="time limit of a compile, run, soft study or weights (--compile-seconds)")


class TrainLimits(BaseModel):
    fields: dict[str, Bounds] = Field(description="POST /train's numeric fields and their bounds")
    seconds: float = Field(description="a training job's time limit (--train-seconds); a job's time_budget is "
                                       "capped at 90% of it")


class PageLimits(BaseModel):
    compile: CompileLimits
    train: TrainLimits


def field_bounds(model: type[BaseModel], name: str) -> Bounds:
    bounds = Bounds()
    for item in model.model_fields[name].metadata:
        for attribute, exclusive in (("ge", False), ("gt", True)):
            if getattr(item, attribute, None) is not None:
                bounds.min, bounds.exclusive_min = getattr(item, attribute), exclusive
        for attribute in ("le", "lt"):
            if getattr(item, attribute, None) is not None:
                bounds.max = getattr(item, attribute)
    return bounds


def page_limits(settings: Settings) -> dict:
    return {"compile": {"max_len": settings.compile_max_len, "max_vocab": settings.compile_max_vocab,
                        "seconds": settings.compile_seconds},
            "train": {"fields": {name: field_bounds(TrainRequest, name) for name in TRAIN_FIELDS},
                      "seconds": settings.train_seconds}}


@router.get("/limits", response_model=PageLimits, summary="The compile and training bounds of this server")
async def limits(request: Request):
    """What the page's Compile and Train forms may ask for here: the compiler's limits (this server's
    settings) and the bounds of POST /train's numeric fields. A request outside them is a 422."""
    return page_limits(request.app.state.settings)
