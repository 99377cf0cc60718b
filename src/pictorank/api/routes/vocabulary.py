"""GET /hints: the pictogram vocabulary, so clients can show pictograms and send their ids; and
GET /hints/{id}/icon: a pictogram's drawing (SVG), when the vocabulary has drawings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from pictorank.api.deps import IconsDep, ServiceDep
from pictorank.api.errors import api_error, documented
from pictorank.api.icons import IconStore
from pictorank.api.schemas import Hint, HintsResponse

router = APIRouter(tags=["vocabulary"])

# An SVG opened on its own is a document: no scripts, no loads, nothing from it may run or be
# sniffed as anything else.
ICON_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}
# The URL /hints gives (its `v` is the drawing's digest) changes with the drawing, so it may be
# cached for good; any other spelling of it is not tied to the drawing and is revalidated (ETag).
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
SVG = "image/svg+xml"


@router.get("/hints", response_model=HintsResponse)
def hints(service: ServiceDep, icons: IconsDep) -> HintsResponse:
    """The pictogram vocabulary: every hint id the service knows, its description and drawing URL."""
    return HintsResponse(hints=[Hint(id=i, description=d, icon=icons.url(i)) for i, d in service.vocab.descriptions.items()])


@router.get(
    "/hints/{hint_id}/icon",
    response_class=Response,
    responses={
        200: {"content": {SVG: {"schema": {"type": "string"}}}, "description": "the pictogram's SVG drawing"},
        304: {"description": "not modified (If-None-Match matched the ETag)"},
        **documented({404: "no such pictogram, or the vocabulary has no drawings"}),
    },
)
async def icon(
    hint_id: Annotated[int, Path(description="a pictogram id from GET /hints")],
    request: Request,
    icons: IconsDep,
    v: Annotated[str | None, Query(max_length=64, description="the drawing's digest, for caching; any value is accepted")] = None,
) -> Response:
    """A pictogram's drawing, from memory; the file name came from the vocabulary's integer id.

    `async` on purpose: it only reads memory, so it runs on the event loop without a hop to the
    thread pool (which the ranking routes need, and which costs more than the answer here).
    """
    found = icons.get(hint_id)
    if found is None:
        why = f"no drawing for pictogram {hint_id}" if icons.icons else "this vocabulary has no pictogram drawings"
        raise api_error(404, ["path", "hint_id"], why, "not_found")
    headers = {**ICON_HEADERS, "ETag": found.etag, "Cache-Control": _icon_caching(request, hint_id, v, icons)}
    if found.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(found.svg, media_type=SVG, headers=headers)


def _icon_caching(request: Request, hint_id: int, v: str | None, icons: IconStore) -> str:
    """A year only for the canonical URL: the id as /hints writes it (not `1.0` or `01`) and the
    drawing's own digest as `v`."""
    canonical = request.path_params.get("hint_id") == str(hint_id) and v == icons.digest(hint_id)
    return IMMUTABLE if canonical else REVALIDATE
