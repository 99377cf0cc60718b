"""The one shape of every error the service answers: `{"detail": [{"loc", "msg", "type"}]}`.

FastAPI writes its validation errors (422) this way (`validation_error_handler` keeps just these
three keys); everything else the service refuses (the routes, the dependencies, the middleware's
408/413/422, Starlette's own 404/405) is written here in the same shape, so a client reads one
format whatever went wrong.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pictorank.api.schemas import ErrorResponse

Loc = Sequence[str | int]


def error_body(loc: Loc, msg: str, kind: str) -> list[dict[str, Any]]:
    """The `detail` list of one error: where (`loc`), why (`msg`), and a machine-readable `type`."""
    return [{"loc": list(loc), "msg": msg, "type": kind}]


# Seconds a client should wait before asking again while something is still loading (a 503 of
# kind "loading"): the model is ready soon after start; the clue-giver later when it must be fitted.
RETRY_AFTER_SECONDS = 5


def api_error(status: int, loc: Loc, msg: str, kind: str, headers: Mapping[str, str] | None = None) -> HTTPException:
    """What a route or dependency raises to refuse a request; `http_error_handler` answers it."""
    return HTTPException(status_code=status, detail=error_body(loc, msg, kind), headers=dict(headers) if headers else None)


def still_loading(what: str) -> HTTPException:
    """503 for a part that is still starting, with Retry-After: unlike a part that cannot work
    (no puzzles, no training file), asking again soon will succeed."""
    return api_error(503, [], f"{what} is still loading", "loading", {"Retry-After": str(RETRY_AFTER_SECONDS)})


def error_response(
    status: int, loc: Loc, msg: str, kind: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The response itself, for code that answers directly rather than raising (middleware)."""
    return JSONResponse({"detail": error_body(loc, msg, kind)}, status_code=status, headers=headers)


async def http_error_handler(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Give every HTTP error the shape above, including Starlette's plain-string ones (404, 405).

    FastAPI answers a body it cannot decode at all (e.g. invalid UTF-8) with a bare 400; that is
    bad input like any malformed JSON, so it becomes the same 422.
    """
    if isinstance(exc.detail, list):  # raised through api_error: already shaped
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 400:
        msg = "request body is not valid JSON (UTF-8 expected)"
        return error_response(422, ["body"], msg, "json_invalid", headers=exc.headers)
    return error_response(exc.status_code, [], str(exc.detail), "http_error", headers=exc.headers)


def printable(text: str) -> str:
    """`text` with what UTF-8 cannot encode (lone surrogates) escaped as `\\udXXX`: an error body
    must encode whatever the request held, or the refusal itself becomes a 500."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


async def validation_error_handler(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422 in the documented shape, without the `input` and `ctx` it would echo back:
    the input can be large (a whole batch) or impossible to encode (a lone surrogate made the
    422 a 500). A JSON decode error keeps its reason, which FastAPI puts in `ctx`."""
    detail = []
    for error in exc.errors():
        msg = str(error.get("msg", ""))
        reason = (error.get("ctx") or {}).get("error")
        if error.get("type") == "json_invalid" and isinstance(reason, str):
            msg = f"{msg}: {reason}"
        loc = [part if isinstance(part, int) else printable(str(part)) for part in error.get("loc", ())]
        detail.extend(error_body(loc, printable(msg), printable(str(error.get("type", "invalid")))))
    return JSONResponse({"detail": detail}, status_code=422)


def documented(descriptions: Mapping[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses: each has the ErrorResponse body, so
    clients (and schemathesis) know what a refusal looks like."""
    return {status: {"model": ErrorResponse, "description": text} for status, text in descriptions.items()}
