"""End to end: a real `pictorank serve` process and the game page in headless Chromium.

Plays one round of each mode on a phone-sized screen, mostly with the keyboard, and checks
what the page shows against what the service answered. Screenshots go to reports/screenshots/.

Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it); Playwright's own browser
download is not used. Set PICTORANK_GAME_URL to test an already running service instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import free_port, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "reports" / "screenshots"
PHONE = {"width": 390, "height": 844}
START_TIMEOUT = 240  # seconds: loading torch and encoding the vocabulary on a busy 2-core machine

if not CHROMIUM.is_file():
    pytest.skip(f"{CHROMIUM} not found: install Debian's chromium package (.ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the [test] extra")
expect = sync_api.expect


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ready", timeout=2) as response:
            return json.load(response).get("status") == "ok"
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The base URL of a `pictorank serve` subprocess, ready to rank."""
    if os.environ.get("PICTORANK_GAME_URL"):
        yield os.environ["PICTORANK_GAME_URL"].rstrip("/")
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    # The same on-disk embedding cache as `make` (the service and the CLI share PICTORANK_CACHE_DIR):
    # a second run starts in seconds.
    env.setdefault("PICTORANK_CACHE_DIR", str(ROOT / ".cache" / "embeddings"))
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "pictorank.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _ready(url):
            if process.poll() is not None:
                pytest.fail(f"pictorank serve exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"pictorank serve not ready after {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=PHONE, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _screenshot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def _fits_phone(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def _chart_words(page, chart: str) -> list[str]:
    return page.locator(f"{chart} .bar-row").evaluate_all("rows => rows.map(r => r.dataset.word)")


def test_guess_mode_round(server, page):
    with page.expect_response("**/puzzles/random*") as drawn:
        page.goto(server + "/")
    puzzle = drawn.value.json()
    assert "answer" not in puzzle  # never revealed before the guess

    cards = page.locator("#clue .card")
    expect(cards).to_have_count(len(puzzle["hints"]))
    for card, hint in zip(cards.all(), puzzle["hints"]):
        expect(card.locator(".desc")).to_have_text(hint["description"])
    expect(cards.first.locator(".badge")).to_have_text("main idea")
    expect(cards.nth(1).locator(".badge")).to_have_count(0)
    options = page.locator("#options button")
    expect(options).to_have_text(puzzle["options"])
    assert _fits_phone(page)

    # Keyboard: key "2" picks the second option.
    with page.expect_response(f"**/puzzles/{puzzle['id']}/guess") as checked:
        page.keyboard.press("2")
    result = checked.value.json()
    assert result["guess"] == puzzle["options"][1]
    verdict = page.locator("#verdict")
    expect(verdict).to_be_visible()
    expect(verdict).to_contain_text("Right!" if result["correct"] else "Wrong")
    expect(verdict).to_contain_text(result["answer"])
    expect(page.locator("#options button.answer")).to_have_text(result["answer"])
    expect(page.locator("#options button:disabled")).to_have_count(len(puzzle["options"]))

    expect(page.locator("#guess-chart .bar-row")).to_have_count(min(10, len(puzzle["options"])))
    assert _chart_words(page, "#guess-chart") == result["ranking"]
    if result["answer"] in result["ranking"]:
        expect(page.locator("#guess-chart .bar-row.is-answer")).to_have_attribute("data-word", result["answer"])
    expect(page.locator("#next-puzzle")).to_be_focused()
    _screenshot(page, "game_guess.png")

    # Enter on the focused "Next puzzle" button draws another puzzle.
    with page.expect_response("**/puzzles/random*"):
        page.keyboard.press("Enter")
    expect(page.locator("#verdict")).to_be_hidden()
    expect(page.locator("#options button:disabled")).to_have_count(0)
    page.set_viewport_size({"width": 1280, "height": 900})
    _screenshot(page, "game_guess_desktop.png")


def _add_hint(page, query: str) -> str:
    """Search the pictograms by keyboard and add the first match; returns its description."""
    search = page.locator("#hint-search")
    search.fill(query)
    first = page.locator("#hint-results button").first
    expect(first).to_be_visible()
    description = first.inner_text()
    search.press("Enter")
    return description


def test_ask_mode_round(server, page):
    page.goto(server + "/")
    # Keyboard: from the focused Guess tab, ArrowRight opens Ask.
    page.locator("#tab-guess").focus()
    with page.expect_response("**/hints"):
        page.keyboard.press("ArrowRight")
    expect(page.locator("#panel-ask")).to_be_visible()
    expect(page.locator("#tab-ask")).to_have_attribute("aria-selected", "true")

    picked = [_add_hint(page, "animal"), _add_hint(page, "water"), _add_hint(page, "sun")]
    cards = page.locator("#ask-clue .card")
    expect(cards.locator(".desc")).to_have_text(picked)
    expect(cards.first.locator(".badge")).to_have_text("main idea")
    cards.nth(2).get_by_role("button", name="Remove").click()  # removable
    expect(cards.locator(".desc")).to_have_text(picked[:2])
    cards.nth(1).get_by_role("button", name="earlier").click()  # reorderable
    expect(cards.locator(".desc")).to_have_text([picked[1], picked[0]])
    cards.nth(1).get_by_role("button", name="earlier").click()
    expect(cards.locator(".desc")).to_have_text(picked[:2])

    # No options: open vocabulary.
    with page.expect_response("**/rank") as ranked:
        page.locator("#ask-rank").click()
    result = ranked.value.json()
    assert result["mode"] == "open_vocabulary" and len(result["ranking"]) == 10
    expect(page.locator("#ask-chart .bar-row")).to_have_count(10)
    assert _chart_words(page, "#ask-chart") == result["ranking"]
    expect(page.locator("#ask-status")).to_contain_text("every word pictorank knows")
    assert _fits_phone(page)
    _screenshot(page, "game_ask_open_vocabulary.png")

    # A repeated option: the service's 422 message is shown, not a blank page.
    page.locator("#ask-options").fill("seal\nhammer\nseal")
    with page.expect_response("**/rank") as refused:
        page.locator("#ask-rank").click()
    assert refused.value.status == 422
    status = page.locator("#ask-status")
    expect(status).to_have_class("status error")
    expect(status).to_contain_text("Error 422")
    expect(status).to_contain_text("repeated option")
    expect(page.locator("#ask-ranking")).to_be_hidden()
    _screenshot(page, "game_ask_error.png")

    options = ["seal", "hammer", "tulip", "river"]
    page.locator("#ask-options").fill("\n".join(options))
    with page.expect_response("**/rank") as ranked:
        page.locator("#ask-rank").click()
    result = ranked.value.json()
    assert result["mode"] == "options" and sorted(result["ranking"]) == sorted(options)
    assert _chart_words(page, "#ask-chart") == result["ranking"]
    expect(page.locator("#ask-status")).to_have_text("Ranked your 4 options.")
    _screenshot(page, "game_ask_options.png")
