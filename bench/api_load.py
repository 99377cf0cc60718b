"""HTTP load benchmark: `pictorank serve` as a real uvicorn process, real puzzles, N clients.

    .venv/bin/python bench/api_load.py [--requests 300] [--clients 1 4 16] [--workers 1] [--model DIR]
    .venv/bin/python bench/api_load.py --configs "seed (task script)" cosine --model models/default

Never-seen input first (issue 11): every configuration starts from an empty embedding cache of
its own, twice, and the time from launch to /ready ("ready s") and the server's resident memory
at the end (VmRSS, and its peak VmHWM) are reported:

- server A serves a vocabulary without test.csv (train and val only); it gets test.csv's
  30-option rows as never-seen requests: "new clue + 30 new options" (every option made unique
  to its request with a " #<n>" suffix, as test's options repeat across its rows: with the suffix
  nothing of the request was ever encoded), the first half at 1 client, the second at 4;
- server B serves the default vocabulary (test.csv's options included, embedded at start-up):
  "new clue, options in vocabulary", test's 30-option rows as they are, halves at 1 and 4 clients.

Then the repeated-request figures on server B, as before; and B is started once more over the
cache it left (B', a restart: only its readiness and memory are measured):

Every configuration runs in its own server process on a free 127.0.0.1 port, one after another:

- cosine: the service's default method, with its in-memory embedding memo, on the base model's
  fp32 ONNX export (made at the first start into the cache folder: pictorank.ranker.shipped).
- cosine (PyTorch): the same on PyTorch (`PICTORANK_ENCODER_RUNTIME=torch`), as it ran before.
- seed (task script): the task's baseline as its script works, every string re-encoded per
  request: the reference the targets compare against. The service has no such mode, so this
  bench serves it itself (`--serve-task-script`: the service's app over a seed ranker whose
  encoder forgets every vector, bench/batch.py's ForgetfulEncoder).
- seed (memo): the same baseline with the service's memo, to show what the memo alone is worth.
- model NAME: each `--model DIR` given (e.g. the learned model), served as `PICTORANK_MODEL_DIR`.

Requests are the 30-option rows of val (subtask 3), POST /rank with top_k 10. Each server is first
warmed with one pass over all of them (4 clients; reported as "first pass": every clue is new to
the server, the options were encoded at start-up for the open-vocabulary index); then, for each
client count, `--requests` requests cycle through the rows. Clients are asyncio tasks sharing one
httpx client with one connection each; latency is client-side, request to full response.
Load is bounded: at most `--requests` per level and `--max-seconds` per level.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn
from harness import ForgetfulEncoder, reference_line  # bench/harness.py, beside this file
from fastapi import FastAPI

from pictorank.api.app import create_app
from pictorank.api.service import build_service
from pictorank.api.settings import Settings
from pictorank.settings import use_offline_environment
from pictorank.encoders import Encoder, Encoders
from pictorank.puzzles import load_hints, load_puzzles
from pictorank.ranker import SeedRanker

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = ROOT / "data" / "bliss"
PICTORANK_SERVE = (str(Path(sys.executable).with_name("pictorank")), "serve")
TASK_SCRIPT_SERVE = (sys.executable, str(Path(__file__).resolve()), "--serve-task-script")


@dataclass(frozen=True)
class Config:
    """One server to measure: the command that starts it, and its `PICTORANK_*` variables."""

    env: dict[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = PICTORANK_SERVE


CONFIGS = {
    "cosine": Config({"PICTORANK_METHOD": "cosine"}),
    "cosine (PyTorch)": Config({"PICTORANK_METHOD": "cosine", "PICTORANK_ENCODER_RUNTIME": "torch"}),
    "seed (task script)": Config({"PICTORANK_METHOD": "seed"}, TASK_SCRIPT_SERVE),
    "seed (memo)": Config({"PICTORANK_METHOD": "seed"}),
}


class ServerFailed(RuntimeError):
    """A server did not start (its configuration is then left out of the table)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request_bodies() -> list[dict[str, Any]]:
    vocab = load_hints(DATA / "hint_descriptions.csv")
    puzzles = [p for p in load_puzzles(DATA / "val.csv", vocab) if p.subtask_id == 3]
    return [{"hints": list(p.hints), "options": list(p.options), "top_k": 10} for p in puzzles]


