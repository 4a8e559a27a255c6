"""Training jobs: POST /train -> a job; GET /train/{id}/events streams its progress (server-sent
events); GET /train/{id} its state and result; DELETE /train/{id} cancels it."""
from __future__ import annotations

import json
import logging
import re

import orjson
from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from ..errors import ApiError
from ..training_jobs import JOB_ID_PATTERN, ClientFull, QueueFull
from ..quotas import client_of
from ..schemas import ERROR_RESPONSES, Overlay, OverlayRequest, TrainJob, TrainRequest
from .deps import Services, services
from ..settings import show_bytes
from .common import check_source, run_in_pool, torch_available

log = logging.getLogger("rasplay")

router = APIRouter(tags=["train"])
JOB_ID = JOB_ID_PATTERN
NOT_FOUND = {404: ERROR_RESPONSES[422] | {"description": "No such job"}, 422: ERROR_RESPONSES[422],
             503: ERROR_RESPONSES[422] | {"description": "The job queue is unreachable (replicas with --broker; "
                                                         "Retry-After)"}}


def _found(job: dict | None, job_id: str, jobs) -> dict:
    if job is None:
        says = getattr(jobs, "not_found", None)   # with a broker: the job board says what may have happened
        raise ApiError(404, "not_found", says(job_id) if says else
                       f"no training job '{job_id}' (finished jobs are kept for a while; a server's restart ends "
                       "the jobs it held)")
    return job


@router.post("/train", response_model=TrainJob, status_code=202, summary="Start a training job",
             responses={**ERROR_RESPONSES, 429: ERROR_RESPONSES[422] | {"description": "The job queue is full"},
                        501: ERROR_RESPONSES[422] | {"description": "PyTorch is not installed on the server"},
                        503: ERROR_RESPONSES[422] | {"description": "All evaluation workers stayed busy, or the job "
                                                                    "queue is unreachable (Retry-After)"}})
async def start(req: TrainRequest, request: Request, svc: Services = Depends(services)):
    """Trains an encoder-only transformer on the task of the program's output s-op (layers and heads
    default to the program's analysis) in a worker process at low priority. Jobs run one per two
    cores, a few wait, more are refused with 429; one client may have only its share of them queued or
    running (429 past it); each has the server's time limit."""
    settings, pool, store, jobs = svc.settings, svc.pool, svc.store, svc.jobs
    if not settings.broker and not torch_available():   # with a broker, the workers train (and import torch)
        raise ApiError(501, "unavailable", "training needs PyTorch on the server: pip install 'rasplay[train]'")
    check_source(req.source, settings)
    config = req.model_dump(exclude={"source", "init_model"}, exclude_none=True)
    if config.get("mode") != "program":   # program mode trains on the CPU only
        config.setdefault("device", settings.train_device)
    budget = min(config.get("time_budget", settings.train_seconds), settings.train_seconds * 0.9)
    config["time_budget"] = round(budget, 3)
    spec = {"source": req.source, "config": config}
    if req.init_model and req.mode == "program":
        raise ApiError(422, "validation", "program mode trains its own constrained model from scratch; it cannot start "
                                          "from a compiled model (leave init_model out)")
    if req.init_model:
        model = await run_in_threadpool(store.get_model, req.init_model)
        if model is None:
            raise ApiError(422, "validation", f"no compiled model '{req.init_model}' to start from (compile first)")
        if model.get("length_free"):
            raise ApiError(422, "validation", "a length-free model is not in the trainer's layout; start from a model "
                                              "compiled with max_len")
        config.setdefault("lr", 1e-5)
        spec["init"] = {"id": req.init_model, "spec": model}
    checked = orjson.loads(await run_in_pool(pool, "train_check", spec, settings, client=client_of(request)))
    if not checked["ok"]:
        raise ApiError(422, "validation", checked["message"])
    if checked["memory"] > settings.train_memory:
        raise ApiError(422, "limit", f"this job would need about {show_bytes(checked['memory'])} of memory; the limit "
                                     f"is {show_bytes(settings.train_memory)} per job: choose a smaller d_model, "
                                     "batch_size, max_len, or fewer layers or heads")
    try:
        job = await jobs.submit_job(spec, client_of(request))
    except ClientFull:
        raise ApiError(429, "busy", f"you already have {jobs.per_client} training job(s) queued or running (the "
                                    "limit per client); wait for one to finish or cancel one",
                       headers={"Retry-After": "30"}) from None
    except QueueFull:
        raise ApiError(429, "busy", f"{jobs.max_queued} training jobs are already waiting; try again later",
                       headers={"Retry-After": "30"}) from None
    return job


@router.get("/train/{job_id}", response_model=TrainJob, responses=NOT_FOUND, summary="A training job and its result")
async def status(job_id: str = Path(pattern=JOB_ID), svc: Services = Depends(services)):
    # (reading it tells the server a client still follows it: a job nobody follows is cancelled after
    # settings.train_orphan_seconds)
    return _found(await svc.jobs.status(job_id), job_id, svc.jobs)


@router.delete("/train/{job_id}", response_model=TrainJob, responses=NOT_FOUND, summary="Cancel a training job")
async def cancel(job_id: str = Path(pattern=JOB_ID), svc: Services = Depends(services)):
    return _found(await svc.jobs.cancel_job(job_id), job_id, svc.jobs)


@router.get("/train/{job_id}/events", summary="Stream a job's progress (server-sent events)",
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "`event: progress` per step report (id = its index), then `event: done` "
                                            "with the final status"}, **NOT_FOUND})
async def events(job_id: str = Path(pattern=JOB_ID), start: int = Query(0, ge=0, le=1_000_000_000, alias="from"),
                 last_event_id: str | None = Header(None), svc: Services = Depends(services)):
    _found(await svc.jobs.status(job_id), job_id, svc.jobs)
    if last_event_id and re.fullmatch(r"[0-9]{1,9}", last_event_id.strip()):   # anything else is ignored
        start = max(start, int(last_event_id) + 1)

    lost = getattr(getattr(svc.jobs, "board", None), "errors", ())   # the job board's Redis errors (with a broker)

    async def stream():   # while a page reads this stream, the job is wanted (settings.train_orphan_seconds)
        yield "retry: 2000\n\n"
        try:
            async for index, event in svc.jobs.follow_job(job_id, start):
                yield f"id: {index}\nevent: progress\ndata: {json.dumps(event)}\n\n"
            final = await svc.jobs.final(job_id)
        except lost as e:   # the stream ends with an error event (the page resumes it), never a traceback
            log.warning("503 event stream of job %s: the job queue is unreachable (%s: %s)", job_id,
                        type(e).__name__, e)
            error = {"kind": "unavailable", "message": f"the job queue is unreachable ({type(e).__name__}); "
                                                       "the stream resumes when it is back"}
            yield f"event: error\ndata: {json.dumps(error)}\n\n"
            return
        yield f"event: done\ndata: {json.dumps(final)}\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/overlay", response_model=Overlay, responses={**ERROR_RESPONSES, 503: ERROR_RESPONSES[422]},
             summary="Lay attention maps from another tool over the program's selectors")
async def overlay(req: OverlayRequest, request: Request, svc: Services = Depends(services)):
    """Scores every head of the imported maps against every selector of the program (mean attention
    mass on the selected keys per query row) and pairs them per layer, as for trained models."""
    check_source(req.source, svc.settings)
    checked = orjson.loads(await run_in_pool(svc.pool, "overlay", req.model_dump(), svc.settings,
                                             client=client_of(request)))
    if not checked["ok"]:
        raise ApiError(422, "validation", checked["message"])
    return checked["overlay"]
