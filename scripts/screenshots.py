"""Screenshots of the game page's three modes, on a phone and on a desktop, as a player meets them:
Guess after a pick (the verdict, the answer and pictorank's ranking), Ask with a clue built and
ranked, Clue after a pick. They go to docs/images/ (the README and docs/game.md show them).

    .venv/bin/python scripts/screenshots.py                 # serves models/default itself
    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:8000

Needs Debian's chromium (/usr/bin/chromium, or PICTORANK_CHROMIUM) and playwright (the [test]
extra). Rounds are random: each run shows other puzzles.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

from playwright import sync_api

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
CHROMIUM = os.environ.get("PICTORANK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
ASK_CLUE = ("animal", "stripe", "horse")  # searched in the pictograms, the first match added


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ready", timeout=2) as response:
            return json.load(response).get("status") == "ok"
    except OSError:
        return False


@contextlib.contextmanager
def _serving(model: str) -> Iterator[str]:
    """`pictorank serve --model MODEL` on a free port until /ready; stopped afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).with_name("pictorank")), "serve", "--model", model, "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while not _ready(url):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"screenshots: `{' '.join(command)}` did not get ready")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _guess(page: sync_api.Page, url: str) -> None:
    """A random puzzle, its first option picked: the verdict and the ranking in view."""
    with page.expect_response("**/puzzles/random*"):
        page.goto(url + "/")
    with page.expect_response("**/puzzles/*/guess"):
        page.locator("#options button").first.click()
    sync_api.expect(page.locator("#verdict")).to_be_visible()
    sync_api.expect(page.locator("#guess-chart .bar-row").first).to_be_attached()


def _ask(page: sync_api.Page, url: str) -> None:
    """A clue of three pictograms built in Ask mode, ranked over every word pictorank knows."""
    page.goto(url + "/")
    with page.expect_response("**/hints"):
        page.locator("#tab-ask").click()
    for query in ASK_CLUE:
        page.locator("#hint-search").fill(query)
        sync_api.expect(page.locator("#hint-results button").first).to_be_visible()
        page.locator("#hint-search").press("Enter")
    sync_api.expect(page.locator("#ask-chart .bar-row").first).to_be_visible()
    page.wait_for_timeout(1500)  # the live re-ranking of the last pictogram settles


def _clue(page: sync_api.Page, url: str) -> None:
    """pictorank's clue for a secret word, its first option picked: the verdict and the reasons."""
    page.goto(url + "/")
    with page.expect_response("**/clues/random"):
        page.locator("#tab-give").click()
    with page.expect_response("**/clues/*/guess"):
        page.locator("#give-options button").first.click()
    sync_api.expect(page.locator("#give-verdict")).to_be_visible()


MODES = {"guess": _guess, "ask": _ask, "clue": _clue}


def take(url: str, out: Path) -> list[Path]:
    """Every mode on every screen, the whole page (what a player scrolls through); the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for screen, size in SCREENS.items():
            for mode, play in MODES.items():
                context = browser.new_context(viewport=size, device_scale_factor=1, has_touch=screen == "phone")
                page = context.new_page()
                play(page, url)
                path = out / f"game_{screen}_{mode}.png"
                page.screenshot(path=str(path), full_page=True)  # the ranking below the verdict too
                written.append(path)
                context.close()
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running service (default: serve --model itself)")
    parser.add_argument("--model", default=str(ROOT / "models" / "default"), help="the model to serve (default: models/default)")
    parser.add_argument("--out", default=str(OUT), help="where the PNGs go (default: docs/images)")
    args = parser.parse_args()
    with contextlib.nullcontext(args.url) if args.url else _serving(args.model) as url:
        for path in take(url, Path(args.out)):
            print(f"screenshots: {path}")


if __name__ == "__main__":
    main()
