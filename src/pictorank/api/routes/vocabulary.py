"""GET /hints: the pictogram vocabulary, so clients can show pictograms and send their ids."""

from __future__ import annotations

from fastapi import APIRouter

from pictorank.api.deps import ServiceDep
from pictorank.api.schemas import Hint, HintsResponse

router = APIRouter(tags=["vocabulary"])


@router.get("/hints", response_model=HintsResponse)
def hints(service: ServiceDep) -> HintsResponse:
    """The pictogram vocabulary: every hint id the service knows, with its description."""
    return HintsResponse(hints=[Hint(id=i, description=d) for i, d in service.vocab.descriptions.items()])
