"""FastAPI dependencies shared by the routes: what a request needs before a route runs.

Each refuses the request with the service's error shape (`pictorank.api.errors`) when it cannot
be served, so the routes themselves only handle requests that can be answered. The `...Dep`
aliases are what route signatures use (`service: ServiceDep`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from pictorank.api.clues import ClueGiver
from pictorank.api.errors import api_error, still_loading
from pictorank.api.game import GamePuzzles
from pictorank.api.icons import IconStore
from pictorank.api.service import RankingService
from pictorank.api.settings import Settings


def get_service(request: Request) -> RankingService:
    """The service loaded by the app's lifespan (or injected by a test); 503 until it is there."""
    service: RankingService | None = request.app.state.service
    if service is None:
        raise still_loading("the model")
    return service


def get_settings(request: Request) -> Settings:
    """The settings the app was created with (limits the routes enforce)."""
    settings: Settings = request.app.state.settings
    return settings


def get_game(request: Request) -> GamePuzzles:
    """The game's puzzles; 503 with the reason when they could not be loaded at start-up."""
    game: GamePuzzles = request.app.state.game
    if game.error:
        raise api_error(503, [], game.error, "game_unavailable")
    return game


def get_icons(request: Request) -> IconStore:
    """The pictogram drawings, read when the app was created (empty when there are none)."""
    icons: IconStore = request.app.state.icons
    return icons


def get_clue_giver(request: Request) -> ClueGiver:
    """The clue-giver built at start-up; 503 with the reason when it has no training puzzles, or
    while the app is still starting."""
    clues: ClueGiver | None = getattr(request.app.state, "clues", None)
    if clues is None:
        raise still_loading("the clue-giver")
    if clues.error:
        raise api_error(503, [], clues.error, "suggest_unavailable")
    return clues


def require_json(request: Request) -> None:
    """POST bodies are JSON; anything else is a 415 saying so, before any parsing."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        msg = f"expected application/json, got {content_type[:100]!r}"
        raise api_error(415, ["header", "content-type"], msg, "unsupported_media_type")


ServiceDep = Annotated[RankingService, Depends(get_service)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
GameDep = Annotated[GamePuzzles, Depends(get_game)]
IconsDep = Annotated[IconStore, Depends(get_icons)]
ClueGiverDep = Annotated[ClueGiver, Depends(get_clue_giver)]
