"""`pictorank serve`: run the HTTP service with uvicorn.

Command-line options override the `PICTORANK_*` environment variables; they are passed on *as*
environment variables because every uvicorn worker process builds its own app from them.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
from pathlib import Path

from pydantic import ValidationError

from pictorank.api.settings import Settings
from pictorank.config import use_offline_environment
from pictorank.errors import DataError, SettingsError
from pictorank.ranker import DEFAULT_METHOD, METHODS


def add_serve_parser(commands: "argparse._SubParsersAction") -> None:
    serve = commands.add_parser("serve", help="serve POST /rank over HTTP (FastAPI + uvicorn)")
    serve.add_argument("--host", help="interface to listen on (default: $PICTORANK_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $PICTORANK_PORT or 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (default: $PICTORANK_WORKERS or 1)")
    choice = serve.add_mutually_exclusive_group()
    choice.add_argument("--model", help="model directory to serve (default: $PICTORANK_MODEL_DIR)")
    choice.add_argument("--method", choices=METHODS, help=f"unlearned method when no model (default: $PICTORANK_METHOD or {DEFAULT_METHOD})")
    serve.add_argument("--hints", help="hint_descriptions.csv (default: the bundled data/bliss one)")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    # Lazy: the app (fastapi, faiss) and uvicorn take 0.2-0.3 s more to import (measured), which
    # every other command would pay, since the CLI builds this command's parser.
    import uvicorn

    from pictorank.api.app import create_app
    from pictorank.api.service import build_service

    settings = _settings_from(args)
    _check_paths(settings)
    if settings.workers == 1:
        # One process: load the model here, before listening, so a bad model or data file ends
        # with a one-line error (exit 2) rather than a traceback from inside uvicorn.
        app = create_app(settings, service=build_service(settings))
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    else:
        # Each worker process builds its own app (and loads its own model) from the environment;
        # their metrics meet in prometheus-client's multiprocess directory.
        _fresh_metrics_dir()
        uvicorn.run("pictorank.api.app:create_app", factory=True, host=settings.host, port=settings.port,
                    workers=settings.workers, log_level="info")
    return 0


def _settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the environment with the command-line options written into it."""
    if args.method:  # an explicit method beats a model directory from the environment
        os.environ.pop("PICTORANK_MODEL_DIR", None)
    overrides = {"MODEL_DIR": args.model, "METHOD": args.method, "HINTS": args.hints,
                 "HOST": args.host, "PORT": args.port, "WORKERS": args.workers}
    for name, value in overrides.items():
        if value is not None:
            os.environ[f"PICTORANK_{name}"] = str(value)
    use_offline_environment()
    try:
        return Settings()
    except ValidationError as exc:
        error = exc.errors()[0]
        variable = "PICTORANK_" + "_".join(str(part) for part in error["loc"][:1]).upper()
        raise SettingsError(variable, error["msg"]) from None


def _fresh_metrics_dir() -> None:
    """PROMETHEUS_MULTIPROC_DIR, emptied (prometheus-client requires that before start-up), or a
    new temporary directory; the workers inherit it through the environment."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="pictorank-metrics-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    for stale in Path(directory).glob("*.db"):
        stale.unlink()


def _check_paths(settings: Settings) -> None:
    """Missing files are a one-line error before any worker starts (DataError: exit code 2)."""
    if settings.model_dir is not None and not settings.model_dir.is_dir():
        raise DataError(settings.model_dir, None, None, "model directory not found (PICTORANK_MODEL_DIR / --model)")
    for path in [settings.hints, *settings.vocabulary_files, *([settings.word_list] if settings.word_list else [])]:
        if not path.is_file():
            raise DataError(path, None, None, "file not found (set PICTORANK_DATA_DIR or the path's PICTORANK_ variable)")