def task_script_app() -> FastAPI:
    """The service as `pictorank serve --method seed` builds it, except that its seed ranker
    re-encodes every string of every request, as the task's script does. The open-vocabulary
    index is built with an ordinary encoder: start-up is not what this configuration measures."""
    settings = Settings(method="seed")
    encoder = Encoder(cache_dir=settings.cache_dir)
    ranker = SeedRanker(encoder=ForgetfulEncoder(model=encoder.model, model_id=encoder.model_id))
    return create_app(settings, service=build_service(settings, encoders=Encoders(encoder), ranker=ranker))


def serve_task_script() -> None:
    """Serve `task_script_app` where the environment's PICTORANK_HOST/PORT/WORKERS say; every
    uvicorn worker imports this file (from `app_dir`) and builds its own app."""
    use_offline_environment()  # before torch is imported (see its docstring)
    settings = Settings(method="seed")
    uvicorn.run("api_load:task_script_app", factory=True, app_dir=str(BENCH), host=settings.host,
                port=settings.port, workers=settings.workers, log_level="info")


def never_seen_bodies(unique: bool) -> list[dict[str, Any]]:
    """test.csv's 30-option rows; with `unique`, every option made new to its request."""
    vocab = load_hints(DATA / "hint_descriptions.csv")
    puzzles = [p for p in load_puzzles(DATA / "test.csv", vocab) if p.subtask_id == 3]
    return [{"hints": list(p.hints), "top_k": 10,
             "options": [f"{o} #{i}" for o in p.options] if unique else list(p.options)}
            for i, p in enumerate(puzzles)]


