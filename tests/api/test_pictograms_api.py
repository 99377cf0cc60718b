"""GET /hints/{id}/icon: the pictograms' drawings, from memory, with safe headers; and the icon
URLs in /hints and in the game's puzzles. No model needed: the app is never started."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from helpers import DATA, write_hints
from pictorank.api.app import create_app
from pictorank.api.icons import MAX_ICON_BYTES, IconStore
from pictorank.api.settings import Settings

ICONS = DATA / "hint_icons"


@pytest.fixture(scope="module")
def client() -> TestClient:
    """Not entered as a context manager: the lifespan (model loading) never runs."""
    return TestClient(create_app(Settings()))


def test_an_icon_is_the_svg_file_with_safe_caching_headers(client):
    response = client.get("/hints/325/icon")
    assert response.status_code == 200
    assert response.content == (ICONS / "325.svg").read_bytes()
    assert response.headers["content-type"] == "image/svg+xml"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert "sandbox" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-cache"  # not the URL /hints gives: revalidated
    etag = response.headers["etag"]
    again = client.get("/hints/325/icon", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag


def test_unknown_pictograms_are_404_json(client):
    for path in ("/hints/999999/icon", "/hints/-1/icon"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["detail"][0]["loc"] == ["path", "hint_id"]
    for path in ("/hints/abc/icon", "/hints/..%2F325/icon", "/hints/325.svg/icon"):
        assert client.get(path).status_code in (404, 422)


def test_a_vocabulary_without_drawings_has_no_icons(tmp_path):
    client = TestClient(create_app(Settings(hint_icons=tmp_path / "none")))
    response = client.get("/hints/325/icon")
    assert response.status_code == 404 and "no pictogram drawings" in response.json()["detail"][0]["msg"]
    puzzle = client.get("/puzzles/random").json()
    assert all(h["icon"] is None for h in puzzle["hints"])


def test_file_names_come_from_the_vocabulary_ids_only(tmp_path):
    hints = write_hints(tmp_path / "hints.csv")  # ids 1-4
    icons = tmp_path / "hint_icons"
    icons.mkdir()
    (icons / "1.svg").write_text("<svg/>")
    (icons / "2.svg").write_bytes(b"<svg>" + b" " * MAX_ICON_BYTES + b"</svg>")  # too large to be a pictogram
    (icons / "7.svg").write_text("<svg/>")  # not in the vocabulary
    (icons / "x.svg").write_text("<svg/>")
    store = IconStore.load(icons, hints)
    assert set(store.icons) == {1}
    assert store.url(1).startswith("/hints/1/icon?v=") and store.url(2) is None and store.url(7) is None
    assert IconStore.load(icons, tmp_path / "missing.csv").icons == {}  # never raises


def test_only_svg_drawings_inside_the_folder_are_served(tmp_path):
    """An icon set unpacked from an archive may hold symlinks: none may publish a file from
    elsewhere (/etc/passwd, /proc/self/environ, which says it is empty), nor anything not SVG."""
    hints = write_hints(tmp_path / "hints.csv")  # ids 1-4
    outside = tmp_path / "secret.svg"
    outside.write_text("<svg>secret</svg>")
    icons = tmp_path / "hint_icons"
    icons.mkdir()
    (icons / "drawings").mkdir()
    (icons / "drawings" / "one.svg").write_text("<svg>one</svg>")
    (icons / "1.svg").symlink_to(icons / "drawings" / "one.svg")  # inside the folder: fine
    (icons / "2.svg").symlink_to(outside)
    (icons / "3.svg").symlink_to("/proc/self/environ")
    (icons / "4.svg").write_text("root:x:0:0:root:/root:/bin/bash")
    store = IconStore.load(icons, hints)
    assert set(store.icons) == {1} and store.icons[1].svg == b"<svg>one</svg>"


def test_the_default_folder_is_beside_the_hints_file(tmp_path):
    assert Settings().hint_icons == DATA / "hint_icons"
    assert Settings(hints=tmp_path / "emoji.csv").hint_icons == tmp_path / "hint_icons"


def test_game_puzzles_carry_icon_urls_that_resolve(client):
    puzzle = client.get("/puzzles/random").json()
    for hint in puzzle["hints"]:
        assert hint["icon"].startswith(f"/hints/{hint['id']}/icon?v=")
        assert client.get(hint["icon"]).status_code == 200


def test_every_bundled_pictogram_has_a_drawing():
    ids = {int(line.split(",", 1)[0]) for line in (DATA / "hint_descriptions.csv").read_text().splitlines()[1:]}
    assert {int(p.stem) for p in Path(ICONS).glob("*.svg")} == ids


def test_only_the_canonical_icon_url_is_cached_for_a_year(client):
    """The URL /hints gives carries the drawing's digest; other spellings of it are not tied to the
    drawing, so a year of `immutable` would pin whatever they served."""
    canonical = IconStore.load(ICONS, DATA / "hint_descriptions.csv").url(325)
    assert client.get(canonical).headers["cache-control"] == "public, max-age=31536000, immutable"
    digest = canonical.rsplit("=", 1)[1]
    for other in ("/hints/325/icon", "/hints/325/icon?v=zzz", f"/hints/325.0/icon?v={digest}",
                  f"/hints/0325/icon?v={digest}", f"/hints/+325/icon?v={digest}"):
        response = client.get(other)
        assert response.status_code == 200 and response.headers["cache-control"] == "no-cache", other
        assert response.headers["etag"] and "default-src 'none'" in response.headers["content-security-policy"]
