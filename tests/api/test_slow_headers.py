"""Connections whose request headers never complete are answered 408 and closed within the header
timeout, and a worker serves a bounded number of connections; meanwhile /rank answers.

The fast tests run the app behind uvicorn in a thread, with the options `pictorank serve` gives
it (1,000 stalled connections among them); the slow one is a real `pictorank serve` holding 1,000
such connections from one client at once.
"""

from __future__ import annotations

import json
import selectors
import socket
import threading
import time
from typing import Iterator

import httpx
import pytest
import uvicorn
from helpers import DATA, free_port, in_thread, serving

from pictorank.api.app import create_app
from pictorank.api.serve import uvicorn_options
from pictorank.api.settings import Settings

OK = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]}
# What a connection sends before it stops: nothing, part of a request line, an HTTP/0.9-style
# request line, and all but the blank line that ends the headers.
STALLED = [b"", b"GET /hea", b"GET /\r\n", b"POST /rank HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"]


@pytest.fixture(scope="module")
def live_server(api_service) -> Iterator[str]:
    """uvicorn in a thread over the session's service: a 1 s header timeout, 8 connections."""
    settings = Settings(header_timeout=1.0, max_connections=8, port=free_port())
    with in_thread(create_app(settings, service=api_service), uvicorn_options(settings)) as address:
        yield f"http://{address}"


def _open(url: str, first: bytes) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    if first:
        sock.sendall(first)
    return sock


def _closed_within(socks: list[socket.socket], seconds: float, trickle: socket.socket | None = None,
                   closed_at: dict[int, float] | None = None) -> dict[int, bytes]:
    """What each socket got until the server closed it, by index, reading for at most `seconds`;
    a socket still open then is missing. A `trickle` socket is sent a header byte every 0.2 s.
    `closed_at`, when given, receives when (time.monotonic()) each socket was seen closed."""
    received: dict[int, bytearray] = {i: bytearray() for i in range(len(socks))}
    closed: set[int] = set()
    with selectors.DefaultSelector() as selector:
        for i, sock in enumerate(socks):
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, i)
        deadline, next_drip = time.monotonic() + seconds, 0.0
        while len(closed) < len(socks) and time.monotonic() < deadline:
            if trickle is not None and time.monotonic() >= next_drip:
                trickle = _drip(trickle)
                next_drip = time.monotonic() + 0.2
            for key, _ in selector.select(timeout=0.1):
                chunk = _recv(key.fileobj)
                received[key.data] += chunk
                if not chunk:
                    selector.unregister(key.fileobj)
                    closed.add(key.data)
                    if closed_at is not None:
                        closed_at[key.data] = time.monotonic()
    for sock in socks:
        sock.close()
    return {i: bytes(received[i]) for i in sorted(closed)}


def _drip(sock: socket.socket) -> socket.socket | None:
    """Send one more header byte; None once the server has closed the connection."""
    try:
        sock.send(b"x")
    except OSError:
        return None
    return sock


def _recv(sock) -> bytes:
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def test_connections_that_never_finish_their_headers_are_408_and_closed(live_server: str) -> None:
    socks = [_open(live_server, first) for first in STALLED]
    trickle = _open(live_server, b"GET /health HTTP/1.1\r\nX-Slow: ")
    started = time.monotonic()
    answers = _closed_within([*socks, trickle], 6, trickle=trickle)
    assert len(answers) == len(STALLED) + 1, "a connection was still open"
    assert time.monotonic() - started < 4  # 1 s set; before the fix none of them was ever closed
    for answer in answers.values():
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower(), answer[:300]
        assert json.loads(body)["detail"][0]["type"] == "header_timeout"


