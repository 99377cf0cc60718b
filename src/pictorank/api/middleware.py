"""Two small pure-ASGI middlewares: a request-body size limit (413) and Prometheus metrics.

Pure ASGI rather than `BaseHTTPMiddleware`, which costs a task and a memory stream per request.
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pictorank.api.errors import error_response

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def too_large(max_bytes: int) -> JSONResponse:
    """The 413 answer; middleware runs outside FastAPI's exception handlers, so it is built here."""
    return error_response(413, ["body"], f"request body is larger than {max_bytes} bytes", "body_too_large")


class BodySizeLimit:
    """Refuse bodies over `max_bytes` before any parsing: by Content-Length when it is declared,
    otherwise (chunked uploads) by counting while buffering the body up to the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) <= self.max_bytes:
                await self.app(scope, receive, send)  # the server stops the body at Content-Length
            else:
                await too_large(self.max_bytes)(scope, receive, send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # client went away
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await too_large(self.max_bytes)(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


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


class MetricsMiddleware:
    """Observe every HTTP request; the label is the matched route's template (bounded cardinality)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
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
            self.metrics.requests.labels(scope["method"], label, str(status)).inc()
            self.metrics.latency.labels(scope["method"], label).observe(time.perf_counter() - started)
