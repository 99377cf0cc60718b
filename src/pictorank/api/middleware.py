"""Small pure-ASGI middlewares, in the order a request meets them (app.py adds them):

- MetricsMiddleware: request count and latency per method and route, both from closed sets;
- HeadAsGet: HEAD answered wherever GET is, without the body;
- BodyLimits: the whole body read first, within a size (413) and a time (408) limit;
- StrictJSON: NaN, Infinity and lone surrogates refused (422), and encoded bodies (415), before
  FastAPI parses the body.

Pure ASGI rather than `BaseHTTPMiddleware`, which costs a task and a memory stream per request.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

import anyio
from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pictorank.api.errors import Loc, error_response

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})


def too_large(max_bytes: int) -> JSONResponse:
    """The 413 answer; middleware runs outside FastAPI's exception handlers, so it is built here."""
    return error_response(413, ["body"], f"request body is larger than {max_bytes} bytes", "body_too_large")


def too_slow(timeout: float) -> JSONResponse:
    """The 408 answer. `Connection: close`: the rest of the body may still be on its way."""
    msg = f"the request body did not arrive within {timeout:g} seconds"
    return error_response(408, ["body"], msg, "body_timeout", headers={"Connection": "close"})


async def read_body(receive: Receive, max_bytes: int) -> bytes | None:
    """The whole body, or the first chunks of it once they pass `max_bytes` (the caller
    refuses it); None when the client went away."""
    body, more = bytearray(), True
    while more and len(body) <= max_bytes:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return bytes(body)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app `body` as the whole request, then defers to the server's
    own (which reports the client's disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class BodyLimits:
    """Read each request body completely before the app sees it, and refuse one that is larger
    than `max_bytes` (413; by Content-Length, unread, when it is declared) or that takes longer
    than `timeout` seconds in all to arrive (408).

    uvicorn has no body-read timeout: a client that declared 100 bytes and sent 10 held its
    connection open with no limit. Reading first costs nothing, FastAPI reads the whole
    body before validating it anyway; a deadline for the whole body, not per chunk, because a
    byte every few seconds would renew a per-chunk timeout forever.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and not _declared_within(declared, self.max_bytes):
            await too_large(self.max_bytes)(scope, receive, send)
            return
        try:
            with anyio.fail_after(self.timeout):
                body = await read_body(receive, self.max_bytes)
        except TimeoutError:
            await too_slow(self.timeout)(scope, receive, send)
            return
        if body is None:  # the client went away
            return
        if len(body) > self.max_bytes:
            await too_large(self.max_bytes)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def _declared_within(declared: str, limit: int) -> bool:
    """A Content-Length of plain digits no larger than `limit`. Its length is compared first:
    int() of a header of thousands of digits raises instead of answering."""
    return declared.isascii() and declared.isdigit() and len(declared) <= len(str(limit)) and int(declared) <= limit


class _NonFinite(Exception):
    """NaN or Infinity met by json.loads (raised by its parse_constant hook)."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


_SURROGATE = re.compile("[\ud800-\udfff]")  # after json.loads only lone ones are left: pairs are joined


def _lone_surrogate(value: Any) -> list[str | int] | None:
    """The `loc` of the first string (or the object of the first key) holding a lone surrogate.

    An explicit stack rather than recursion: json.loads accepts nesting deeper than a
    recursive walk started from inside the server could follow."""
    stack: list[tuple[Any, list[str | int]]] = [(value, ["body"])]
    while stack:
        item, loc = stack.pop()
        if isinstance(item, str) and _SURROGATE.search(item):
            return loc
        if isinstance(item, dict):
            if any(_SURROGATE.search(key) for key in item):
                return loc
            stack.extend((child, [*loc, key]) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((item[i], [*loc, i]) for i in reversed(range(len(item))))
    return None


def json_problem(body: bytes) -> tuple[Loc, str, str] | None:
    """(loc, msg, type) when `body` is JSON only by Python's lenient reading; None when it is
    strict JSON, or broken in a way FastAPI itself reports (with the position)."""
    try:
        value = json.loads(body, parse_constant=_refuse_constant)
    except _NonFinite as exc:
        return ["body"], f"{exc} is not valid JSON: numbers must be finite", "json_invalid"
    except RecursionError:
        return ["body"], "JSON nested too deeply", "json_invalid"
    except json.JSONDecodeError:
        return None
    except UnicodeDecodeError as exc:  # a ValueError too: not the integer case below
        return ["body"], f"the body is not UTF-8 text (byte {exc.start}: {exc.reason})", "json_invalid"
    except ValueError:  # valid JSON Python will not read: an integer of over 4,300 digits
        msg = f"JSON holds an integer of more than {sys.get_int_max_str_digits()} digits, which is not read"
        return ["body"], msg, "json_invalid"
    loc = _lone_surrogate(value)
    if loc is not None:
        msg = "text holds a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not Unicode text"
        return loc, msg, "string_unicode"
    return None


def _encoded(scope: Scope) -> str | None:
    """The body's Content-Encoding when it is not the identity (a gzip body is not JSON text)."""
    encoding = Headers(scope=scope).get("content-encoding", "").strip()
    return encoding if encoding.lower() not in ("", "identity") else None


def not_decoded(encoding: str) -> JSONResponse:
    """The 415 for an encoded body: the service reads bodies as they are, and says so, rather than
    failing to read it as UTF-8."""
    msg = f"Content-Encoding {encoding[:40]!r} is not accepted; send the body unencoded (identity)"
    return error_response(415, ["header", "content-encoding"], msg, "unsupported_media_type")


def _is_json(scope: Scope) -> bool:
    """The content types FastAPI parses as JSON: application/json and application/*+json."""
    media_type = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
    return media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json"))


class StrictJSON:
    """Refuse, with a 422 saying so, JSON bodies that Python's json module accepts and JSON does not.

    NaN and Infinity made a 500 (FastAPI's 422 then held a float no JSON can write), and so did
    lone surrogates (`"\\ud800"`: a legal escape, but no UTF-8 text can hold the result, not even
    the error body). A body with a Content-Encoding (gzip...) is a 415: read as it came it was
    refused as "not UTF-8", which sent the caller looking for the wrong mistake. Any other body,
    well-formed or not, goes on to FastAPI unchanged. The body
    is parsed twice, here and by FastAPI: a small cost against the ranking of the same body.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        encoding = _encoded(scope)
        if encoding is not None:
            await not_decoded(encoding)(scope, receive, send)
            return
        body = await read_body(receive, sys.maxsize)  # BodyLimits, outside, has bounded it
        if body is None:
            return
        problem = json_problem(body)
        if problem is not None:
            await error_response(422, *problem)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


class HeadAsGet:
    """Answer HEAD wherever GET is answered: GET's status and headers, no body.

    FastAPI routes only the methods a route declares, so HEAD /health was a 405. The app sees
    a GET (in a copy of the scope: the server still knows the request was a HEAD); the body is
    dropped on the way out, and the matched route is handed back for the metrics' label.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        as_get = {**scope, "method": "GET"}
        try:
            await self.app(as_get, receive, without_body)
        finally:
            if "route" in as_get:
                scope["route"] = as_get["route"]


class NoSniff:
    """`X-Content-Type-Options: nosniff` on every response: a JSON error that echoes a request's
    text, or a static file, is never read by a browser as anything but its declared type."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("x-content-type-options", "nosniff")
            await send(message)

        await self.app(scope, receive, with_header)


class Metrics:
    """Request count and latency per route template and status, in the app's own registry
    (one registry per app, so tests can build many apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "pictorank_http_requests", "HTTP requests answered", ("method", "route", "status"), registry=self.registry
        )
        self.latency = Histogram(
            "pictorank_http_request_duration_seconds",
            "Time from request to the end of the response",
            ("method", "route"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )


def method_label(method: str) -> str:
    """The method as a metric label, from a closed set: every label value is a time series kept
    for the life of the process, and a client may send any token as its method (invented long
    methods grew /metrics without bound)."""
    return method if method in METHODS else "other"


class MetricsMiddleware:
    """Observe every HTTP request. Labels come from closed sets (bounded cardinality): the
    matched route's template, the method (`method_label`), the status code."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        method = method_label(scope["method"])
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(method, label, str(status)).inc()
            self.metrics.latency.labels(method, label).observe(time.perf_counter() - started)
