"""The game as players meet it, in headless Chromium on a phone (390x844, touch) and a desktop
(1280x900): what changes after a tap is in view, pictogram cards never cover a button, hints suit
the device, no raw ranker score is shown, Ask mode's confidence counts the chance that the word
is not among the typed options, Clue mode does not quiz the player on their own word, and the
console stays free of errors (the favicon is served).

The service is the cosine stand-in of tests/api/conftest.py (`api_service`), served by uvicorn in
a thread, so no model loads; the clue-giver's answers (GET /clues/random, POST /suggest) are
fixed replies routed by the browser, the worst case for the layout: four pictograms with long
descriptions. Chromium as in test_game_browser.py (/usr/bin/chromium or PICTORANK_CHROMIUM).
Screenshots go to reports/screenshots/ (docs/images/ holds copies).
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser]

CHROMIUM = Path(os.environ.get("PICTORANK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parents[2] / "reports" / "screenshots"
DEVICES = {
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
    "desktop": {"viewport": {"width": 1280, "height": 900}},
}
RAW_NUMBER = re.compile(r"[-+]?\d+\.\d+")  # "-3.844", "0.45": a score, never shown to a player
LONG_HINTS = 4  # pictograms of the fixed clues: the most a clue holds in the game

if not CHROMIUM.is_file():
    if os.environ.get("PICTORANK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{CHROMIUM} not found, and PICTORANK_REQUIRE_BROWSER=1 requires the browser test", pytrace=False)
    pytest.skip(f"{CHROMIUM} not found: install Debian's chromium package", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(api_service):
    """The base URL of the game over the stand-in service, served in a thread of this process."""
    import uvicorn

    from pictorank.api.app import create_app
    from pictorank.api.clues import ClueGiver
    from pictorank.api.settings import Settings

    app = create_app(Settings(), service=api_service, clues=ClueGiver(error="fixed replies in this test"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.started, "the test server did not start"
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(params=list(DEVICES))
def device(request) -> str:
    return request.param


@pytest.fixture
def page(browser, device, vocab):
    """A page on `device`, with the clue-giver's replies fixed; fails the test on any console error,
    page error or failed request."""
    context = browser.new_context(device_scale_factor=1, **DEVICES[device])
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda message: problems.append(f"console: {message.text}") if message.type == "error" else None)
    page.on("response", lambda response: problems.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    _fix_clue_giver(page, vocab)
    yield page
    context.close()
    assert not problems, problems


def _long_pictograms(vocab) -> list[dict]:
    """Four pictograms with the longest descriptions: the clue that takes the most room."""
    longest = sorted(vocab.descriptions.items(), key=lambda item: -len(item[1]))[:LONG_HINTS]
    return [{"id": i, "description": d, "icon": f"/hints/{i}/icon", "role": "specifier" if n else "main idea"}
            for n, (i, d) in enumerate(longest)]


def _fix_clue_giver(page, vocab) -> None:
    pictograms = _long_pictograms(vocab)
    words = ["babysitter", "nurse", "teacher", "grandmother", "lifeguard", "police officer", "firefighter",
             "mail carrier", "bus driver", "cook"]
    round_ = {"id": "val_000001." + "0" * 32, "subtask": 2, "pictograms": pictograms, "options": words}
    clue = {"pictograms": [{**p, "reason": f"it says {p['description'].split(',')[0]}"} for p in pictograms],
            "rank": 1, "options": 11, "margin": 0.1, "likeness": 1.0, "known": False}
    suggest = {"word": "babysitter", "avoid": words[1:] + ["nanny"], "avoid_source": "nearest train answers",
               "guesser": "seed", "model": "stub", "suggestions": [clue]}
    page.route("**/clues/random*", lambda route: route.fulfill(json=round_))
    page.route("**/suggest", lambda route: route.fulfill(json=suggest))


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not rendered"
    return box


def _in_view(page, selector: str) -> None:
    """The element is wholly inside the viewport as the page is scrolled now (to within half a
    pixel: boxes have fractional edges, and scrolling an element into view rounds to pixels)."""
    box, size, slack = _box(page, selector), page.viewport_size, 0.5
    assert box["y"] >= -slack and box["y"] + box["height"] <= size["height"] + slack, (selector, box, size)
    assert box["x"] >= -slack and box["x"] + box["width"] <= size["width"] + slack, (selector, box, size)


def _overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def _cards_cover_no_button(page, cards: str) -> None:
    """No card overlaps another card or a button outside it, and its own buttons lie inside it."""
    boxes = page.locator(cards).evaluate_all("cards => cards.map(c => c.getBoundingClientRect().toJSON())")
    for i, card in enumerate(boxes):
        assert not any(_overlap(card, other) for other in boxes[i + 1:]), (cards, i)
    for button in page.locator("button:visible").all():
        box = button.bounding_box()
        inside = button.evaluate(f"(b, sel) => Boolean(b.closest(sel))", cards)
        for card in boxes:
            if inside and _overlap(card, box):
                assert (card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
                        and card["y"] <= box["y"] and box["y"] + box["height"] <= card["y"] + card["height"] + 0.5)
            elif not inside:
                assert not _overlap(card, box), (button.inner_text(), card, box)


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def _open_ask(page, server: str) -> None:
    page.goto(server + "/")
    with page.expect_response("**/hints"):
        page.locator("#tab-ask").click()


def _tap_hint(page, query: str) -> None:
    page.locator("#hint-search").fill(query)
    page.locator("#hint-results button").first.click()


def _wait_for_ranking_of(page, pictograms: int) -> None:
    """Wait until the chart shows the ranking of a clue of that many pictograms.

    The reply to /rank arrives before the page draws it; until then the previous clue's chart is
    still on screen and is replaced under any element a test has just found.
    """
    page.wait_for_function("n => (document.getElementById('ask-ranking').dataset.for || '').split(',')"
                           ".filter(Boolean).length === n", arg=pictograms)


def test_ask_ranking_is_in_view_after_each_pictogram(server, page, device):
    _open_ask(page, server)
    for n, query in enumerate(["person", "water", "sun", "house"], start=1):
        with page.expect_response("**/rank"):
            _tap_hint(page, query)
        expect(page.locator("#ask-clue .card")).to_have_count(n)
        _wait_for_ranking_of(page, n)
        expect(page.locator("#ask-chart .bar-row")).to_have_count(10)
        _in_view(page, "#ask-ranking-title")
        _in_view(page, "#ask-chart .bar-row")  # the first word of the ranking
        _cards_cover_no_button(page, "#ask-clue .card")
    clue, ranking = _box(page, "#ask-clue"), _box(page, "#ask-ranking")
    if device == "desktop":  # beside the clue
        assert ranking["x"] >= clue["x"] + clue["width"], (clue, ranking)
    else:  # right under it
        assert 0 <= ranking["y"] - (clue["y"] + clue["height"]) < 60, (clue, ranking)
    _shot(page, f"game_{device}_ask.png")


def test_ask_confidence_counts_a_word_left_out_and_no_raw_score_shows(server, page):
    _open_ask(page, server)
    page.locator("#ask-options").fill("sunflower\ntulip\nhammer\nriver")
    with page.expect_response("**/rank") as ranked:
        _tap_hint(page, "flower")
    result = ranked.value.json()
    assert result["mode"] == "options" and 0 <= result["none_of_these"] <= 1
    sure = round(result["confidence"] * (1 - result["none_of_these"]) * 100)
    expect(page.locator("#ask-confidence")).to_contain_text(f'{sure}% sure it is "{result["ranking"][0]}"')
    expect(page.locator("#ask-confidence")).to_contain_text(f"{round(result['none_of_these'] * 100)}% chance")
    expect(page.locator("#ask-why li")).to_have_count(4)
    shown = page.locator("#panel-ask").inner_text()
    assert not RAW_NUMBER.search(shown), RAW_NUMBER.search(shown)


def test_guess_mode_hints_suit_the_device_and_show_no_raw_score(server, page, device):
    with page.expect_response("**/puzzles/random*"):
        page.goto(server + "/")
    status = page.locator("#guess-status")
    if device == "phone":
        expect(status).to_contain_text("Tap the word")
        expect(status).not_to_contain_text("keys")
    else:
        expect(status).to_contain_text("keys 1-9 and 0")
    with page.expect_response("**/guess"):
        page.locator("#options button").first.click()
    expect(page.locator("#guess-why li").first).to_be_visible()
    shown = page.locator("#panel-guess").inner_text()
    assert not RAW_NUMBER.search(shown), RAW_NUMBER.search(shown)
    _cards_cover_no_button(page, "#clue .card")


def test_clue_mode_options_are_in_view_below_four_cards(server, page, device):
    page.goto(server + "/")
    with page.expect_response("**/clues/random"):
        page.locator("#tab-give").click()
    expect(page.locator("#give-clue .card")).to_have_count(LONG_HINTS)
    page.wait_for_function("() => [...document.querySelectorAll('#give-clue img')].every(i => i.complete)")
    _in_view(page, "#give-options button")  # the first option, without scrolling past the cards
    _in_view(page, "#give-options button >> nth=1")
    _cards_cover_no_button(page, "#give-clue .card")
    status = page.locator("#give-status")
    expect(status).to_contain_text("Tap it." if device == "phone" else "keys 1-9 and 0")
    _shot(page, f"game_{device}_clue.png")


def test_clue_my_word_shows_the_clue_without_asking_which_it_is(server, page):
    page.goto(server + "/")
    with page.expect_response("**/clues/random"):
        page.locator("#tab-give").click()
    page.locator("#give-word").fill("babysitter")
    with page.expect_response("**/suggest"):
        page.locator("#give-own-go").click()
    status = page.locator("#give-status")
    expect(status).to_contain_text('pictorank\'s clue for "babysitter"')
    expect(status).not_to_contain_text("Which is it")
    expect(page.locator("#give-options-title")).to_be_hidden()
    expect(page.locator("#give-options button")).to_have_count(0)
    expect(page.locator("#give-why li")).to_have_count(LONG_HINTS)  # the reasons, at once


def test_the_favicon_is_served(server, page):
    """Headless Chromium never asks for a favicon, so the test asks for the one the page links."""
    page.goto(server + "/")
    link = page.locator("link[rel=icon]").get_attribute("href")
    icon = page.request.get(server + link)
    assert link == "/favicon.ico" and icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    page.wait_for_load_state("networkidle")  # the page fixture fails the test on any console error


def test_the_verdict_stays_in_view_after_a_pick(server, page, device, vocab):
    """Focusing "Next" after a pick scrolled the Right/Wrong box above the screen (2 of 3 desktop
    rounds, 3 of 3 phone rounds). At 390x844 and 1280x800, in Guess and in Clue mode, the verdict
    is inside the viewport after the pick, and "Next" has the keyboard focus."""
    if device == "desktop":
        page.set_viewport_size({"width": 1280, "height": 800})
    with page.expect_response("**/puzzles/random*"):
        page.goto(server + "/")
    with page.expect_response("**/guess"):
        page.locator("#options button").last.click()
    expect(page.locator("#verdict")).to_be_visible()
    _in_view(page, "#verdict")
    assert page.evaluate("document.activeElement.id") == "next-puzzle"

    clue = {"pictograms": [{**p, "reason": "it says so"} for p in _long_pictograms(vocab)],
            "rank": 1, "options": 10, "margin": 0.1, "likeness": 1.0, "known": False}
    page.route("**/clues/*/guess", lambda route: route.fulfill(json={"answer": "babysitter", "clue": clue}))
    with page.expect_response("**/clues/random"):
        page.locator("#tab-give").click()
    expect(page.locator("#give-options button").first).to_be_visible()
    page.locator("#give-options button").last.click()
    expect(page.locator("#give-verdict")).to_be_visible()
    _in_view(page, "#give-verdict")
    assert page.evaluate("document.activeElement.id") == "give-next"


def test_suggest_a_clue_ranks_the_words_it_was_judged_against(server, page):
    """"Suggest a clue" charted the player's options without the secret word ("58% tower") while
    naming the guesser's rank among the word and its rivals: the options become exactly those."""
    _open_ask(page, server)
    page.locator("#ask-word").fill("babysitter")
    with page.expect_response("**/suggest"):
        with page.expect_response("**/rank") as ranked:
            page.locator("#ask-suggest").click()
    result = ranked.value.json()
    judged = ["babysitter", "nurse", "teacher", "grandmother", "lifeguard", "police officer", "firefighter",
              "mail carrier", "bus driver", "cook", "nanny"]  # the fixed reply: the word and its avoid list
    assert page.locator("#ask-options").input_value().split("\n") == judged
    assert result["mode"] == "options" and set(result["ranking"]) <= set(judged) and len(result["ranking"]) == 10
    _wait_for_ranking_of(page, LONG_HINTS)
    shown = page.locator("#ask-chart .bar-row .word").all_inner_texts()
    assert {w.replace("Not it", "").strip() for w in shown} <= set(judged)
