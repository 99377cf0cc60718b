"""The pictograms' drawings: `<hintID>.svg` files of the served vocabulary, read once when the app
is created and served from memory by GET /hints/{id}/icon (the Bliss set is 450 KB).

File names are built from the vocabulary's integer ids only, never from a request, so no
request can name a file. Each icon's ETag is a digest of its bytes; its URL carries the same
digest (`?v=...`), so browsers may cache it for a year and still see a changed drawing at once.
A vocabulary without a folder (or without a file for some id) simply has no icon there: the
page then shows text cards.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from pictorank.errors import DataError
from pictorank.puzzles import load_hints

log = logging.getLogger(__name__)
MAX_ICON_BYTES = 256 * 1024  # a pictogram drawing is a few hundred bytes; anything huge is not one


@dataclass(frozen=True)
class Icon:
    """One drawing: its bytes and their ETag (a quoted digest)."""

    svg: bytes
    etag: str


@dataclass
class IconStore:
    """The drawings of the served vocabulary, by hint id; `folder` None when there are none."""

    icons: dict[int, Icon] = field(default_factory=dict)
    folder: Path | None = None

    @classmethod
    def load(cls, folder: Path | None, hints_file: Path) -> "IconStore":
        """Every `<id>.svg` of `folder` for an id of `hints_file`; never raises (no icons instead)."""
        if folder is None or not folder.is_dir():
            return cls()
        try:
            ids = load_hints(hints_file).descriptions.keys()
        except DataError as exc:
            log.warning("no pictogram icons: %s", exc)
            return cls()
        return cls(_read_icons(folder, ids), folder)

    def get(self, hint_id: int) -> Icon | None:
        return self.icons.get(hint_id)

    def url(self, hint_id: int) -> str | None:
        """Where the page fetches the drawing (digest in the query, for caching), or None."""
        icon = self.icons.get(hint_id)
        if icon is None:
            return None
        digest = icon.etag.strip('"')[:12]
        return f"/hints/{hint_id}/icon?v={digest}"


def _read_icons(folder: Path, ids: Iterable[int]) -> dict[int, Icon]:
    icons: dict[int, Icon] = {}
    for hint_id in ids:
        path = folder / f"{int(hint_id)}.svg"
        try:
            if not path.is_file() or path.stat().st_size > MAX_ICON_BYTES:
                continue
            svg = path.read_bytes()
        except OSError as exc:
            log.warning("icon %s unreadable: %s", path, exc)
            continue
        icons[int(hint_id)] = Icon(svg, f'"{hashlib.sha256(svg).hexdigest()[:32]}"')
    return icons
