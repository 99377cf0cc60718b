"""The game page: a browser front-end at `/` (files in `STATIC_DIR`, served at /static) and the
two endpoints it plays with.

- GET  /puzzles/random          a puzzle from the game's data set, *without* its answer;
- POST /puzzles/{id}/guess      the player's pick: right or wrong, the answer, pictorank's top 10
                                with how sure it was and why (explanations of the ten).

The page itself (static/index.html, app.js, style.css) uses no CDN: it works offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse

from pictorank.api.deps import GameDep, IconsDep, ServiceDep, require_json
from pictorank.api.errors import api_error, documented
from pictorank.api.schemas import GamePuzzle, Guess, GuessResult, Hint
from pictorank.api.routes.ranking import explanation_bodies
from pictorank.api.service import Clue
from pictorank.submission import MAX_ANSWERS

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"
router = APIRouter(tags=["game"])
ERRORS = {
    404: "no such puzzle",
    503: "the game has no puzzles, or the model is still loading",
}
GUESS_ERRORS = {
    **ERRORS,
    415: "the body is not application/json",
    422: "the guess is not an option, or the body is invalid",
}


@router.get("/puzzles/random", response_model=GamePuzzle, responses=documented(ERRORS))
def random_puzzle(
    game: GameDep,
    icons: IconsDep,
    subtask: Annotated[int | None, Query(ge=1, le=99, description="only puzzles of this subtask (1: 4, 2: 10, 3: 30 options)")] = None,
) -> GamePuzzle:
    """A random puzzle to guess; the answer is only revealed by POST /puzzles/{id}/guess."""
    ids = [i for i, p in game.puzzles.items() if subtask is None or p.subtask_id == subtask]
    if not ids:
        raise api_error(404, ["query", "subtask"], f"no puzzles of subtask {subtask}", "not_found")
    puzzle = game.puzzles[game.rng.choice(ids)]
    hints = [Hint(id=h, description=game.descriptions[h], icon=icons.url(h)) for h in puzzle.hints]
    return GamePuzzle(id=puzzle.datapoint_id, subtask=puzzle.subtask_id, hints=hints, options=list(puzzle.options))


@router.post("/puzzles/{puzzle_id}/guess", response_model=GuessResult, dependencies=[Depends(require_json)],
             responses=documented(GUESS_ERRORS))
def guess(puzzle_id: str, body: Guess, game: GameDep, service: ServiceDep) -> GuessResult:
    """Check the player's guess and show how pictorank ranks the same options."""
    puzzle = game.puzzles.get(puzzle_id)
    if puzzle is None:
        raise api_error(404, ["path", "puzzle_id"], f"no puzzle {puzzle_id[:100]!r}", "not_found")
    if body.guess not in puzzle.options:
        raise api_error(422, ["body", "guess"], f"{body.guess[:100]!r} is not one of this puzzle's options", "not_an_option")
    hints = tuple(game.descriptions[h] for h in puzzle.hints)
    [ranked] = service.rank([Clue(hints, tuple(puzzle.options), explain=MAX_ANSWERS)])
    return GuessResult(
        correct=body.guess == puzzle.answer,
        guess=body.guess,
        answer=puzzle.answer,
        ranking=ranked.ranking[:MAX_ANSWERS],
        scores=ranked.scores[:MAX_ANSWERS],
        answer_position=ranked.ranking.index(puzzle.answer) + 1,
        model=service.model_name,
        confidence=ranked.confidence,
        explanations=explanation_bodies(ranked.explanations),
    )


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    """The game page."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")
