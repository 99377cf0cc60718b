"""GET /health, /ready and /metrics: what an orchestrator and Prometheus ask the service."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

from pictorank.api.errors import RETRY_AFTER_SECONDS
from pictorank.api.schemas import Health
from pictorank.api.settings import metrics_dir

router = APIRouter(tags=["operations"])


@router.get("/health", response_model=Health)
def health(request: Request) -> Health:
    """Liveness: the process answers; `model` names what it serves once loaded (e.g. whether
    `pictorank serve` found models/default or fell back to cosine), `loading` what is not ready."""
    service = request.app.state.service
    if service is None:
        return Health(status="ok", loading=loading_parts(request.app))
    return Health(status="ok", model=service.model_name, lexicon_size=service.lexicon_size,
                  lexicon_source=None if service.index is None else service.index.source,
                  loading=loading_parts(request.app))


@router.get("/ready", response_model=Health, responses={503: {"model": Health}})
def ready(request: Request) -> Health | JSONResponse:
    """Readiness: every route can answer. The model is loaded and a test ranking succeeded, and
    the clue-giver is built (or known to be off, when /suggest says why): a client that waits for
    /ready never meets a "still loading" 503."""
    loading = loading_parts(request.app)
    if loading:
        return JSONResponse(Health(status="loading", loading=loading).model_dump(), status_code=503,
                            headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    return Health(status="ok", model=request.app.state.service.model_name)


def loading_parts(app: FastAPI) -> list[str]:
    """The parts of the service still loading: `rank` until the model has loaded and ranked a
    test clue, `suggest` until the clue-giver is built (or has failed, which /suggest reports)."""
    service = app.state.service
    parts = [] if service is not None and service.ready else ["rank"]
    return parts + ([] if app.state.clues is not None else ["suggest"])


@router.get("/metrics", response_class=Response)
def metrics(request: Request) -> Response:
    """Prometheus metrics: request counts and latency histograms per route (all workers)."""
    return Response(generate_latest(metrics_registry(request.app)), media_type=CONTENT_TYPE_LATEST)


def metrics_registry(app: FastAPI) -> CollectorRegistry:
    """This process's registry, or with several workers (prometheus-client's multiprocess mode,
    set up by `pictorank serve`) a registry that adds up every worker's metric files."""
    if metrics_dir() is not None:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return app.state.metrics.registry
