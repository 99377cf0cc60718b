"""uvicorn's h11 HTTP protocol with a deadline for a request's headers.

uvicorn bounds an idle keep-alive connection (`timeout_keep_alive`, armed after each response)
and the app bounds a body (`BodyLimits`, which starts once the headers are in), but nothing
bounds the headers themselves: a connection that sends nothing, stops before the blank line or
trickles a header line now and then stayed open for good, and enough of them use up a worker's
connections. `pictorank serve` passes this class, bound to its timeout, as uvicorn's `http=`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from pictorank.api.errors import error_body


def header_timeout_response(timeout: float) -> bytes:
    """The 408 written straight to the socket: no request was parsed, so there is no app to answer,
    but the refusal has the shape of every other error."""
    body = json.dumps({"detail": error_body([], f"the request headers did not arrive within {timeout:g} seconds",
                                            "header_timeout")}).encode()
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "x-content-type-options: nosniff\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body


class HeaderTimeoutProtocol(H11Protocol):
    """Close a connection whose request headers are not complete `header_timeout` seconds after it
    opened, or after the first byte of a later request on it (between requests uvicorn's keep-alive
    timeout applies). One deadline for all the headers, not one per read: a byte a second would
    renew a per-read timeout forever."""

    def __init__(self, *args: Any, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.header_timer is None and self.conn.their_state is h11.IDLE:  # a next request begins
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # its headers are in (or the connection is done)
            self._disarm()

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
