"""POST /v1/rerank and /v2/rerank: pictorank behind the rerank API that existing clients speak
(Cohere's: `cohere.Client.rerank` posts to /v1/rerank, `cohere.ClientV2.rerank` to /v2/rerank),
so such a client works with pictorank by changing only its base URL.

The query is the clue: its pictograms' descriptions in order, main idea first, joined by '; '
("flower; sun"); the documents are the candidate words. Results come best first with each
document's index in the request. A document given twice is ranked once and reported at each
of its indexes. `model` is accepted and ignored (the served model answers; `meta.model` names it).
Refusals keep the service's error body and statuses (413, 415, 422, 503).
"""

from __future__ import annotations

import math
import uuid

from fastapi import APIRouter, Depends

from pictorank.api.deps import ServiceDep, SettingsDep, require_json
from pictorank.api.errors import documented
from pictorank.api.limits import check_request_cost
from pictorank.api.schemas import (
    RerankApiVersion,
    RerankMeta,
    RerankRequest,
    RerankResponse,
    RerankResult,
    RerankResultDocument,
)
from pictorank.api.service import Clue, RankingService
from pictorank.api.settings import Settings

router = APIRouter(tags=["rerank"], dependencies=[Depends(require_json)])
ERRORS = documented({
    413: "request body too large, or more distinct texts than the service takes per request",
    415: "the body is not application/json",
    422: "invalid request: `detail` names each field and why",
    503: "the model is still loading",
})


@router.post("/v1/rerank", response_model=RerankResponse, response_model_exclude_none=True, responses=ERRORS)
def rerank_v1(request: RerankRequest, service: ServiceDep, settings: SettingsDep) -> RerankResponse:
    """Rerank `documents` (candidate words) for `query` (hint descriptions joined by '; '), v1 shape."""
    return _rerank(request, service, settings, "1")


@router.post("/v2/rerank", response_model=RerankResponse, response_model_exclude_none=True, responses=ERRORS)
def rerank_v2(request: RerankRequest, service: ServiceDep, settings: SettingsDep) -> RerankResponse:
    """The same as /v1/rerank, at the path Cohere's v2 clients post to."""
    return _rerank(request, service, settings, "2")


def _rerank(request: RerankRequest, service: RankingService, settings: Settings, api_version: str) -> RerankResponse:
    texts = request.texts()
    clue = Clue(request.hints(), tuple(dict.fromkeys(texts)))
    check_request_cost([clue], settings.max_texts_per_request, settings.max_rows_per_request,
                       service.open_vocab_candidates)  # /rank's cost caps (413 first)
    [ranked] = service.rank([clue])
    score = dict(zip(ranked.options, ranked.scores))
    place = {word: i for i, word in enumerate(ranked.options)}
    order = sorted(range(len(texts)), key=lambda i: (place[texts[i]], i))
    results = [
        RerankResult(
            index=i,
            relevance_score=_squash(score[texts[i]]),
            document=RerankResultDocument(text=texts[i]) if request.return_documents else None,
        )
        for i in order[: request.top_n]
    ]
    meta = RerankMeta(api_version=RerankApiVersion(version=api_version), model=service.model_name)
    return RerankResponse(id=str(uuid.uuid4()), results=results, meta=meta)


def _squash(score: float) -> float:
    """The ranker's score into [0, 1] (the logistic function), keeping the order."""
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, score))))
