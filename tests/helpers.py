"""Tiny builders for handwritten task files, so each malformed case is one readable line in a test."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pictorank.puzzles import PUZZLE_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
PICTORANK = str(Path(sys.executable).with_name("pictorank"))  # the installed console script
DATA = ROOT / "data" / "bliss"
NO_CLUE_TRAINING = ROOT / "tests" / "no-clue-giver-training-in-tests.csv"  # never created
SMALL_TRAIN_ROWS, SMALL_STOP_ROWS = 600, 150  # the session model's train slice; val[:150] gives its saved vocabulary options, val[150:] is held out

class WordHashModel:
    """Stands in for a SentenceTransformer: a text's vector is the normalised sum of fixed random
    vectors of its words, so texts sharing words are close and the real model need not load."""

    def __init__(self, dimension: int = 32) -> None:
        self.dimension = dimension

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        return np.stack([self._vector(text) for text in texts]) if texts else np.zeros((0, self.dimension))

    def _vector(self, text: str) -> np.ndarray:
        words = re.findall(r"[a-z0-9]+", text.lower()) or [""]
        v = sum(np.random.default_rng(zlib.crc32(w.encode())).normal(size=self.dimension) for w in words)
        return v / np.linalg.norm(v)


HINTS_CSV = 'hintID,description\n1,animal\n2,"water, sea, ocean"\n3,"hair, ""fur"""\n4,fire\n'


def puzzle_row(
    datapoint_id: str = "v1",
    subtask_id: int | str = 1,
    hint_ids: Sequence[int] = (1, 2),
    choices: Sequence[str] = ("seal", "fish", "candle", "rock"),
    answer: str | None = "seal",
    **override: str,
) -> dict[str, str]:
    """One consistent CSV row (pipe and JSON columns agree); `override` sets raw fields to break them."""
    row = {
        "datapointID": datapoint_id,
        "subtaskID": str(subtask_id),
        "hints": "|".join(str(h) for h in hint_ids),
        "hints_json": json.dumps(list(hint_ids)),
        "options": "|".join(choices),
        "options_json": json.dumps(list(choices), ensure_ascii=False),
    }
    if answer is not None:
        row["answer"] = answer
    row.update(override)
    return row


def write_rows(path: Path, rows: Sequence[dict[str, str]], columns: Sequence[str] | None = None) -> Path:
    """Write `rows` as a CSV with the csv module's quoting; `columns` defaults to the task's."""
    if columns is None:
        columns = list(PUZZLE_COLUMNS) + (["answer"] if rows and "answer" in rows[0] else [])
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_hints(path: Path, text: str = HINTS_CSV) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def free_port() -> int:
    """A TCP port nobody listens on, for a server started by a test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 30) -> None:
    """Ask a server to shut down as Ctrl-C would (so it exits cleanly), then kill it if it hangs."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class Server:
    """A running `pictorank serve` process: its base URL, the process and its log file."""

    url: str
    process: subprocess.Popen
    log: Path

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]


def _answers_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ready", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def serving(args: Sequence[str], log: Path, env: dict[str, str] | None = None,
            ready: Callable[[str], bool] | None = None, timeout: float = 240,
            drop: Sequence[str] = ()) -> Iterator[Server]:
    """`pictorank serve ARGS` on a free 127.0.0.1 port, once /ready (and `ready(url)`, when given)
    answers; stopped as Ctrl-C would stop it afterwards. The one way tests start a real server.

    Without PICTORANK_SUGGEST_TRAIN in `env` the server has no training puzzles for the
    clue-giver, so it never fits one in the background: no test waits for, or competes with, a
    fit it does not test. The timeout only bounds a server that never comes up.
    """
    port = free_port()
    inherited = {key: value for key, value in os.environ.items() if key not in drop}
    environment = {**inherited, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "PICTORANK_SUGGEST_TRAIN": str(NO_CLUE_TRAINING), **(env or {})}
    with open(log, "w") as out:
        process = subprocess.Popen([PICTORANK, "serve", "--host", "127.0.0.1", "--port", str(port), *args],
                                   env=environment, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + timeout
        while not (_answers_ready(server.url) and (ready is None or ready(server.url))):
            if process.poll() is not None:
                raise AssertionError(f"pictorank serve exited with {process.returncode}:\n{server.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"pictorank serve not ready after {timeout} s:\n{server.tail()}")
            time.sleep(0.3)
        yield server
    finally:
        stop_process(process)


@contextmanager
def in_thread(app: Any, options: dict[str, Any]) -> Iterator[str]:
    """`app` behind a real uvicorn in a thread of this process, started with `options` (what
    `pictorank serve` passes, pictorank.api.serve.uvicorn_options); yields "host:port"."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"{options['host']}:{options['port']}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
