"""API errors: every failure is a 4xx with {"error": {"kind", "message", ...}}, never a traceback."""
from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("rasplay")


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, headers: dict | None = None, **extra):
        super().__init__(message)
        self.status, self.kind, self.message, self.extra, self.headers = status, kind, message, extra, headers


def error_response(status: int, kind: str, message: str, headers: dict | None = None, **extra) -> JSONResponse:
    body = {"kind": kind, "message": message}
    body.update({k: v for k, v in extra.items() if v is not None})
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _describe(err: dict) -> str:
    where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
    return f"{where}: {err.get('msg', 'invalid')}" if where else err.get("msg", "invalid")


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        e = next(e for e in errors if e.get("type") == "json_invalid")
        ctx = e.get("ctx") or {}
        return error_response(400, "bad_request", f"the body is not valid JSON ({ctx.get('error', 'parse error')})")
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("POST", "PUT", "PATCH") and content_type != "application/json" and \
            any(tuple(e.get("loc", ()))[:1] == ("body",) for e in errors):
        got = f"it came as {content_type}" if content_type else "it came without a content-type"
        return error_response(422, "validation", "send the request body as JSON with the header "
                                                 f"content-type: application/json ({got})")
    details = [{"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "problem": e.get("msg", "")}
               for e in errors[:20]]
    message = "; ".join(_describe(e) for e in errors[:3]) + (" …" if len(errors) > 3 else "")
    return error_response(422, "validation", f"invalid request: {message}", details=details)


async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"nothing at {request.url.path}"
    if message == "There was an error parsing the body":
        message = "the body could not be parsed (invalid, or too deeply nested, JSON)"
    return error_response(exc.status_code, kind, message, headers=getattr(exc, "headers", None))


async def _api(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.kind, exc.message, headers=exc.headers, **exc.extra)


async def _recursion(request: Request, exc: RecursionError) -> JSONResponse:
    return error_response(400, "bad_request", "the request nests too deeply")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s", request.url.path)
    return error_response(500, "internal", "rasplay failed on this request; please report it")


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(ApiError, _api)
    app.add_exception_handler(RecursionError, _recursion)
    app.add_exception_handler(Exception, _unexpected)
