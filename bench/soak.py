"""Soak test: does a real `pictorank serve` stay flat in memory while it meets new strings forever?

    .venv/bin/python bench/soak.py [--requests 10000] [--model models/default] [--max-cached-strings 20000]

Starts one `pictorank serve` process (1 worker; cosine unless `--model DIR`) on a free 127.0.0.1
port with an empty embedding cache directory, then sends `--requests` POST /rank requests one
after another, each with never-seen hint texts and `--options` never-seen options (generated
deterministically from the request number). Every `--sample-every` requests it reads the
server's resident memory (VmRSS in /proc/<pid>/status) and prints a row: requests, RSS, p50
latency of those requests, errors. Then it stops the server and says whether RSS stayed flat:
within `--flat-mb` from the first sample taken after the embedding memo filled up.

The memo holds PICTORANK_MAX_CACHED_STRINGS embeddings (default 50,000: ~1,600 requests of 32
new strings beyond the vocabulary). The server runs with `--max-cached-strings` (default 20,000)
so it fills within the first ~500 requests and most of the run shows the steady state.

Bounded: loopback only, one connection, at most `--requests` requests and `--max-minutes`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PICTORANK = str(Path(sys.executable).with_name("pictorank"))
SYLLABLES = ("ka", "lo", "mir", "ten", "sul", "bra", "vo", "zen", "dri", "pa", "quo", "rin", "sha", "tu", "wex", "yol")
VOCABULARY_STRINGS = 4_300  # what the server holds after start-up: ~3,100 vocabulary words + 1,165 hints


@dataclass
class Sample:
    requests: int
    rss_mb: float
    p50_ms: float | None
    errors: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pseudo_word(n: int) -> str:
    """A pronounceable, made-up word for the number `n` (distinct numbers, distinct words)."""
    letters = []
    while True:
        n, digit = divmod(n, len(SYLLABLES))
        letters.append(SYLLABLES[digit])
        if n == 0:
            return "".join(letters)


def request_body(i: int, options: int) -> dict:
    """Request `i`: two hint texts and `options` options, none of them ever sent before."""
    base = i * (options + 2)
    return {
        "hint_texts": [f"{pseudo_word(base)} {i}", f"{pseudo_word(base + 1)} clue {i}"],
        "options": [f"{pseudo_word(base + 2 + j)} {i}-{j}" for j in range(options)],
        "top_k": 10,
    }


def rss_mb(pid: int) -> float:
    """Resident memory of process `pid` in MB (VmRSS is in kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def start_server(args: argparse.Namespace, cache_dir: str, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    served = ["--model", args.model] if args.model else ["--method", args.method]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PICTORANK_CACHE_DIR": cache_dir,
           "PICTORANK_MAX_CACHED_STRINGS": str(args.max_cached_strings)}
    with log.open("w") as out:
        process = subprocess.Popen([PICTORANK, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
                                    *served], env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    stop_server(process)
    raise RuntimeError("server not ready after 600 s")


def stop_server(process: subprocess.Popen) -> None:
    """As Ctrl-C would (a clean shutdown), then kill it if it hangs."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def soak(base: str, pid: int, args: argparse.Namespace) -> list[Sample]:
    samples = [Sample(0, rss_mb(pid), None, 0)]
    print(f"| requests | RSS MB | p50 ms | errors |\n|---:|---:|---:|---:|\n| 0 | {samples[0].rss_mb:.0f} | - | - |",
          flush=True)
    deadline = time.monotonic() + args.max_minutes * 60
    latencies: list[float] = []
    errors = 0
    with httpx.Client(timeout=120) as http:
        for i in range(1, args.requests + 1):
            started = time.perf_counter()
            response = http.post(f"{base}/rank", json=request_body(i, args.options))
            latencies.append(time.perf_counter() - started)
            errors += response.status_code != 200
            if i % args.sample_every == 0 or i == args.requests or time.monotonic() > deadline:
                sample = Sample(i, rss_mb(pid), float(np.percentile(latencies, 50)) * 1000, errors)
                samples.append(sample)
                print(f"| {i} | {sample.rss_mb:.0f} | {sample.p50_ms:.0f} | {errors} |", flush=True)
                latencies, errors = [], 0
            if time.monotonic() > deadline:
                print(f"(stopped after {args.max_minutes} minutes)", flush=True)
                break
    return samples


def verdict(samples: list[Sample], args: argparse.Namespace) -> str:
    """Flat: every sample from the first one after the memo filled up within `--flat-mb`."""
    per_request = args.options + 2
    filled_at = max(0, args.max_cached_strings - VOCABULARY_STRINGS) / per_request
    steady = [s for s in samples if s.requests >= filled_at and s.requests > 0]
    if len(steady) < 2:
        return f"not enough samples after the memo filled (~{filled_at:.0f} requests) to judge"
    spread = max(s.rss_mb for s in steady) - min(s.rss_mb for s in steady)
    growth = steady[-1].rss_mb - steady[0].rss_mb
    flat = spread <= args.flat_mb
    return (f"{'FLAT' if flat else 'NOT FLAT'}: from {steady[0].requests} requests on (memo full after "
            f"~{filled_at:.0f}), RSS spread {spread:.0f} MB (limit {args.flat_mb:.0f}), first-to-last "
            f"{growth:+.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--options", type=int, default=30, help="new options per request")
    parser.add_argument("--sample-every", type=int, default=1_000)
    parser.add_argument("--method", default="cosine", help="unlearned method to serve when no --model")
    parser.add_argument("--model", help="model directory to serve (e.g. models/default)")
    parser.add_argument("--max-cached-strings", type=int, default=20_000,
                        help="the server's PICTORANK_MAX_CACHED_STRINGS (its default is 50,000)")
    parser.add_argument("--flat-mb", type=float, default=50.0)
    parser.add_argument("--max-minutes", type=float, default=90.0)
    args = parser.parse_args()
    served = f"model {args.model}" if args.model else f"method {args.method}"
    print(f"soak: pictorank serve ({served}, 1 worker, PICTORANK_MAX_CACHED_STRINGS={args.max_cached_strings}, "
          f"empty cache dir); {args.requests} requests of 2 new hint texts + {args.options} new options", flush=True)
    with tempfile.TemporaryDirectory(prefix="pictorank-soak-") as tmp:
        log = Path(tmp) / "server.log"
        process, base = start_server(args, str(Path(tmp) / "cache"), log)
        try:
            samples = soak(base, process.pid, args)
        finally:
            stop_server(process)
        print(verdict(samples, args), flush=True)
        print(f"server exit code {process.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
