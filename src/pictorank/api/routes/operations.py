"""GET /health, /ready and /metrics: what an orchestrator and Prometheus ask the service."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

from pictorank.api.deps import ServiceDep
from pictorank.api.errors import RETRY_AFTER_SECONDS
from pictorank.api.schemas import Health
from pictorank.api.settings import metrics_dir

router = APIRouter(tags=["operations"])


@router.get("/health", response_model=Health)
def health(request: Request) -> Health:
    """Liveness: the process answers; `model` names what it serves once loaded (e.g. whether
    `pictorank serve` found models/default or fell back to cosine)."""
    service = request.app.state.service
    if service is None:
        return Health(status="ok")
    return Health(status="ok", model=service.model_name, lexicon_size=service.lexicon_size,
                  lexicon_source=None if service.index is None else service.index.source)


@router.get("/ready", response_model=Health, responses={503: {"model": Health}})
def ready(service: ServiceDep) -> Health | JSONResponse:
    """Readiness: the model is loaded and a test ranking succeeded."""
    if not service.ready:
        return JSONResponse(Health(status="loading").model_dump(), status_code=503,
                            headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    return Health(status="ok", model=service.model_name)


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
