"""Issue #12, item 9: `pictorank serve --workers N` checks the service before it starts workers,
and a worker that fails at start-up makes serve exit non-zero (uvicorn alone exits 0)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import uvicorn
from helpers import free_port

from pictorank.api.serve import run_workers

PICTORANK = [str(Path(sys.executable).with_name("pictorank"))]  # the installed console script


def test_serve_with_workers_refuses_a_corrupt_model_in_one_line(tmp_path: Path) -> None:
    corrupt = tmp_path / "model"
    corrupt.mkdir()
    (corrupt / "ranker.json").write_text("{not json")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PICTORANK_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([*PICTORANK, "serve", "--port", str(free_port()), "--workers", "2", "--model", str(corrupt)],
                            capture_output=True, text=True, timeout=180, env=env)
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1 and "ranker.json" in result.stderr and "Traceback" not in result.stderr


def failing_app():
    """An app factory whose start-up fails, as a worker's would if its model could not load."""
    async def app(scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.failed", "message": "no model here"})
            return

    return app


def test_workers_that_fail_at_start_up_are_a_non_zero_exit() -> None:
    config = uvicorn.Config(f"{__name__}:failing_app", factory=True, host="127.0.0.1", port=free_port(), workers=2,
                            log_level="warning")
    interrupt = signal.getsignal(signal.SIGINT)
    assert run_workers(config) != 0
    assert signal.getsignal(signal.SIGINT) is interrupt  # uvicorn's supervisor had taken it over
