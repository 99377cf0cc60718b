"""uvicorn's h11 HTTP protocol with a deadline for a request's headers and a JSON refusal at the
connection cap.

uvicorn bounds an idle keep-alive connection (`timeout_keep_alive`, armed after each response)
and the app bounds a body (`BodyLimits`, which starts once the headers are in), but nothing
bounds the headers themselves: a connection that sends nothing, stops before the blank line or
trickles a header line now and then stayed open for good, and enough of them use up a worker's
connections. uvicorn's own cap (`limit_concurrency`) answers a plain-text 503 that no client of
this service can parse as its errors. `pictorank serve` passes this class, bound to its timeout
and cap, as uvicorn's `http=`, and leaves uvicorn's `limit_concurrency` unset.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from pictorank.api.errors import error_body

# Seconds a refused client is told to wait (Retry-After of the 503 at the cap): connections free
# up as requests end, and stalled ones within the header timeout.
CAPACITY_RETRY_AFTER_SECONDS = 1


def header_timeout_response(timeout: float) -> bytes:
    """The 408 written straight to the socket: no request was parsed, so there is no app to answer,
    but the refusal has the shape of every other error."""
    body = json.dumps({"detail": error_body([], f"the request headers did not arrive within {timeout:g} seconds",
                                            "header_timeout")}).encode()
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "x-content-type-options: nosniff\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body


def over_capacity_app(max_connections: int) -> ASGIApp:
    """The ASGI app that answers a request beyond the cap: 503 in the service's error shape, with
    Retry-After, and the connection closed (uvicorn's stand-in says "Service Unavailable" in plain
    text). It reads no body: the connection ends with the answer."""
    body = json.dumps({"detail": error_body([], f"the server is at its limit of {max_connections} connections "
                                            "per worker; try again shortly", "over_capacity")}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", str(CAPACITY_RETRY_AFTER_SECONDS).encode()),
               (b"x-content-type-options", b"nosniff"), (b"connection", b"close")]

    async def over_capacity(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return over_capacity


class HeaderTimeoutProtocol(H11Protocol):
    """Close a connection whose request headers are not complete `header_timeout` seconds after it
    opened, or after the first byte of a later request on it (between requests uvicorn's keep-alive
    timeout applies). One deadline for all the headers, not one per read: a byte a second would
    renew a per-read timeout forever.

    With `max_connections`, a request whose headers arrive while the worker holds that many
    connections, or runs that many requests, gets `over_capacity_app`'s JSON 503 instead of the
    app: uvicorn's `limit_concurrency` rule, with the service's error shape."""

    def __init__(self, *args: Any, header_timeout: float, max_connections: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.header_timer: asyncio.TimerHandle | None = None
        self.max_connections = max_connections
        self.served_app = self.app
        self.refusal_app = over_capacity_app(max_connections) if max_connections is not None else self.app
        self.limit_concurrency = None  # the cap is checked in handle_events below, answered in JSON

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.header_timer is None and self.conn.their_state is h11.IDLE:  # a next request begins
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # its headers are in (or the connection is done)
            self._disarm()

    def handle_events(self) -> None:
        """uvicorn's, with the app chosen first: the request it may start here is refused when the
        worker is at the cap. It starts at most one request per call (h11 pauses after one until
        its response is done), and the count does not change within the call, so the choice is
        made where uvicorn makes its own."""
        self.app = self.refusal_app if self._at_capacity() else self.served_app
        super().handle_events()

    def _at_capacity(self) -> bool:
        cap = self.max_connections
        # `connections` holds this connection too: N may be open with this one among them; `tasks`
        # are the requests already running, which this one would join.
        return cap is not None and (len(self.connections) > cap or len(self.tasks) >= cap)

    def send_400_response(self, msg: str) -> None:
        """A request uvicorn cannot parse (a malformed request line or header): the service's JSON
        error with nosniff, as every other error, instead of uvicorn's plain text."""
        body = json.dumps({"detail": error_body([], f"malformed HTTP request: {msg}", "bad_request")}).encode()
        headers = [(b"content-type", b"application/json"), (b"x-content-type-options", b"nosniff"),
                   (b"connection", b"close")]
        self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers, reason=b"Bad Request")))
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()

    def on_response_complete(self) -> None:
        """A next request that came while this one was answered (pipelined, or just early) is only
        parsed now: its headers' deadline starts here when they are still incomplete."""
        super().on_response_complete()
        if self.header_timer is None and self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self.header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _headers_too_slow(self) -> None:
        """408 and close, unless the headers did complete in the meantime (in a pipelined read)."""
        self.header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self.transport.write(header_timeout_response(self.header_timeout))
        self.transport.close()
