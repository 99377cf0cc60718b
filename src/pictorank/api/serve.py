"""`pictorank serve`: run the HTTP service with uvicorn.

Command-line options override the `PICTORANK_*` environment variables; they are passed on *as*
environment variables because every uvicorn worker process builds its own app from them.

Without `--model`/`--method` (and their variables) it serves `models/default` when that exists and
loads, else the default unlearned method; its first log line says which, and why, and /health
names the served model.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import multiprocessing
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pictorank.api.protocol import HeaderTimeoutProtocol
from pictorank.api.settings import Settings, export_for_workers, metrics_dir, set_metrics_dir, share_game_key
from pictorank.errors import DataError, ModelError, PictorankError
from pictorank.lexicon.words import read_table
from pictorank.ranker import DEFAULT_METHOD, METHODS
from pictorank.ranker.registry import default_model

if TYPE_CHECKING:
    import uvicorn

    from pictorank.api.service import RankingService


def add_serve_parser(commands: "argparse._SubParsersAction") -> None:
    serve = commands.add_parser("serve", help="serve POST /rank over HTTP (FastAPI + uvicorn)")
    serve.add_argument("--host", help="interface to listen on (default: $PICTORANK_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $PICTORANK_PORT or 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (default: $PICTORANK_WORKERS or 1)")
    choice = serve.add_mutually_exclusive_group()
    choice.add_argument("--model", help="model directory to serve (default: $PICTORANK_MODEL_DIR, else models/default "
                        "when it exists and loads, else --method)")
    choice.add_argument("--method", choices=METHODS, help=f"unlearned method when no model (default: $PICTORANK_METHOD or {DEFAULT_METHOD})")
    serve.add_argument("--hints", help="hint_descriptions.csv (default: the bundled data/bliss one)")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    # Lazy: the app (fastapi, faiss) and uvicorn add a noticeable import time, which
    # every other command would pay, since the CLI builds this command's parser.
    import uvicorn

    from pictorank.api.app import create_app

    settings = _settings_from(args)
    _check_paths(settings)
    if settings.workers == 1:
        # One process: load the model here, before listening, so a bad model or data file ends
        # with a one-line error (exit 2) rather than a traceback from inside uvicorn.
        app = create_app(settings, service=_load_service(settings))
        uvicorn.run(app, **uvicorn_options(settings))
        return 0
    # Each worker process builds its own app (and loads its own model) from the environment;
    # their metrics meet in prometheus-client's multiprocess directory.
    served = _choose_for_workers(settings)
    share_game_key()
    _check_service_in_child()
    _announce(served)
    _fresh_metrics_dir()
    config = uvicorn.Config("pictorank.api.app:create_app", factory=True, workers=settings.workers,
                            **uvicorn_options(settings))
    return run_workers(config)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """What uvicorn is told, with either number of workers. Every connection costs a socket, so
    each is bounded: idle ones by the keep-alive timeout, their headers by `HeaderTimeoutProtocol`,
    their number per worker by `max_connections` (the protocol's JSON 503 in place of uvicorn's
    plain-text `limit_concurrency`), and their bodies by the app's own `BodyLimits` (uvicorn has no
    header or body deadline). The protocol goes as a partial, which pickles, since uvicorn sends
    its Config to each worker process."""
    protocol = functools.partial(HeaderTimeoutProtocol, header_timeout=settings.header_timeout,
                                 max_connections=settings.max_connections)
    return {"host": settings.host, "port": settings.port, "timeout_keep_alive": settings.keep_alive_timeout,
            "http": protocol, "log_level": "info"}


def _check_service_in_child() -> None:
    """Build the service once, as every worker will, before any worker starts: a corrupt model
    or data file is then one line and exit 2 (uvicorn alone printed a traceback per worker and
    exited 0). In a child process, so the supervisor does not keep a model it never uses; the
    child leaves the vocabulary's vectors in the disk cache, so the workers start faster."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        problem = pool.submit(_service_problem).result()
    if problem is not None:
        raise PictorankError(problem)


def _service_problem() -> str | None:
    """In the child: load and self-test the service the environment describes; the error's
    message, or None. (A message, not the exception: not every PictorankError can be pickled.)"""
    from pictorank.api.service import build_service  # lazy: see cmd_serve

    try:
        build_service(Settings()).self_test()
    except PictorankError as exc:
        return str(exc)
    return None


