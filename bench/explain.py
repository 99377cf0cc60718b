"""What explanations and icons cost: POST /rank with and without `explain`, and GET /hints/{id}/icon,
against a real `pictorank serve` process.

    .venv/bin/python bench/explain.py                       # the default model (models/default, else cosine)
    .venv/bin/python bench/explain.py --model DIR           # a model directory
    .venv/bin/python bench/explain.py --method cosine       # an unlearned method

Targets (issue #13): `/rank` with `explain` at most 2x the latency of `/rank` without it; an icon
in under 2 ms. Requests are val's puzzles (4, 10 and 30 options) with top_k 10, one client,
sequential, keep-alive. A first pass over all of them fills the server's embedding memo, so both
variants are then timed on clues whose strings are known (what a live game sees after its first
request); they alternate request by request, so a busy machine slows both alike. Latency is
client-side, request to full response; the table gives median and 95th percentile in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

from pictorank.puzzles import load_hints, load_puzzles

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
PICTORANK = str(Path(sys.executable).with_name("pictorank"))


def start(args: argparse.Namespace, port: int) -> subprocess.Popen:
    command = [PICTORANK, "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--model", str(args.model)] if args.model else ["--method", args.method] if args.method else []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PICTORANK_CACHE_DIR": os.environ.get(
        "PICTORANK_CACHE_DIR", str(ROOT / ".cache" / "embeddings"))}
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_ready(process: subprocess.Popen, base: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}: {process.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit("server not ready in time")


def timed(client: httpx.Client, method: str, url: str, **kwargs) -> float:
    """Milliseconds from request to full response; a non-2xx answer stops the bench."""
    started = time.perf_counter()
    response = client.request(method, url, **kwargs)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code >= 300:
        raise SystemExit(f"{method} {url}: {response.status_code} {response.text[:300]}")
    return elapsed


def summary(latencies: list[float]) -> dict[str, float]:
    return {"n": len(latencies), "median_ms": float(np.median(latencies)), "p95_ms": float(np.percentile(latencies, 95))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--model", type=Path, help="model directory (default: what `pictorank serve` picks)")
    choice.add_argument("--method", help="unlearned method")
    parser.add_argument("--puzzles", type=int, default=150, help="val puzzles timed (default 150)")
    parser.add_argument("--icons", type=int, default=500, help="icon requests timed (default 500)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    vocab = load_hints(DATA / "hint_descriptions.csv")
    puzzles = random.Random(13).sample(load_puzzles(DATA / "val.csv", vocab), args.puzzles)
    bodies = [{"hints": list(p.hints), "options": list(p.options), "top_k": 10} for p in puzzles]
    port = 8000 + random.Random().randrange(1000, 9000)
    base = f"http://127.0.0.1:{port}"
    process = start(args, port)
    try:
        wait_ready(process, base)
        with httpx.Client(base_url=base, timeout=60) as client:
            model = client.get("/health").json()["model"]
            for body in bodies:  # warm: every string of these clues enters the server's memo
                timed(client, "POST", "/rank", json=body)
            plain, explained = [], []
            for body in bodies:
                plain.append(timed(client, "POST", "/rank", json=body))
                explained.append(timed(client, "POST", "/rank", json={**body, "explain": True}))
            icon_urls = [h["icon"] for h in client.get("/hints").json()["hints"] if h["icon"]]
            icons = [timed(client, "GET", url) for url in random.Random(13).choices(icon_urls, k=args.icons)]
            health = [timed(client, "GET", "/health") for _ in range(args.icons)]  # HTTP round trip alone
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    results = {"model": model, "rank": summary(plain), "rank_explain": summary(explained), "icon": summary(icons),
               "health": summary(health)}
    results["explain_ratio_median"] = results["rank_explain"]["median_ms"] / results["rank"]["median_ms"]
    print(f"model: {model}")
    print(f"{'request':<22} {'n':>5} {'median ms':>10} {'p95 ms':>8}")
    for name in ("rank", "rank_explain", "icon", "health"):
        r = results[name]
        print(f"{name:<22} {r['n']:>5} {r['median_ms']:>10.2f} {r['p95_ms']:>8.2f}")
    print(f"explain / plain (median): {results['explain_ratio_median']:.2f}x (target <= 2x); icon target < 2 ms")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