def test_a_request_is_answered_while_connections_stall(live_server: str) -> None:
    socks = [_open(live_server, b"GET /") for _ in range(4)]
    try:
        assert httpx.post(f"{live_server}/rank", json=OK, timeout=10).status_code == 200
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.parametrize("pause", [0.0, 0.3])  # 0: pipelined, parsed only once the first is answered
def test_the_headers_of_a_later_request_on_a_kept_alive_connection_have_a_deadline(live_server: str, pause: float) -> None:
    sock = _open(live_server, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(pause)
    started = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\nHo")  # the next request stops in its headers
    [answer] = _closed_within([sock], 6).values()
    assert answer.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in answer, answer
    assert time.monotonic() - started < 4  # the header timeout (1 s), not the keep-alive one (5 s)


def test_connections_beyond_the_cap_are_refused_in_json(live_server: str) -> None:
    socks = [_open(live_server, b"GET /") for _ in range(8)]
    try:
        time.sleep(0.2)
        refused = httpx.post(f"{live_server}/rank", json=OK, timeout=10)
    finally:
        for sock in socks:
            sock.close()
    assert refused.status_code == 503
    assert refused.headers["content-type"] == "application/json"
    assert refused.headers["connection"] == "close" and refused.headers["retry-after"] == "1"
    [error] = refused.json()["detail"]
    assert error["type"] == "over_capacity" and "8 connections" in error["msg"]
    time.sleep(0.2)
    assert httpx.get(f"{live_server}/health", timeout=10).status_code == 200


def test_a_kept_alive_connection_is_refused_once_the_cap_is_reached(live_server: str) -> None:
    """The cap is checked at each request, as uvicorn does: a client that connected in time is
    refused (in JSON) on a later request once stalled connections fill the worker."""
    with httpx.Client(base_url=live_server, timeout=10) as client:
        assert client.get("/health").status_code == 200
        socks = [_open(live_server, b"GET /") for _ in range(7)]
        try:
            time.sleep(0.2)
            served = client.get("/health")  # 8 connections with this one: the cap, served (it served 7)
            socks.append(_open(live_server, b"GET /"))
            time.sleep(0.2)
            refused = client.get("/health")
        finally:
            for sock in socks:
                sock.close()
    assert served.status_code == 200
    assert refused.status_code == 503 and refused.json()["detail"][0]["type"] == "over_capacity"


def _stall_and_rank(url: str, count: int, timeout: float, slack: float) -> None:
    """Open `count` connections that stop in their headers (the STALLED kinds in turn) from this
    one client, ask POST /rank meanwhile (200), then check every one was answered 408 and closed
    by the server within `timeout` (+ `slack` for a shared machine) of its own opening."""
    opened_at, socks = [], []
    for i in range(count):
        opened_at.append(time.monotonic())
        socks.append(_open(url, STALLED[i % len(STALLED)]))
    assert httpx.post(f"{url}/rank", json=OK, timeout=30).status_code == 200
    closed_at: dict[int, float] = {}
    answers = _closed_within(socks, timeout + slack + 5, closed_at=closed_at)
    assert len(answers) == count, f"{count - len(answers)} connections were still open"
    late = [closed_at[i] - opened_at[i] for i in range(count) if closed_at[i] - opened_at[i] > timeout + slack]
    assert not late, f"{len(late)} closed late, the latest {max(late):.1f} s after opening ({timeout:g} s set)"
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers.values())


def test_a_thousand_stalled_connections_from_one_client_are_all_closed_while_rank_answers(api_service) -> None:
    """Without the header timeout none of them would ever be closed (uvicorn waits for headers
    forever); with the default cap of 2,048 per worker none is refused."""
    settings = Settings(header_timeout=2.0, port=free_port())
    with in_thread(create_app(settings, service=api_service), uvicorn_options(settings)) as address:
        _stall_and_rank(f"http://{address}", 1000, timeout=2.0, slack=1.5)


@pytest.mark.slow  # the server process loads the real model
def test_a_real_server_closes_1000_stalled_connections_and_still_ranks(tmp_path) -> None:
    env = {"PICTORANK_VOCABULARY_FILES": json.dumps([str(DATA / "val.csv")]), "PICTORANK_HEADER_TIMEOUT": "2"}
    with serving(["--method", "cosine"], tmp_path / "server.log", env) as server:
        _stall_and_rank(server.url, 1000, timeout=2.0, slack=2.0)


def test_a_malformed_request_gets_the_services_json_400_with_nosniff(live_server: str) -> None:
    """uvicorn answered a request it could not parse with a plain-text 400 and no nosniff header."""
    sock = _open(live_server, b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n")
    answer = _closed_within([sock], 5)[0]
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"content-type: application/json" in head.lower() and b"x-content-type-options: nosniff" in head.lower()
    assert json.loads(body)["detail"][0]["type"] == "bad_request"


def test_a_cap_of_one_connection_serves_one(api_service) -> None:
    """PICTORANK_MAX_CONNECTIONS=N served N-1, so 1 refused everything: one connection at a time
    is served, a second beside it is refused in JSON."""
    settings = Settings(max_connections=1, port=free_port())
    with in_thread(create_app(settings, service=api_service), uvicorn_options(settings)) as address:
        url = f"http://{address}"
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/health").status_code == 200
            assert client.post("/rank", json=OK).status_code == 200
            stalled = _open(url, b"GET /")
            try:
                time.sleep(0.2)
                refused = client.get("/health")
            finally:
                stalled.close()
        assert refused.status_code == 503 and refused.json()["detail"][0]["type"] == "over_capacity"
