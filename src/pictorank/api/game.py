"""The game page: a browser front-end at `/` and the two endpoints it plays with.

- GET  /puzzles/random          a puzzle from the game's data set, *without* its answer;
- POST /puzzles/{id}/guess      the player's pick: right or wrong, the answer, pictorank's top 10.

The puzzles (a CSV with answers: `PICTORANK_GAME_PUZZLES`, by default the bundled val.csv) are
loaded once when the app is created. If they cannot be loaded the rest of the service still
works and the game endpoints answer 503 with the reason, so a deployment serving another
vocabulary does not fail because of the demo data.

The page itself (static/index.html, app.js, style.css) uses no CDN: it works offline.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from pictorank.api.routes import get_service, require_json
from pictorank.api.schemas import ErrorResponse, Hint
from pictorank.api.service import RankingService
from pictorank.errors import DataError
from pictorank.puzzles import Puzzle, load_hints, load_puzzles
from pictorank.submission import MAX_ANSWERS

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
log = logging.getLogger(__name__)
router = APIRouter(tags=["game"])


@dataclass
class GamePuzzles:
    """The puzzles the game draws from, with their hint descriptions; `error` when unavailable."""

    puzzles: dict[str, Puzzle] = field(default_factory=dict)
    descriptions: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def load(cls, puzzles_file: Path, hints_file: Path) -> "GamePuzzles":
        """Every puzzle of `puzzles_file`, checked against the served vocabulary; never raises."""
        try:
            vocab = load_hints(hints_file)
            puzzles = load_puzzles(puzzles_file, vocab)
            if not puzzles:
                raise DataError(puzzles_file, None, None, "no puzzles in file")
            if any(p.answer is None for p in puzzles):
                raise DataError(puzzles_file, None, "answer", "game puzzles need an answer column (use a val/train file)")
        except DataError as exc:
            log.warning("game page disabled: %s", exc)
            return cls(error=f"the game has no puzzles: {exc} (set PICTORANK_GAME_PUZZLES)")
        return cls({p.datapoint_id: p for p in puzzles}, vocab.descriptions)


class GamePuzzle(BaseModel):
    """A puzzle as the player sees it: no answer."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "id": "val_000000", "subtask": 1, "hints": [{"id": 502, "description": "fire"}, {"id": 319, "description": "light"}],
        "options": ["cartography", "encouragement", "flame", "leaf"]}]})

    id: str
    subtask: int
    hints: list[Hint] = Field(description="pictograms in clue order; the first is the main idea")
    options: list[str]


class Guess(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"guess": "flame"}]})

    guess: str = Field(min_length=1, max_length=200, description="one of the puzzle's options")


class GuessResult(BaseModel):
    """The verdict, the answer, and how pictorank itself ranked the options."""

    correct: bool
    guess: str
    answer: str
    ranking: list[str] = Field(description=f"pictorank's top {MAX_ANSWERS}, most likely first")
    scores: list[float]
    answer_position: int = Field(description="1-based position of the answer in pictorank's full ranking")
    model: str


ERRORS = {
    404: {"model": ErrorResponse, "description": "no such puzzle"},
    503: {"model": ErrorResponse, "description": "the game has no puzzles, or the model is still loading"},
}


def _error(status: int, loc: list[str | int], msg: str, kind: str) -> HTTPException:
    return HTTPException(status_code=status, detail=[{"loc": loc, "msg": msg, "type": kind}])


def get_game(request: Request) -> GamePuzzles:
    game: GamePuzzles = request.app.state.game
    if game.error:
        raise _error(503, [], game.error, "game_unavailable")
    return game


@router.get("/puzzles/random", response_model=GamePuzzle, responses=ERRORS)
def random_puzzle(
    subtask: int | None = Query(None, ge=1, le=99, description="only puzzles of this subtask (1: 4, 2: 10, 3: 30 options)"),
    game: GamePuzzles = Depends(get_game),
) -> GamePuzzle:
    """A random puzzle to guess; the answer is only revealed by POST /puzzles/{id}/guess."""
    ids = [i for i, p in game.puzzles.items() if subtask is None or p.subtask_id == subtask]
    if not ids:
        raise _error(404, ["query", "subtask"], f"no puzzles of subtask {subtask}", "not_found")
    puzzle = game.puzzles[game.rng.choice(ids)]
    hints = [Hint(id=h, description=game.descriptions[h]) for h in puzzle.hints]
    return GamePuzzle(id=puzzle.datapoint_id, subtask=puzzle.subtask_id, hints=hints, options=list(puzzle.options))


@router.post("/puzzles/{puzzle_id}/guess", response_model=GuessResult, dependencies=[Depends(require_json)],
             responses={**ERRORS, 415: {"model": ErrorResponse, "description": "the body is not application/json"},
                        422: {"model": ErrorResponse, "description": "the guess is not an option, or the body is invalid"}})
def guess(
    puzzle_id: str,
    body: Guess,
    game: GamePuzzles = Depends(get_game),
    service: RankingService = Depends(get_service),
) -> GuessResult:
    """Check the player's guess and show how pictorank ranks the same options."""
    puzzle = game.puzzles.get(puzzle_id)
    if puzzle is None:
        raise _error(404, ["path", "puzzle_id"], f"no puzzle {puzzle_id[:100]!r}", "not_found")
    if body.guess not in puzzle.options:
        raise _error(422, ["body", "guess"], f"{body.guess[:100]!r} is not one of this puzzle's options", "not_an_option")
    hints = [game.descriptions[h] for h in puzzle.hints]
    [ranked] = service.rank([(hints, list(puzzle.options))])
    return GuessResult(
        correct=body.guess == puzzle.answer,
        guess=body.guess,
        answer=puzzle.answer,
        ranking=ranked.ranking[:MAX_ANSWERS],
        scores=ranked.scores[:MAX_ANSWERS],
        answer_position=ranked.ranking.index(puzzle.answer) + 1,
        model=service.model_name,
    )


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    """The game page."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")


def include_game(app: FastAPI) -> None:
    """Load the game's puzzles and add the page and its endpoints to `app` (see create_app)."""
    settings = app.state.settings
    app.state.game = GamePuzzles.load(Path(settings.game_puzzles), Path(settings.hints))
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
