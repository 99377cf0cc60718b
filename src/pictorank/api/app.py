"""The FastAPI application factory.

    app = create_app(Settings())          # loads model + vocabulary once, in the lifespan
    app = create_app(settings, service)   # tests/benchmarks inject an already-built service

Routers are included in one place, `_include_routers`, so a new page is one line there.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import AsyncIterator

import anyio
from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from pictorank.api import game, routes
from pictorank.api.middleware import BodySizeLimit, Metrics, MetricsMiddleware
from pictorank.api.service import RankingService, build_service
from pictorank.api.settings import Settings

DESCRIPTION = """Ranks the candidate words of a pictogram clue (the guessing game Chameleon).

Every 4xx answer has a JSON body `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`
naming the field and the reason."""


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Every HTTP error in one shape, `{"detail": [{"loc", "msg", "type"}]}`, like validation errors.

    FastAPI answers a body it cannot decode at all (e.g. invalid UTF-8) with a bare 400; that is
    bad input like any malformed JSON, so it becomes the same 422.
    """
    if isinstance(exc.detail, list):
        detail, status = exc.detail, exc.status_code
    elif exc.status_code == 400:
        detail = [{"loc": ["body"], "msg": "request body is not valid JSON (UTF-8 expected)", "type": "json_invalid"}]
        status = 422
    else:
        detail, status = [{"loc": [], "msg": str(exc.detail), "type": "http_error"}], exc.status_code
    return JSONResponse({"detail": detail}, status_code=status, headers=getattr(exc, "headers", None))


def _include_routers(app: FastAPI) -> None:
    """Every router of the service; add new ones here."""
    app.include_router(routes.router)
    game.include_game(app)  # the game page at / and its /puzzles endpoints


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Load the model and vocabulary once per worker process, then rank a test clue."""
    if app.state.service is None:
        settings: Settings = app.state.settings
        app.state.service = await anyio.to_thread.run_sync(build_service, settings)
    service: RankingService = app.state.service
    if not service.ready:
        await anyio.to_thread.run_sync(service.self_test)
    yield


def create_app(settings: Settings | None = None, service: RankingService | None = None) -> FastAPI:
    """The service's ASGI app. With `service` given nothing is loaded (it must be built already)."""
    settings = settings or Settings()
    # FastAPIOffline serves /docs and /redoc with the swagger-ui/redoc files bundled in the
    # fastapi-offline package instead of a CDN, so the docs work without internet.
    app = FastAPIOffline(
        title="pictorank",
        version=version("pictorank"),
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.service = service
    app.state.metrics = Metrics()
    app.add_exception_handler(StarletteHTTPException, _http_error)
    _include_routers(app)
    # Middleware added last runs first: metrics see every request, including 413s.
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"])
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    return app

