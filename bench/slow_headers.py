"""Slow-header benchmark: N connections that never finish their headers, against a real server.

    .venv/bin/python bench/slow_headers.py [--connections 1000] [--header-timeout 10] [--workers 1] [--max-connections 2048]

Starts `pictorank serve --method cosine` (val.csv as its open vocabulary, for a short start) on a
free 127.0.0.1 port with the given PICTORANK_HEADER_TIMEOUT and _MAX_CONNECTIONS, opens the
connections from this one client, in rotation: one that sends nothing, one that stops inside its
request line, an HTTP/0.9-style request line, a request without the blank line that ends its
headers, and one that trickles a header byte a second. While they are open, POST /rank is asked once. Then it waits
(at most the timeout + 30 s) for the server to close them all, and prints per kind: how many the
server closed, answered 408, and the longest any of them stayed open (from its own opening to
the server's close: the header timeout is met when that is the timeout plus scheduling slack).
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"nothing": b"", "part of a request line": b"GET /ra", "HTTP/0.9 line": b"GET /\r\n",
         "no blank line": b"POST /rank HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n",
         "trickle": b"GET /health HTTP/1.1\r\nX-Slow: "}
OK = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, header_timeout: float, workers: int, max_connections: int, log: Path) -> subprocess.Popen:
    """`pictorank serve` until /ready answers (at most 300 s)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PICTORANK_HEADER_TIMEOUT": str(header_timeout),
           "PICTORANK_MAX_CONNECTIONS": str(max_connections),
           "PICTORANK_VOCABULARY_FILES": json.dumps([str(ROOT / "data" / "bliss" / "val.csv")]),
           "PICTORANK_SUGGEST_TRAIN": str(log.parent / "none.csv")}
    command = [str(Path(sys.executable).with_name("pictorank")), "serve", "--method", "cosine", "--host", "127.0.0.1",
               "--port", str(port), "--workers", str(workers)]
    process = subprocess.Popen(command, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2):
                return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit(f"server did not start:\n{log.read_text()[-2000:]}")


def open_connections(port: int, count: int) -> tuple[list[tuple[str, socket.socket]], list[float]]:
    """The connections, by kind, and when (time.monotonic()) each was opened."""
    names = list(KINDS)
    opened, when = [], []
    for i in range(count):
        kind = names[i % len(names)]
        when.append(time.monotonic())
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if KINDS[kind]:
            sock.sendall(KINDS[kind])
        sock.setblocking(False)
        opened.append((kind, sock))
    return opened, when


def watch(opened: list[tuple[str, socket.socket]], started: float, seconds: float) -> dict[int, tuple[float, bytes]]:
    """For each connection the server closed within `seconds` of `started`: when (time.monotonic()),
    and what it had sent."""
    closed, received = {}, {i: b"" for i in range(len(opened))}
    next_drip = 0.0
    with selectors.DefaultSelector() as selector:
        for i, (_, sock) in enumerate(opened):
            selector.register(sock, selectors.EVENT_READ, i)
        while len(closed) < len(opened) and time.monotonic() - started < seconds:
            if time.monotonic() >= next_drip:
                drip([sock for i, (kind, sock) in enumerate(opened) if kind == "trickle" and i not in closed])
                next_drip = time.monotonic() + 1.0
            for key, _ in selector.select(timeout=0.1):
                try:
                    chunk = key.fileobj.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                received[key.data] += chunk
                if not chunk:
                    selector.unregister(key.fileobj)
                    closed[key.data] = (time.monotonic(), received[key.data])
    return closed


def drip(socks: list[socket.socket]) -> None:
    for sock in socks:
        try:
            sock.send(b"x")
        except OSError:
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--header-timeout", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--max-connections", type=int, default=2048,
                        help="the server's PICTORANK_MAX_CONNECTIONS; below --connections, /rank meets the cap (503)")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        process = start_server(port, args.header_timeout, args.workers, args.max_connections, Path(tmp) / "server.log")
        try:
            opened, opened_at = open_connections(port, args.connections)
            asked = time.monotonic()
            opening = asked - opened_at[0]
            reply = httpx.post(f"http://127.0.0.1:{port}/rank", json=OK, timeout=60)
            status = f"{reply.status_code} {reply.headers.get('content-type')}"
            if reply.status_code != 200:
                status += f" {reply.text[:200]}"
            rank_s = time.monotonic() - asked
            closed = watch(opened, asked, args.header_timeout + 30)
        finally:
            process.terminate()
            process.wait(timeout=60)
    report(args, opened, opened_at, closed, opening, status, rank_s)


def report(args, opened, opened_at: list[float], closed, opening: float, status: str, rank_s: float) -> None:
    print(f"{args.connections} connections, header timeout {args.header_timeout:g} s, {args.workers} worker(s), "
          f"at most {args.max_connections} connections per worker; "
          f"opened in {opening:.2f} s; POST /rank meanwhile: {status} in {rank_s:.2f} s")
    print(f"| {'kind':<24} | opened | closed by server | 408 | longest open (s) |")
    print(f"|{'-' * 26}|-------:|-----------------:|----:|-----------------:|")
    for kind in KINDS:
        indices = [i for i, (k, _) in enumerate(opened) if k == kind]
        done = [i for i in indices if i in closed]
        answered = sum(closed[i][1].startswith(b"HTTP/1.1 408") for i in done)
        longest = max((closed[i][0] - opened_at[i] for i in done), default=float("nan"))
        print(f"| {kind:<24} | {len(indices):>6} | {len(done):>16} | {answered:>3} | {longest:>16.2f} |")
    for _, sock in opened:
        sock.close()


if __name__ == "__main__":
    main()
