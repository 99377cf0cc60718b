"""POST /rank and /rank/batch: requests become the service's `Clue`s, its `Ranking` answers
become responses. Unknown hint ids are refused here, with the ids named, before any ranking."""

from __future__ import annotations

from typing import Sequence

from fastapi import APIRouter, Depends

from pictorank.api.deps import ServiceDep, SettingsDep, require_json
from pictorank.api.errors import Loc, api_error, documented
from pictorank.api.limits import check_request_cost
from pictorank.api.schemas import (
    HintPull,
    OptionExplanation,
    RankBatchRequest,
    RankBatchResponse,
    RankRequest,
    RankResponse,
)
from pictorank.api.service import Clue, RankingService
from pictorank.ranker import Ranking
from pictorank.ranker.explain import Explanation

router = APIRouter(tags=["ranking"], dependencies=[Depends(require_json)])
ERRORS = documented({
    413: "request body too large, or more distinct texts than the service takes per request",
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
    options = None if puzzle.options is None else tuple(puzzle.options)
    return Clue(hints, options, frozenset(puzzle.exclude), puzzle.top_k if puzzle.explain else 0)


def _response(service: RankingService, puzzle: RankRequest, ranked: Ranking) -> RankResponse:
    ranking = ranked.options[: puzzle.top_k]
    return RankResponse(
        ranking=ranking,
        answer="|".join(ranking),
        scores=ranked.scores[: puzzle.top_k],
        model=service.model_name,
        mode="options" if puzzle.options is not None else "open_vocabulary",
        confidence=ranked.confidence,
        none_of_these=None if ranked.none_of_these is None else round(ranked.none_of_these, 4),
        explanations=explanation_bodies(ranked.explanations) if puzzle.explain else None,
    )


def explanation_bodies(explanations: Sequence[Explanation]) -> list[OptionExplanation]:
    """The ranker's explanations as response bodies (the game's guess answer uses them too)."""
    return [
        OptionExplanation(
            option=e.option,
            hints=[HintPull(hint=hint, pull=round(pull, 4)) for hint, pull in zip(e.hints, e.pulls)],
            groups={name: round(value, 4) for name, value in e.groups.items()},
            summary=e.summary,
        )
        for e in explanations
    ]


@router.post("/rank", response_model=RankResponse, responses=ERRORS)
def rank(puzzle: RankRequest, service: ServiceDep, settings: SettingsDep) -> RankResponse:
    """Rank the options of one clue (or, without options, the service's answer vocabulary)."""
    clue = _clue(service, puzzle, ["body"])
    check_request_cost([clue], settings.max_texts_per_request, settings.max_rows_per_request,
                       service.open_vocab_candidates)
    [ranked] = service.rank([clue])
    return _response(service, puzzle, ranked)


@router.post("/rank/batch", response_model=RankBatchResponse, responses=ERRORS)
def rank_batch(batch: RankBatchRequest, service: ServiceDep, settings: SettingsDep) -> RankBatchResponse:
    """Rank several clues in one request; results come in request order."""
    clues = [_clue(service, puzzle, ["body", "puzzles", i]) for i, puzzle in enumerate(batch.puzzles)]
    check_request_cost(clues, settings.max_texts_per_request, settings.max_rows_per_request,
                       service.open_vocab_candidates)
    results = service.rank(clues)
    return RankBatchResponse(results=[_response(service, p, r) for p, r in zip(batch.puzzles, results)])
