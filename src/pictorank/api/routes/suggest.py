"""POST /suggest: the clue-giver. A secret word in, ordered pictograms out (main idea first), each
clue judged by a guesser against the words it must not be taken for (see `pictorank.api.clues`).

The request's limits are the schema's (blank, over-long or '|' words, more than 100 avoid words,
non-integer sizes: 422 naming the field); what gets past them is checked once more by the
clue-giver's own rules, whose refusal is a 422 too, never a 500.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends

from pictorank.api.deps import ClueGiverDep, IconsDep, ServiceDep, require_json
from pictorank.api.errors import api_error, documented
from pictorank.api.icons import IconStore
from pictorank.api.schemas import SuggestedClue, SuggestedPictogram, SuggestRequest, SuggestResponse
from pictorank.errors import UsageError
from pictorank.suggest import Suggestion

router = APIRouter(tags=["suggest"], dependencies=[Depends(require_json)])
ERRORS = documented({
    413: "request body too large",
    415: "the body is not application/json",
    422: "invalid request: `detail` names each field and why",
    503: "the model is still loading, or the clue-giver has no training puzzles",
})


@router.post("/suggest", response_model=SuggestResponse, responses=ERRORS)
def suggest(request: SuggestRequest, service: ServiceDep, clues: ClueGiverDep, icons: IconsDep) -> SuggestResponse:
    """Suggest up to `top` clues for `word`, best first: human-like, and won by the guesser."""
    try:
        avoid, neighbours, suggestions = clues.suggest(request.word, request.avoid, request.max_length, request.top,
                                                       request.use_known)
    except UsageError as exc:  # the schema already refuses what the rules refuse; kept as a backstop
        raise api_error(422, ["body"], str(exc), "invalid_request") from None
    return SuggestResponse(
        word=request.word.strip(),
        avoid=avoid,
        avoid_source="nearest train answers" if neighbours else "request",
        guesser=clues.guesser,  # type: ignore[arg-type]
        model=service.model_name,
        suggestions=[suggested_clue(s, icons) for s in suggestions],
    )


def suggested_clue(suggestion: Suggestion, icons: IconStore) -> SuggestedClue:
    """A suggestion as the API gives it: pictograms with drawings, roles and reasons."""
    pictograms = [
        SuggestedPictogram(id=p.id, description=p.description, icon=icons.url(p.id), role=p.role,  # type: ignore[arg-type]
                           reason=p.reason)
        for p in suggestion.pictograms
    ]
    return SuggestedClue(pictograms=pictograms, rank=suggestion.rank, options=suggestion.options,
                         margin=round(suggestion.margin, 4), likeness=round(suggestion.likeness, 4), known=suggestion.known)

