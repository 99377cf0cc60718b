"""The pictograms' drawings: `<hintID>.svg` files of the served vocabulary, read once when the app
is created and served from memory by GET /hints/{id}/icon (the Bliss set is small).

File names are built from the vocabulary's integer ids only, never from a request, so no
request can name a file. Nor can the folder: a file that leads out of it (a symlink to
/etc/passwd in an unpacked icon set), is larger than MAX_ICON_BYTES when read (files of /proc say
they are empty) or is not an SVG drawing is skipped with a warning. Each icon's ETag is a digest of its bytes; its URL carries the same
digest (`?v=...`), so browsers may cache that URL for a year and still see a changed drawing at
once; any other URL of the drawing (`/hints/1.0/icon`, a wrong or missing `v`) is revalidated.
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
        digest = self.digest(hint_id)
        return None if digest is None else f"/hints/{hint_id}/icon?v={digest}"

    def digest(self, hint_id: int) -> str | None:
        """The `v` of the drawing's URL: its ETag, shortened."""
        icon = self.icons.get(hint_id)
        return None if icon is None else icon.etag.strip('"')[:12]


def _read_icons(folder: Path, ids: Iterable[int]) -> dict[int, Icon]:
    icons: dict[int, Icon] = {}
    root = folder.resolve()
    for hint_id in ids:
        path = folder / f"{int(hint_id)}.svg"
        try:
            svg = _read_icon(path, root)
        except OSError as exc:
            log.warning("icon %s unreadable: %s", path, exc)
            continue
        if svg is not None:
            icons[int(hint_id)] = Icon(svg, f'"{hashlib.sha256(svg).hexdigest()[:32]}"')
    return icons


def _read_icon(path: Path, root: Path) -> bytes | None:
    """The drawing at `path`, or None (no such file: quietly; a file that is no drawing: warned)."""
    if not path.is_file():
        return None
    real = path.resolve()
    if not real.is_relative_to(root):
        log.warning("icon %s skipped: it leads out of the icon folder (to %s)", path, real)
        return None
    with open(real, "rb") as file:
        svg = file.read(MAX_ICON_BYTES + 1)  # the size as read: /proc files report 0 bytes
    if len(svg) > MAX_ICON_BYTES:
        log.warning("icon %s skipped: larger than %d bytes", path, MAX_ICON_BYTES)
        return None
    if b"<svg" not in svg[:4096]:
        log.warning("icon %s skipped: not an SVG drawing", path)
        return None
    return svg