def run_workers(config: "uvicorn.Config") -> int:
    """Run uvicorn's worker supervisor until it stops; 1 when a worker failed at start-up.

    uvicorn itself stops its supervisor when a worker fails to start, and then exits 0. The
    supervisor takes over the process's signal handlers; they are put back afterwards.
    """
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors.multiprocess import SIGNALS, Multiprocess

    handlers = {sig: signal.getsignal(sig) for sig in SIGNALS}
    sock = config.bind_socket()
    try:
        supervisor = Multiprocess(config, sockets=[sock])
        supervisor.run()
    finally:
        sock.close()
        for sig, handler in handlers.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(sig, handler)
    failed = [process.pid for process in supervisor.processes if process.exitcode == STARTUP_FAILURE]
    if failed:
        print(f"pictorank: error: worker process(es) {failed} failed to start; see the log above", file=sys.stderr)
        return 1
    return 0


def _settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the environment with the command-line options written into it."""
    overrides = {"model_dir": args.model, "method": args.method, "hints": args.hints,
                 "host": args.host, "port": args.port, "workers": args.workers}
    return export_for_workers(overrides, drop_model_dir=bool(args.method))


def wants_default_model(settings: Settings) -> bool:
    """Neither a model directory nor a method was asked for (options or environment)."""
    return settings.model_dir is None and "method" not in settings.model_fields_set


def _load_service(settings: Settings) -> "RankingService":
    """Load what to serve, then say what it is in the first log line (progress bars are off, so
    nothing comes before it; a start-up error stays a single line).

    Nothing asked for: the default model directory when it checks out and loads, else the
    unlearned method, with the reason. A model directory that was asked for and fails is an error
    (exit 2).
    """
    from pictorank.api.service import build_service  # lazy: see cmd_serve

    if not wants_default_model(settings):
        service = build_service(settings)
        _announce(f"serving {service.model_name}", service)
        return service
    directory, why = default_model(settings)
    if directory is not None:
        try:
            service = build_service(settings.model_copy(update={"model_dir": directory}))
        except ModelError as exc:
            why = f"the default model did not load ({exc})"
        else:
            _announce(f"serving {service.model_name} from {why}", service)
            return service
    service = build_service(settings)
    _announce(f"serving {service.model_name}: {why}", service)
    return service


def _choose_for_workers(settings: Settings) -> str:
    """With several workers each loads the model itself from the environment, so the default
    model directory is only checked here (config, versions, file hashes: what loading checks
    before reading weights) and, when sound, handed to them as PICTORANK_MODEL_DIR. Returns the
    log line; /health of each worker names the model it loaded."""
    workers = f"{settings.workers} workers"
    if not wants_default_model(settings):
        return f"serving {settings.model_dir or settings.method} with {workers}"
    directory, why = default_model(settings)
    if directory is None:
        return f"serving {settings.method} with {workers}: {why}"
    export_for_workers({"model_dir": directory})
    return f"serving {why} with {workers}"


def _announce(served: str, service: "RankingService | None" = None) -> None:
    """The first log line: what this server answers with (uvicorn's format, before its own lines),
    then what the service lacks (`RankingService.warnings`)."""
    print(f"INFO:     pictorank: {served}", file=sys.stderr, flush=True)
    for warning in service.warnings if service is not None else ():
        print(f"WARNING:  pictorank: {warning}", file=sys.stderr, flush=True)


def _fresh_metrics_dir() -> None:
    """PROMETHEUS_MULTIPROC_DIR, emptied (prometheus-client requires that before start-up), or a
    new temporary directory; the workers inherit it through the environment."""
    directory = metrics_dir()
    if directory is None:
        directory = tempfile.mkdtemp(prefix="pictorank-metrics-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        set_metrics_dir(directory)
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
    lexicon = settings.open_vocab_lexicon
    lists = [settings.word_list] if settings.word_list else []
    if lexicon not in ("auto", "wordnet", "none"):
        if not Path(lexicon).is_file():
            raise DataError(Path(lexicon), None, None, "lexicon not found (PICTORANK_OPEN_VOCAB_LEXICON: auto, wordnet, "
                            "none or a word list's path)")
        lists.append(Path(lexicon))
    for path in lists:  # read and checked before any model loads: a bad list is refused in moments
        read_table(path, str(path))
