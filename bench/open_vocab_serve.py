"""Open-vocabulary mode as served: `pictorank serve --model DIR` from an empty embedding cache,
its time to /ready, its memory, /health's lexicon, and the latency of /rank without options for
clues it never saw.

    .venv/bin/python bench/open_vocab_serve.py --model DIR [--requests 40]

The clues are val's hints as free text, each made new to the server by a word no other request
has ("#<n>"), so neither the clue nor its nearest words' features were cached; one client, one
request at a time. Latency is client-side, request to full response.
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
from pathlib import Path

import httpx
import numpy as np

from pictorank.puzzles import load_hints, load_puzzles

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM (peak) of a process, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return tuple(float(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    vocab = load_hints(DATA / "hint_descriptions.csv")
    clues = [vocab.describe(p.hints) for p in load_puzzles(DATA / "val.csv", vocab)][: args.requests]
    port = free_port()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PICTORANK_CACHE_DIR": cache, "PICTORANK_MODEL_DIR": str(args.model),
               "PICTORANK_PORT": str(port)}
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
        started = time.perf_counter()
        server = subprocess.Popen([sys.executable, "-m", "pictorank", "serve"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None or time.perf_counter() - started > 300:
                    raise SystemExit("open_vocab_serve: the server did not get ready")
                time.sleep(0.1)
            ready = time.perf_counter() - started
            health = httpx.get(f"{base}/health").json()
            seconds = []
            with httpx.Client(base_url=base, timeout=60) as client:
                for n, hints in enumerate(clues):
                    body = {"hint_texts": [*hints[:-1], f"{hints[-1]} #{n}"], "top_k": 10}
                    sent = time.perf_counter()
                    client.post("/rank", json=body).raise_for_status()
                    seconds.append(time.perf_counter() - sent)
            rss, peak = rss_mb(server.pid)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    ms = np.array(seconds) * 1000
    print(f"ready in {ready:.1f} s from an empty cache; /health: lexicon_size {health.get('lexicon_size')}, "
          f"source {health.get('lexicon_source')}")
    print(f"/rank without options, {len(ms)} never-seen clues one at a time: p50 {np.percentile(ms, 50):.0f} ms, "
          f"p95 {np.percentile(ms, 95):.0f} ms; server RSS {rss:.0f} MB (peak {peak:.0f} MB)")


if __name__ == "__main__":
    main()
