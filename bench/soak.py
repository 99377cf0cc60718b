"""Soak test: does a real `pictorank serve` stay flat in memory while it meets new strings forever?

    .venv/bin/python bench/soak.py [--requests 10000] [--model models/default] [--max-cached-strings 20000]
    .venv/bin/python bench/soak.py --batches 200 --model models/default [--kinds open explain]

Starts one `pictorank serve` process (1 worker; cosine unless `--model DIR`) on a free 127.0.0.1
port with an empty embedding cache directory, then sends `--requests` POST /rank requests one
after another, each with never-seen hint texts and `--options` never-seen options (generated
deterministically from the request number). Every `--sample-every` requests it reads the
server's resident memory (VmRSS in /proc/<pid>/status) and prints a row: requests, RSS, p50
latency of those requests, errors. Then it stops the server and says whether RSS stayed flat:
within `--flat-mb` from the first sample taken after the embedding memo filled up.

The memo holds PICTORANK_MAX_CACHED_STRINGS embeddings (default 20,000: ~500 requests of 32
new strings beyond the vocabulary), so it fills early and most of the run shows the steady state.

Batch soak (`--batches N`): instead of single requests, N POST /rank/batch requests of
`--clues` (64) open-vocabulary clues each, every clue of `--clue-hints` never-seen hint texts (new
clues, so each is encoded and searched; 100 candidates each), once plainly and once with
`"explain": true`, each kind on a fresh server. The server's PICTORANK_MAX_TEXTS_PER_REQUEST is
raised to `--max-texts` (the default cap refuses such a batch: each open-vocabulary clue counts as
its 100 candidate words), and its embedding memo keeps its default size unless
`--max-cached-strings` is given. Before the first batch it waits until /suggest answers too: the
clue-giver loads or fits in the background after /ready, and that build is not the batches'
growth. RSS is sampled every `--sample-every` (10) batches; each batch's peak (VmHWM, reset
before it) and lasting rise are measured too. Targets: RSS after the last batch within
`--flat-mb` (150) of RSS after the first sample, and no single request raising RSS by more than
`--request-mb` (300), for both kinds.

Open-play soak (`--open`): `--requests` POST /rank requests without options (two never-seen hint
texts each: the lexicon is searched and 100 candidates ranked by open play's ranker), sent by
`--clients` (4) clients at once. RSS is sampled every `--sample-every` (100) requests; the table
ends with the p50 and p99 latency of all requests and RSS growth after the first sample. Target:
growth of at most `--flat-mb` (100).

Bounded: loopback only, one connection (a client each with `--open`), at most `--requests` requests (or `--batches` batches of
each kind) and `--max-minutes` per run.
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


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of process `pid` in MB (VmRSS, or its peak VmHWM; in kB there)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for process {pid}")


def reset_peak(pid: int) -> None:
    """Start VmHWM of process `pid` again from its current RSS (Linux's clear_refs, value 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def server_env(args: argparse.Namespace, cache_dir: str) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PICTORANK_CACHE_DIR": cache_dir}
    if args.max_cached_strings is not None:
        env["PICTORANK_MAX_CACHED_STRINGS"] = str(args.max_cached_strings)
    if args.batches:
        env["PICTORANK_MAX_TEXTS_PER_REQUEST"] = str(args.max_texts)
        env["PICTORANK_MAX_ROWS_PER_REQUEST"] = str(args.max_texts)  # a batch of open clues ranks 100 rows each
    return env


def start_server(args: argparse.Namespace, cache_dir: str, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    served = ["--model", args.model] if args.model else ["--method", args.method]
    env = server_env(args, cache_dir)
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


def open_body(i: int) -> dict:
    """Open-play request `i`: two hint texts never sent before, no options."""
    return {"hint_texts": [f"{pseudo_word(2 * i)} {i}", f"{pseudo_word(2 * i + 1)} clue {i}"], "top_k": 10}


def open_soak(base: str, pid: int, args: argparse.Namespace) -> tuple[list[Sample], list[float], int]:
    """`--requests` open-play requests from `--clients` clients at once, RSS sampled every
    `--sample-every`; the samples, every request's latency (s) and the errors."""
    from concurrent.futures import ThreadPoolExecutor

    samples = [Sample(0, rss_mb(pid), None, 0)]
    print(f"| requests | RSS MB | p50 ms | errors |\n|---:|---:|---:|---:|\n| 0 | {samples[0].rss_mb:.0f} | - | - |",
          flush=True)
    deadline = time.monotonic() + args.max_minutes * 60
    all_latencies: list[float] = []
    total_errors = 0
    with httpx.Client(timeout=120, limits=httpx.Limits(max_connections=args.clients)) as http, \
            ThreadPoolExecutor(args.clients) as pool:

        def one(i: int) -> tuple[float, bool]:
            started = time.perf_counter()
            ok = http.post(f"{base}/rank", json=open_body(i)).status_code == 200
            return time.perf_counter() - started, ok

        for start in range(1, args.requests + 1, args.sample_every):
            block = list(pool.map(one, range(start, min(start + args.sample_every, args.requests + 1))))
            latencies = [seconds for seconds, _ in block]
            errors = sum(not ok for _, ok in block)
            all_latencies += latencies
            total_errors += errors
            done = start + len(block) - 1
            sample = Sample(done, rss_mb(pid), float(np.percentile(latencies, 50)) * 1000, errors)
            samples.append(sample)
            print(f"| {done} | {sample.rss_mb:.0f} | {sample.p50_ms:.0f} | {errors} |", flush=True)
            if time.monotonic() > deadline:
                print(f"(stopped after {args.max_minutes} minutes)", flush=True)
                break
    return samples, all_latencies, total_errors


def run_open(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="pictorank-soak-") as tmp:
        process, base = start_server(args, str(Path(tmp) / "cache"), Path(tmp) / "server.log")
        try:
            samples, latencies, errors = open_soak(base, process.pid, args)
        finally:
            stop_server(process)
    first = samples[1] if len(samples) > 1 else samples[0]
    growth = max(s.rss_mb for s in samples[1:]) - first.rss_mb if len(samples) > 1 else 0.0
    print(f"\n{len(latencies)} requests, {args.clients} clients, {errors} errors: p50 "
          f"{np.percentile(latencies, 50) * 1000:.0f} ms, p99 {np.percentile(latencies, 99) * 1000:.0f} ms; RSS "
          f"{first.rss_mb:.0f} MB after the first {first.requests}, at most {growth:+.0f} MB beyond it "
          f"({'FLAT' if growth <= args.flat_mb else 'NOT FLAT'}, limit {args.flat_mb:.0f})", flush=True)


def wait_for_suggest(base: str, minutes: float = 10) -> float:
    """Seconds until POST /suggest stops answering "still loading" (200, or a 503 that says it is
    off): the clue-giver's background build must not count as the batches' growth."""
    started = time.monotonic()
    with httpx.Client(timeout=120) as http:
        while time.monotonic() - started < minutes * 60:
            reply = http.post(f"{base}/suggest", json={"word": "sunflower", "avoid": ["rose", "tulip"]})
            if reply.status_code != 503 or reply.json()["detail"][0]["type"] != "loading":
                return time.monotonic() - started
            time.sleep(2)
    raise RuntimeError(f"/suggest still loading after {minutes} minutes")


def batch_body(kind: str, n: int, clues: int, hints: int) -> dict:
    """Batch `n` of `kind`: `clues` open-vocabulary clues of `hints` never-seen hint texts each."""
    explain = kind == "explain"
    first = (n * clues + (10**6 if explain else 0)) * hints
    puzzles = [{"hint_texts": [f"{pseudo_word(first + i * hints + j)} {kind} {n}" for j in range(hints)],
                "explain": explain} for i in range(clues)]
    return {"puzzles": puzzles}


@dataclass
class BatchSample:
    batches: int
    rss_mb: float
    p50_s: float | None
    peak_rise_mb: float  # the largest VmHWM - RSS-before of the batches since the last sample
    kept_rise_mb: float  # the largest RSS-after - RSS-before of those batches
    errors: int


def batch_soak(base: str, pid: int, kind: str, args: argparse.Namespace) -> list[BatchSample]:
    """`args.batches` batches of `kind`, RSS sampled every `args.sample_every`."""
    samples: list[BatchSample] = []
    print(f"\n{kind}: | batches | RSS MB | p50 s | max request peak rise MB | max request kept rise MB | errors |\n"
          "|---:|---:|---:|---:|---:|---:|", flush=True)
    deadline = time.monotonic() + args.max_minutes * 60
    latencies: list[float] = []
    peak = kept = 0.0
    errors = 0
    with httpx.Client(timeout=600) as http:
        for n in range(1, args.batches + 1):
            before = rss_mb(pid)
            reset_peak(pid)
            started = time.perf_counter()
            response = http.post(f"{base}/rank/batch", json=batch_body(kind, n, args.clues, args.clue_hints))
            latencies.append(time.perf_counter() - started)
            peak = max(peak, rss_mb(pid, "VmHWM") - before)
            kept = max(kept, rss_mb(pid) - before)
            if response.status_code != 200:
                errors += 1
                print(f"batch {n}: {response.status_code} {response.text[:300]}", flush=True)
            if n % args.sample_every == 0 or n == args.batches or time.monotonic() > deadline:
                sample = BatchSample(n, rss_mb(pid), float(np.percentile(latencies, 50)), peak, kept, errors)
                samples.append(sample)
                print(f"| {n} | {sample.rss_mb:.0f} | {sample.p50_s:.2f} | {peak:.0f} | {kept:.0f} | {errors} |", flush=True)
                latencies, peak, kept, errors = [], 0.0, 0.0, 0
            if time.monotonic() > deadline:
                print(f"(stopped after {args.max_minutes} minutes)", flush=True)
                break
    return samples


def batch_verdict(kind: str, samples: list[BatchSample], args: argparse.Namespace) -> str:
    """Growth from the first sample to the last within `--flat-mb`; no request's peak rise over `--request-mb`."""
    growth = samples[-1].rss_mb - samples[0].rss_mb
    worst = max(s.peak_rise_mb for s in samples)
    errors = sum(s.errors for s in samples)
    flat = growth <= args.flat_mb
    bounded = worst <= args.request_mb
    return (f"{kind}: RSS {samples[0].rss_mb:.0f} MB after {samples[0].batches} batches, {samples[-1].rss_mb:.0f} MB "
            f"after {samples[-1].batches}: {growth:+.0f} MB ({'PASS' if flat else 'FAIL'}, target within "
            f"{args.flat_mb:.0f}); largest rise within one request {worst:.0f} MB ({'PASS' if bounded else 'FAIL'}, "
            f"target at most {args.request_mb:.0f}); {errors} errors")


def run_batches(args: argparse.Namespace) -> None:
    """Each kind on a fresh server with an empty cache folder."""
    for kind in args.kinds:
        with tempfile.TemporaryDirectory(prefix="pictorank-soak-") as tmp:
            started = time.monotonic()
            process, base = start_server(args, str(Path(tmp) / "cache"), Path(tmp) / "server.log")
            try:
                ready = time.monotonic() - started
                suggest = wait_for_suggest(base)
                print(f"{kind}: /ready after {ready:.0f} s, /suggest {suggest:.0f} s later; RSS then "
                      f"{rss_mb(process.pid):.0f} MB", flush=True)
                samples = batch_soak(base, process.pid, kind, args)
            finally:
                stop_server(process)
            print(batch_verdict(kind, samples, args), flush=True)
            print(f"server exit code {process.returncode}", flush=True)


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
    parser.add_argument("--sample-every", type=int, help="default 1,000 requests, or 10 batches")
    parser.add_argument("--method", default="cosine", help="unlearned method to serve when no --model")
    parser.add_argument("--model", help="model directory to serve (e.g. models/default)")
    parser.add_argument("--max-cached-strings", type=int,
                        help="the server's PICTORANK_MAX_CACHED_STRINGS (default: 20,000 for requests; the "
                        "server's own default for batches)")
    parser.add_argument("--flat-mb", type=float, help="default 50 for requests, 150 for batches")
    parser.add_argument("--max-minutes", type=float, default=90.0)
    parser.add_argument("--batches", type=int, default=0, help="run the batch soak: this many batches of each kind")
    parser.add_argument("--kinds", nargs="+", choices=["open", "explain"], default=["open", "explain"])
    parser.add_argument("--clues", type=int, default=64, help="open-vocabulary clues per batch")
    parser.add_argument("--clue-hints", type=int, default=4, help="never-seen hint texts per clue")
    parser.add_argument("--max-texts", type=int, default=10_000, help="the server's PICTORANK_MAX_TEXTS_PER_REQUEST")
    parser.add_argument("--request-mb", type=float, default=300.0)
    parser.add_argument("--open", action="store_true", help="the open-play soak: requests without options")
    parser.add_argument("--clients", type=int, default=4, help="clients at once in the open-play soak")
    args = parser.parse_args()
    if args.open:
        args.sample_every = args.sample_every or 100
        args.flat_mb = 100.0 if args.flat_mb is None else args.flat_mb
        served = f"model {args.model}" if args.model else f"method {args.method}"
        print(f"open-play soak: pictorank serve ({served}, 1 worker, empty cache dir); {args.requests} requests of "
              f"2 new hint texts and no options from {args.clients} clients", flush=True)
        run_open(args)
        return 0
    if args.batches:
        args.sample_every = args.sample_every or 10
        args.flat_mb = 150.0 if args.flat_mb is None else args.flat_mb
        served = f"model {args.model}" if args.model else f"method {args.method}"
        memo = args.max_cached_strings or "default"
        print(f"batch soak: pictorank serve ({served}, 1 worker, PICTORANK_MAX_CACHED_STRINGS={memo}, "
              f"PICTORANK_MAX_TEXTS_PER_REQUEST={args.max_texts}, empty cache dir); {args.batches} batches of "
              f"{args.clues} open-vocabulary clues of {args.clue_hints} new hint texts, kinds {args.kinds}", flush=True)
        run_batches(args)
        return 0
    args.sample_every = args.sample_every or 1_000
    args.max_cached_strings = args.max_cached_strings or 20_000
    args.flat_mb = 50.0 if args.flat_mb is None else args.flat_mb
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
