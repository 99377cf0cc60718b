"""The game page: a browser front-end at `/` (files in `STATIC_DIR`, served at /static) and the
endpoints it plays with.

- GET  /puzzles/random          a puzzle from the game's data set, *without* its answer;
- POST /puzzles/{id}/guess      the player's pick: right or wrong, the answer, pictorank's top 10
                                with how sure it was and why (explanations of the ten);
- GET  /clues/random            the Clue mode: pictorank picks a secret word among a puzzle's
                                options and gives its clue, *without* the word or the reasons
                                (they name it; see pictorank.api.game for how the word stays secret);
- POST /clues/{id}/guess        the player's pick: right or wrong, the word, the clue's reasons.

The page itself (static/index.html, app.js, style.css) uses no CDN: it works offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse

from pictorank.api.clues import ClueGiver
from pictorank.api.deps import ClueGiverDep, GameDep, IconsDep, ServiceDep, require_json
from pictorank.api.errors import api_error, documented
from pictorank.api.game import ClueRound
from pictorank.api.routes.ranking import explanation_bodies
from pictorank.api.routes.suggest import suggested_clue
from pictorank.api.schemas import ClueGuessResult, CluePictogram, GameClue, GamePuzzle, Guess, GuessResult, Hint
from pictorank.api.service import Clue
from pictorank.errors import UsageError
from pictorank.submission import MAX_ANSWERS
from pictorank.suggest import Suggestion

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
CLUE_ERRORS = {
    404: "no such round, or no puzzles of that subtask",
    503: "the game has no puzzles, the model or the clue-giver is still loading, or the clue-giver is off",
}
CLUE_GUESS_ERRORS = {**CLUE_ERRORS, 415: GUESS_ERRORS[415], 422: GUESS_ERRORS[422]}
CLUE_SUBTASK = 2  # 10 options: the secret word and 9 words to tell it from


@router.get("/puzzles/random", response_model=GamePuzzle, responses=documented(ERRORS))
def random_puzzle(
    game: GameDep,
    icons: IconsDep,
    subtask: Annotated[int | None, Query(ge=1, le=99, description="only puzzles of this subtask (1: 4, 2: 10, 3: 30 options)")] = None,
) -> GamePuzzle:
    """A random puzzle to guess; the answer is only revealed by POST /puzzles/{id}/guess."""
    puzzle = game.draw(subtask)
    if puzzle is None:
        raise api_error(404, ["query", "subtask"], f"no puzzles of subtask {subtask}", "not_found")
    hints = [Hint(id=h, description=game.descriptions[h], icon=icons.url(h)) for h in puzzle.hints]
    return GamePuzzle(id=puzzle.datapoint_id, subtask=puzzle.subtask_id, hints=hints, options=list(puzzle.options))


@router.post("/puzzles/{puzzle_id:path}/guess", response_model=GuessResult, dependencies=[Depends(require_json)],
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
        ranking=ranked.options[:MAX_ANSWERS],
        scores=ranked.scores[:MAX_ANSWERS],
        answer_position=ranked.options.index(puzzle.answer) + 1,
        model=service.model_name,
        confidence=ranked.confidence,
        explanations=explanation_bodies(ranked.explanations),
    )


@router.get("/clues/random", response_model=GameClue, responses=documented(CLUE_ERRORS))
def random_clue(
    game: GameDep,
    clues: ClueGiverDep,
    icons: IconsDep,
    subtask: Annotated[int, Query(ge=1, le=99, description="the puzzle's subtask (1: 4, 2: 10, 3: 30 options)")] = CLUE_SUBTASK,
) -> GameClue:
    """pictorank picks a secret word among a random puzzle's options and clues it; the word and
    what each pictogram contributes are only revealed by POST /clues/{id}/guess."""
    puzzle = game.draw(subtask)
    if puzzle is None:
        raise api_error(404, ["query", "subtask"], f"no puzzles of subtask {subtask}", "not_found")
    round_ = game.new_round(puzzle)
    clue = _clue_of(round_, clues)
    round_ = game.clued(round_, tuple(clue.hint_ids))  # the guess explains exactly this clue
    pictograms = [CluePictogram(id=p.id, description=p.description, icon=icons.url(p.id), role=p.role)  # type: ignore[arg-type]
                  for p in clue.pictograms]
    return GameClue(id=round_.id, subtask=puzzle.subtask_id, pictograms=pictograms, options=list(puzzle.options))


@router.post("/clues/{round_id:path}/guess", response_model=ClueGuessResult, dependencies=[Depends(require_json)],
             responses=documented(CLUE_GUESS_ERRORS))
def guess_clue(round_id: str, body: Guess, game: GameDep, clues: ClueGiverDep, icons: IconsDep) -> ClueGuessResult:
    """Check the player's guess of a Clue-mode round: the word, and why the clue was chosen."""
    round_ = game.round(round_id)
    if round_ is None:
        raise api_error(404, ["path", "round_id"], f"no round {round_id[:100]!r}", "not_found")
    if body.guess not in round_.puzzle.options:
        raise api_error(422, ["body", "guess"], f"{body.guess[:100]!r} is not one of this round's options", "not_an_option")
    clue = _shown_clue(round_, clues) if round_.clue else _clue_of(round_, clues)
    return ClueGuessResult(correct=body.guess == round_.word, guess=body.guess, answer=round_.word,
                           clue=suggested_clue(clue, icons), guesser=clues.guesser)  # type: ignore[arg-type]


def _shown_clue(round_: ClueRound, clues: ClueGiver) -> Suggestion:
    """The clue the round showed (its id carries the pictograms), explained; an id whose
    pictograms are no clue of this vocabulary names no round."""
    try:
        return clues.explain(round_.word, list(round_.avoid), round_.clue)
    except UsageError:
        raise api_error(404, ["path", "round_id"], f"no round {round_.id[:100]!r}", "not_found") from None


def _clue_of(round_: ClueRound, clues: ClueGiver) -> Suggestion:
    """The clue the suggester chooses for the round's word. A word the clue-giver refuses or cannot
    clue (another data set's over-long option, say) is a 503 naming it, never a 500."""
    try:
        _, _, suggestions = clues.suggest(round_.word, list(round_.avoid), max_length=4, top=1, use_known=False)
    except UsageError as exc:
        raise api_error(503, [], f"pictorank cannot clue this round's word: {exc}", "suggest_unavailable") from None
    if not suggestions:
        raise api_error(503, [], "pictorank found no clue for this round's word", "suggest_unavailable")
    return suggestions[0]


# The page loads only its own files and talks only to this service; no other site may frame it
# (clickjacking). Its script sets no inline styles or handlers, so nothing inline is allowed.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    """The game page."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers=PAGE_HEADERS)


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    """The page's icon (an SVG drawing), where browsers look for it: no 404 in their console."""
    return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})
