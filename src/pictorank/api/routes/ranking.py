"""POST /rank and /rank/batch: requests become the service's `Clue`s, its `Ranked` answers
become responses. Unknown hint ids are refused here, with the ids named, before any ranking."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pictorank.api.deps import ServiceDep, require_json
from pictorank.api.errors import Loc, api_error, documented
from pictorank.api.schemas import RankBatchRequest, RankBatchResponse, RankRequest, RankResponse
from pictorank.api.service import Clue, Ranked, RankingService

router = APIRouter(tags=["ranking"], dependencies=[Depends(require_json)])
ERRORS = documented({
    413: "request body too large",
    415: "the body is not application/json",
    422: "invalid request: `detail` names each field and why",
    503: "the model is still loading",
})


def _clue(service: RankingService, puzzle: RankRequest, loc: Loc) -> Clue:
    """The clue of one request; an unknown hint id, or no options while open-vocabulary mode is
    off, is a 422 at `loc` (which puzzle of a batch)."""
    if puzzle.hint_texts:
        hints = tuple(puzzle.hint_texts)
    else:
        unknown = service.unknown_hints(puzzle.hints)
        if unknown:
            raise api_error(422, [*loc, "hints"], f"unknown hint ids: {unknown[:20]}", "unknown_hint")
        hints = tuple(service.describe(puzzle.hints))
    if puzzle.options is None and service.index is None:
        raise api_error(422, [*loc, "options"], "options are required: open-vocabulary mode is off", "missing")
    return Clue(hints, None if puzzle.options is None else tuple(puzzle.options))


def _response(service: RankingService, puzzle: RankRequest, ranked: Ranked) -> RankResponse:
    ranking = ranked.ranking[: puzzle.top_k]
    return RankResponse(
        ranking=ranking,
        answer="|".join(ranking),
        scores=ranked.scores[: puzzle.top_k],
        model=service.model_name,
        mode="options" if puzzle.options is not None else "open_vocabulary",
    )


@router.post("/rank", response_model=RankResponse, responses=ERRORS)
def rank(puzzle: RankRequest, service: ServiceDep) -> RankResponse:
    """Rank the options of one clue (or, without options, the service's answer vocabulary)."""
    [ranked] = service.rank([_clue(service, puzzle, ["body"])])
    return _response(service, puzzle, ranked)


@router.post("/rank/batch", response_model=RankBatchResponse, responses=ERRORS)
def rank_batch(batch: RankBatchRequest, service: ServiceDep) -> RankBatchResponse:
    """Rank several clues in one request; results come in request order."""
    clues = [_clue(service, puzzle, ["body", "puzzles", i]) for i, puzzle in enumerate(batch.puzzles)]
    results = service.rank(clues)
    return RankBatchResponse(results=[_response(service, p, r) for p, r in zip(batch.puzzles, results)])
