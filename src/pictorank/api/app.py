"""The FastAPI application factory.

    app = create_app(Settings())          # loads model + vocabulary once, in the lifespan
    app = create_app(settings, service)   # tests/benchmarks inject an already-built service

Everything an app holds is set up here: its state (settings, service, game puzzles, icons, metrics),
the error handler, the routers (all included in `_include_routers`, so a new page is one line
there) and the middleware.
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import AsyncIterator

import anyio
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from pictorank.api.clues import ClueGiver, build_clue_giver
from pictorank.api.errors import http_error_handler, validation_error_handler
from pictorank.api.game import GamePuzzles
from pictorank.api.middleware import BodyLimits, HeadAsGet, Metrics, MetricsMiddleware, NoSniff, StrictJSON
from pictorank.api.icons import IconStore
from pictorank.api.routes import game, operations, ranking, rerank, suggest, vocabulary
from pictorank.api.service import RankingService, build_service
from pictorank.api.settings import Settings
from pictorank.encoders import Cancelled

log = logging.getLogger(__name__)
SHUTDOWN_WAIT = 60.0  # seconds a stopping service waits for a clue-model fit past its encoding
DESCRIPTION = """Ranks the candidate words of a pictogram clue (the guessing game Chameleon).

Every 4xx answer has a JSON body `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`
naming the field and the reason."""


def _include_routers(app: FastAPI) -> None:
    """Every router of the service; add new ones here."""
    app.include_router(ranking.router)
    app.include_router(vocabulary.router)
    app.include_router(rerank.router)  # /v1/rerank and /v2/rerank, for rerank API clients
    app.include_router(suggest.router)  # /suggest: the clue-giver
    app.include_router(operations.router)
    app.include_router(game.router)  # the game page at / and its /puzzles endpoints
    app.mount("/static", StaticFiles(directory=game.STATIC_DIR), name="static")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Load the model and vocabulary once per worker process and rank a test clue before the port
    opens; the clue-giver follows in the background (`_build_clue_giver_in_background`)."""
    if app.state.service is None:
        settings: Settings = app.state.settings
        app.state.service = await anyio.to_thread.run_sync(build_service, settings)
        for warning in app.state.service.warnings:  # a worker process: no serve command announces it
            log.warning("%s", warning)
    service: RankingService = app.state.service
    if not service.ready:
        await anyio.to_thread.run_sync(service.self_test)
    train = app.state.settings.suggest_train
    if app.state.clues is None and (train is None or not train.is_file()):
        app.state.clues = build_clue_giver(app.state.settings, service)  # off, and says why: no wait
    builder = _build_clue_giver_in_background(app, service) if app.state.clues is None else None
    yield
    if builder is not None and builder[0].is_alive():
        # A fit still running when the service stops: ask it to give up and wait for it, so the
        # process never exits with native code (torch, LightGBM) running in a thread.
        builder[1].set()
        builder[0].join(SHUTDOWN_WAIT)


def _build_clue_giver_in_background(app: FastAPI, service: RankingService) -> tuple[threading.Thread, threading.Event]:
    """The clue model is read back from the model folder or the cache, or on a first start with
    other training puzzles fitted (far slower); /rank answers meanwhile, /suggest answers 503
    "still loading", and /ready waits for it (pictorank.api.routes.operations.loading_parts). The
    fit shares the service's encoder under the service's lock (pictorank.api.clues)."""

    stop = threading.Event()

    def build() -> None:
        try:
            app.state.clues = build_clue_giver(app.state.settings, service, stop)
        except Cancelled:
            pass
        except Exception as exc:  # a thread's error would otherwise vanish and leave /suggest "loading"
            log.exception("the clue-giver could not be built")
            app.state.clues = ClueGiver(error=f"the clue-giver could not be built: {type(exc).__name__}: {exc}")

    thread = threading.Thread(target=build, name="clue-giver", daemon=True)
    thread.start()
    return thread, stop


def create_app(settings: Settings | None = None, service: RankingService | None = None,
               clues: ClueGiver | None = None) -> FastAPI:
    """The service's ASGI app. With `service` given nothing is loaded (it must be built already);
    the clue-giver is built at start-up unless `clues` is given too."""
    settings = settings or Settings()
    # FastAPIOffline serves /docs and /redoc with the swagger-ui/redoc files bundled in the
    # fastapi-offline package instead of a CDN, so the docs work without internet.
    app = FastAPIOffline(
        title="pictorank",
        version=version("pictorank"),
        description=DESCRIPTION,
        lifespan=lifespan,
        # No "/x/" <-> "/x" redirects: Starlette builds their Location from the Host header.
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.state.service = service
    app.state.clues = clues
    # The game's puzzles are small and load in milliseconds, so they load here, not in the lifespan.
    key = settings.game_key.get_secret_value().encode("utf-8") if settings.game_key else None
    app.state.game = GamePuzzles.load(Path(settings.game_puzzles), Path(settings.hints), key,
                                      family_safe=settings.game_family_safe)
    app.state.icons = IconStore.load(settings.hint_icons, Path(settings.hints))  # small files: quick to read
    app.state.metrics = Metrics()
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    _include_routers(app)
    # Middleware added last runs first: metrics see every request, including 408s, 413s and
    # StrictJSON's 422s; the body is complete and bounded before StrictJSON reads it.
    app.add_middleware(StrictJSON)
    app.add_middleware(BodyLimits, max_bytes=settings.max_body_bytes, timeout=settings.body_timeout)
    app.add_middleware(HeadAsGet)
    app.add_middleware(NoSniff)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"])
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    return app