def memory_mb(process: subprocess.Popen) -> tuple[float, float]:
    """The server's resident memory now and at its peak (VmRSS, VmHWM), in MB (0 where unreadable)."""
    found = {"VmRSS": 0.0, "VmHWM": 0.0}
    try:
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in found:
                found[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return found["VmRSS"], found["VmHWM"]


def start_server(config: Config, workers: int, cache_dir: str,
                 extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, **config.env, "HF_HUB_OFFLINE": "1", "PICTORANK_CACHE_DIR": cache_dir,
           "PICTORANK_HOST": "127.0.0.1", "PICTORANK_PORT": str(port), "PICTORANK_WORKERS": str(workers),
           **(extra_env or {})}
    process = subprocess.Popen(
        list(config.command), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerFailed(f"server exited with {process.returncode}: {process.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.kill()
    process.wait()
    raise ServerFailed("server not ready after 300 s")


def stop_server(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def load(base: str, bodies: list[dict], clients: int, total: int, max_seconds: float) -> dict[str, float]:
    """`total` requests (fewer if `max_seconds` runs out) from `clients` concurrent clients."""
    latencies: list[float] = []
    errors = 0
    next_index = 0
    deadline = time.perf_counter() + max_seconds

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal next_index, errors
        while next_index < total and time.perf_counter() < deadline:
            body = bodies[next_index % len(bodies)]
            next_index += 1
            started = time.perf_counter()
            try:
                response = await http.post(f"{base}/rank", json=body)
                ok = response.status_code == 200
            except httpx.HTTPError:
                ok = False
            latencies.append(time.perf_counter() - started)
            errors += not ok

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    ms = np.array(latencies) * 1000
    return {
        "requests": len(latencies),
        "p50": float(np.percentile(ms, 50)),
        "p95": float(np.percentile(ms, 95)),
        "p99": float(np.percentile(ms, 99)),
        "rps": len(latencies) / elapsed,
        "errors": errors,
    }


def never_seen_pass(base: str, bodies: list[dict], label: str, max_seconds: float) -> dict[str, dict]:
    """The first half of `bodies` at 1 client, the second at 4: each request sent once."""
    half = len(bodies) // 2
    return {f"{label}, 1 client": asyncio.run(load(base, bodies[:half], 1, half, max_seconds)),
            f"{label}, 4 clients": asyncio.run(load(base, bodies[half:], 4, len(bodies) - half, max_seconds))}


def run_config(name: str, config: Config, bodies: list[dict], args: argparse.Namespace, cache_root: str) -> dict:
    results: dict[str, Any] = {}
    servers: dict[str, Any] = {}
    without_test = json.dumps([str(DATA / "train.csv"), str(DATA / "val.csv")])
    # --suggest-off: the clue-giver (POST /suggest) is fitted at start-up when its cache is empty,
    # which is most of a fresh server's start-up; without its train file it is off (503).
    common = {"PICTORANK_SUGGEST_TRAIN": str(Path(cache_root) / "no-such-file.csv")} if args.suggest_off else {}
    for server, extra in (("A", {**common, "PICTORANK_VOCABULARY_FILES": without_test}), ("B", common), ("B'", common)):
        if server != "B'":  # B' is B started again over the cache B left: a restart
            cache_dir = tempfile.mkdtemp(prefix=f"{server}-", dir=cache_root)
        print(f"{name}: starting server {server} ...", file=sys.stderr)
        started = time.perf_counter()
        process, base = start_server(config, args.workers, cache_dir, extra)
        ready = time.perf_counter() - started
        try:
            if server == "A":
                results.update(never_seen_pass(base, never_seen_bodies(unique=True), "new clue + 30 new options",
                                               args.max_seconds))
            elif server == "B":
                results.update(never_seen_pass(base, never_seen_bodies(unique=False),
                                               "new clue, options in vocabulary", args.max_seconds))
                results["first pass (val)"] = asyncio.run(load(base, bodies, 4, len(bodies), args.max_seconds))
                for clients in args.clients:
                    print(f"{name}: {clients} client(s) ...", file=sys.stderr)
                    results[f"{clients} clients"] = asyncio.run(load(base, bodies, clients, args.requests, args.max_seconds))
            rss, peak = memory_mb(process)
        finally:
            stop_server(process)
        servers[server] = {"ready_s": ready, "rss_mb": rss, "peak_rss_mb": peak, "load": os.getloadavg()[0]}
    return {"levels": results, "servers": servers}


def server_table(results: dict[str, dict]) -> str:
    lines = ["| configuration | server | ready s | RSS MB at end | peak RSS MB | load average |",
             "|---|---|---|---|---|---|"]
    kinds = {"A": "A (vocabulary without test, empty cache)", "B": "B (default vocabulary, empty cache)",
             "B'": "B restarted (its cache kept)"}
    for name, result in results.items():
        for server, s in result["servers"].items():
            what = kinds[server]
            lines.append(f"| {name} | {what} | {s['ready_s']:.1f} | {s['rss_mb']:.0f} | {s['peak_rss_mb']:.0f} "
                         f"| {s['load']:.1f} |")
    return "\n".join(lines)


def table(results: dict[str, dict[str, dict]]) -> str:
    levels = {name: result["levels"] for name, result in results.items()}
    names = list(levels)
    header = "| load | " + " | ".join(f"{n}: p50 / p95 / p99 ms, req/s, errors" for n in names) + " |"
    lines = [header, "|---|" + "---|" * len(names)]
    for level in next(iter(levels.values())):
        cells = []
        for n in names:
            r = levels[n][level]
            cells.append(f"{r['p50']:.1f} / {r['p95']:.1f} / {r['p99']:.1f}, {r['rps']:.0f}, {r['errors']}/{r['requests']}")
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def check_targets(results: dict[str, dict[str, dict]]) -> list[str]:
    """The issue's targets, at 4 clients: cosine p50 <= 15 ms, p99 <= 100 ms, no errors, >= 10x seed."""
    cosine, seed = results["cosine"]["levels"]["4 clients"], results["seed (task script)"]["levels"]["4 clients"]
    checks = [
        (f"cosine p50 {cosine['p50']:.1f} ms <= 15 ms", cosine["p50"] <= 15),
        (f"cosine p99 {cosine['p99']:.1f} ms <= 100 ms", cosine["p99"] <= 100),
        (f"errors {sum(r['errors'] for c in results.values() for r in c['levels'].values())} == 0",
         all(r["errors"] == 0 for c in results.values() for r in c["levels"].values())),
        (f"cosine {cosine['rps']:.0f} req/s >= 10 x seed (task script) {seed['rps']:.1f} req/s",
         cosine["rps"] >= 10 * seed["rps"]),
    ]
    return [f"{'PASS' if ok else 'FAIL'}  {text}" for text, ok in checks]


def check_model_targets(name: str, result: dict) -> list[str]:
    """Issue 11's targets for a served model (one worker): never-seen latency, readiness, memory."""
    levels, servers = result["levels"], result["servers"]
    new1, new4 = levels["new clue + 30 new options, 1 client"], levels["new clue + 30 new options, 4 clients"]
    known = levels["new clue, options in vocabulary, 1 client"]
    ready = max(s["ready_s"] for s in servers.values())
    peak = max(s["peak_rss_mb"] for s in servers.values())
    checks = [
        (f"{name}: new clue + 30 new options p50 {new1['p50']:.1f} ms <= 50 ms at 1 client", new1["p50"] <= 50),
        (f"{name}: new clue + 30 new options {new4['rps']:.1f} req/s >= 25 at 4 clients", new4["rps"] >= 25),
        (f"{name}: new clue, options in vocabulary p50 {known['p50']:.1f} ms <= 15 ms", known["p50"] <= 15),
        (f"{name}: ready {ready:.1f} s <= 10 s from an empty cache", ready <= 10),
        (f"{name}: peak RSS {peak:.0f} MB <= 1024 MB", peak <= 1024),
    ]
    return [f"{'PASS' if ok else 'FAIL'}  {text}" for text, ok in checks]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per client level (default 300)")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes per server")
    parser.add_argument("--max-seconds", type=float, default=120, help="time limit per level")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--model", type=Path, action="append", default=[], help="also serve this model directory")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--suggest-off", action="store_true",
                        help="serve without the clue-giver (POST /suggest answers 503), whose first fit dominates "
                        "a start-up from an empty cache")
    parser.add_argument("--serve-task-script", action="store_true",
                        help="internal: serve the 'seed (task script)' configuration on $PICTORANK_PORT")
    args = parser.parse_args()
    if args.serve_task_script:
        serve_task_script()
        return
    configs = {name: CONFIGS[name] for name in args.configs}
    configs.update({f"model {d.name}": Config({"PICTORANK_MODEL_DIR": str(d.resolve())}) for d in args.model})

    bodies = request_bodies()
    machine_start = reference_line()
    load_start = os.getloadavg()[0]
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{len(bodies)} val rows with 30 options", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="pictorank-api-bench-") as cache_dir:
        results = {}
        for name, config in configs.items():
            try:
                results[name] = run_config(name, config, bodies, args, cache_dir)
            except ServerFailed as exc:  # one broken configuration does not lose the others' results
                print(f"{name}: skipped: {exc}", file=sys.stderr)
    print(f"load average at end: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(f"## POST /rank, 30-option rows, {args.workers} worker(s), {args.requests} requests per repeated level"
          f"{', clue-giver off' if args.suggest_off else ''}\n")
    print(table(results))
    print("\n" + server_table(results))
    if not results:
        raise SystemExit("no server could be measured")
    if {"cosine", "seed (task script)"} <= set(results) and 4 in args.clients:
        print("\n" + "\n".join(check_targets(results)))
    for name in results:
        if name.startswith("model "):
            print("\n" + "\n".join(check_model_targets(name, results[name])))
    print(f"\nload average (1 min) at start {load_start:.1f}, at end {os.getloadavg()[0]:.1f}, on {os.cpu_count()} cores")
    print(f"at start, {machine_start}\nat end, {reference_line()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
