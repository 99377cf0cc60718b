"""HTTP routes. Ranking is CPU work, so its endpoints are plain `def`: FastAPI runs them in its
thread pool and the event loop stays free; more throughput comes from more worker processes.
"""

from __future__ import annotations

import os
from typing import Sequence

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

from pictorank.api.schemas import (
    ErrorResponse,
    Health,
    Hint,
    HintsResponse,
    RankBatchRequest,
    RankBatchResponse,
    RankRequest,
    RankResponse,
)
from pictorank.api.service import Ranked, RankingService

router = APIRouter()
ERRORS = {
    413: {"model": ErrorResponse, "description": "request body too large"},
    415: {"model": ErrorResponse, "description": "the body is not application/json"},
    422: {"model": ErrorResponse, "description": "invalid request: `detail` names each field and why"},
    503: {"model": ErrorResponse, "description": "the model is still loading"},
}


def get_service(request: Request) -> RankingService:
    """The service loaded by the app's lifespan (or injected by a test)."""
    service = request.app.state.service
    if service is None:
        raise HTTPException(status_code=503, detail=[{"loc": [], "msg": "the model is still loading", "type": "loading"}])
    return service


def require_json(request: Request) -> None:
    """Ranking bodies are JSON; anything else is a 415 saying so (before any parsing)."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        detail = [{"loc": ["header", "content-type"], "msg": f"expected application/json, got {content_type[:100]!r}",
                   "type": "unsupported_media_type"}]
        raise HTTPException(status_code=415, detail=detail)


def _clue(service: RankingService, puzzle: RankRequest, loc: Sequence[str | int]) -> tuple[list[str], list[str] | None]:
    """Hint texts and options of one puzzle; unknown hint ids are a 422 naming them."""
    if puzzle.hint_texts:
        hints = list(puzzle.hint_texts)
    else:
        unknown = service.unknown_hints(puzzle.hints)
        if unknown:
            detail = [{"loc": [*loc, "hints"], "msg": f"unknown hint ids: {unknown[:20]}", "type": "unknown_hint"}]
            raise HTTPException(status_code=422, detail=detail)
        hints = service.describe(puzzle.hints)
    if puzzle.options is None and service.index is None:
        detail = [{"loc": [*loc, "options"], "msg": "options are required: open-vocabulary mode is off", "type": "missing"}]
        raise HTTPException(status_code=422, detail=detail)
    return hints, puzzle.options


def _response(service: RankingService, puzzle: RankRequest, ranked: Ranked) -> RankResponse:
    ranking = ranked.ranking[: puzzle.top_k]
    return RankResponse(
        ranking=ranking,
        answer="|".join(ranking),
        scores=ranked.scores[: puzzle.top_k],
        model=service.model_name,
        mode="options" if puzzle.options is not None else "open_vocabulary",
    )


@router.post("/rank", response_model=RankResponse, responses=ERRORS, tags=["ranking"], dependencies=[Depends(require_json)])
def rank(puzzle: RankRequest, service: RankingService = Depends(get_service)) -> RankResponse:
    """Rank the options of one clue (or, without options, the service's answer vocabulary)."""
    clue = _clue(service, puzzle, ["body"])
    [ranked] = service.rank([clue])
    return _response(service, puzzle, ranked)


@router.post("/rank/batch", response_model=RankBatchResponse, responses=ERRORS, tags=["ranking"], dependencies=[Depends(require_json)])
def rank_batch(batch: RankBatchRequest, service: RankingService = Depends(get_service)) -> RankBatchResponse:
    """Rank several clues in one request; results come in request order."""
    clues = [_clue(service, puzzle, ["body", "puzzles", i]) for i, puzzle in enumerate(batch.puzzles)]
    results = service.rank(clues)
    return RankBatchResponse(results=[_response(service, p, r) for p, r in zip(batch.puzzles, results)])


@router.get("/hints", response_model=HintsResponse, tags=["vocabulary"])
def hints(service: RankingService = Depends(get_service)) -> HintsResponse:
    """The pictogram vocabulary: every hint id the service knows, with its description."""
    return HintsResponse(hints=[Hint(id=i, description=d) for i, d in service.vocab.descriptions.items()])


@router.get("/health", response_model=Health, tags=["operations"])
def health() -> Health:
    """Liveness: the process answers."""
    return Health(status="ok")


@router.get("/ready", response_model=Health, responses={503: {"model": Health}}, tags=["operations"])
def ready(service: RankingService = Depends(get_service)):
    """Readiness: the model is loaded and a test ranking succeeded."""
    if not service.ready:
        return JSONResponse(Health(status="loading").model_dump(), status_code=503)
    return Health(status="ok", model=service.model_name)


@router.get("/metrics", tags=["operations"], response_class=Response)
def metrics(request: Request) -> Response:
    """Prometheus metrics: request counts and latency histograms per route (all workers)."""
    return Response(generate_latest(metrics_registry(request.app)), media_type=CONTENT_TYPE_LATEST)


def metrics_registry(app) -> CollectorRegistry:
    """This process's registry, or with several workers (prometheus-client's multiprocess mode,
    set up by `pictorank serve`) a registry that adds up every worker's metric files."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return app.state.metrics.registry
