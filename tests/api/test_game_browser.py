"""End to end: a real `pictorank serve` process and the game page in headless Chromium.

Plays one round of each mode on a phone-sized screen, mostly with the keyboard, and checks
what the page shows against what the service answered: the pictograms' drawings load, pictorank's
confidence and explanations show, the Ask mode re-ranks live as the clue changes (never showing a
stale reply), "Not it" ranks again without the top word, pictorank's own clue for a secret word
(Clue mode) can be guessed while the word stays on the server, and Ask's "Suggest a clue" fills and ranks the clue. Screenshots go to
reports/screenshots/.

Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it; PICTORANK_CHROMIUM names
another path); Playwright's own browser download is not used. Without it the test skips, unless
PICTORANK_REQUIRE_BROWSER=1 (set by `.ci/run`): then it fails. Set PICTORANK_GAME_URL to test an already running service instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path(os.environ.get("PICTORANK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "reports" / "screenshots"
PHONE = {"width": 390, "height": 844}
START_TIMEOUT = 240  # seconds: loading torch and encoding the vocabulary on a busy 2-core machine

# CI sets PICTORANK_REQUIRE_BROWSER=1: there a missing browser is a failure, never a quiet skip.
REQUIRED = os.environ.get("PICTORANK_REQUIRE_BROWSER") == "1"


def _missing(reason: str) -> None:
    """Skip this module for a developer without the browser; fail it where it is required."""
    if REQUIRED:
        pytest.fail(f"{reason}, and PICTORANK_REQUIRE_BROWSER=1 requires the browser test", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


if not CHROMIUM.is_file():
    _missing(f"{CHROMIUM} not found: install Debian's chromium package (.ci/run does)")
try:
    from playwright import sync_api
except ImportError:
    _missing("playwright is not installed (it is in the [test] extra)")
expect = sync_api.expect


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ready", timeout=2) as response:
            return json.load(response).get("status") == "ok"
    except OSError:
        return False


def _suggest_ready(url: str) -> bool:
    """/suggest answers 503 "still loading" while the clue-giver is built after /ready."""
    request = urllib.request.Request(f"{url}/suggest", data=b'{"word": "cat", "top": 1}',
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30):
            return True
    except urllib.error.HTTPError as error:
        return error.code != 503
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """The base URL of a `pictorank serve` subprocess, ready to rank and to suggest.

    Its clue model is the one the `clue_giver` fixture fitted into the same cache folder (the
    same data, encoder and parameters give the same fit's key), so the server reads it back at
    start-up: no test waits for a fit in the background.
    """
    if os.environ.get("PICTORANK_GAME_URL"):
        yield os.environ["PICTORANK_GAME_URL"].rstrip("/")
        return
    clue_settings = request.getfixturevalue("clue_settings")
    request.getfixturevalue("clue_giver")
    env = {"PICTORANK_CACHE_DIR": str(clue_settings.cache_dir), "PICTORANK_SUGGEST_TRAIN": str(clue_settings.suggest_train)}
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with serving([], log, env, ready=_suggest_ready, timeout=START_TIMEOUT) as running:
        yield running.url


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


def _images_load(page, selector: str, count: int) -> None:
    """`count` images match `selector` and every one has loaded (a drawing with a natural width)."""
    expect(page.locator(selector)).to_have_count(count)
    page.wait_for_function(
        "sel => [...document.querySelectorAll(sel)].every(img => img.complete && img.naturalWidth > 0)",
        arg=selector, timeout=10_000,
    )


def _percent(confidence: float) -> str:
    return f"{round(confidence * 100)}% sure"


def test_guess_mode_round(server, page):
    with page.expect_response("**/puzzles/random*") as drawn:
        page.goto(server + "/")
    puzzle = drawn.value.json()
    assert "answer" not in puzzle  # never revealed before the guess

    cards = page.locator("#clue .card")
    expect(cards).to_have_count(len(puzzle["hints"]))
    for card, hint in zip(cards.all(), puzzle["hints"]):
        expect(card.locator(".desc")).to_have_text(hint["description"])
        expect(card.locator("img.pictogram")).to_have_attribute("alt", hint["description"])  # drawing + caption
    _images_load(page, "#clue .card img.pictogram", len(puzzle["hints"]))
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
    # How sure pictorank was, and why each of its top words ranks where it does.
    assert result["confidence"] is not None, "the served model has no calibration (retrain it)"
    expect(page.locator("#guess-confidence")).to_contain_text(_percent(result["confidence"]))
    why = page.locator("#guess-why li")
    expect(why).to_have_count(len(result["explanations"]))
    expect(why.first.locator(".summary")).to_have_text(result["explanations"][0]["summary"])
    expect(why.first).to_have_attribute("data-word", result["ranking"][0])
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


def _rank_requests(page) -> list:
    """Every POST /rank the page sends from now on, in order (live re-ranking sends many)."""
    sent: list = []
    page.on("request", lambda request: sent.append(request) if request.url.endswith("/rank") else None)
    return sent


def _last_ranking(sent: list) -> tuple[dict, dict]:
    """The body of the page's latest /rank request and the service's reply to it."""
    request = sent[-1]
    return request.post_data_json, request.response().json()


def _clue_ids(page) -> list[int]:
    return page.locator("#ask-clue .card").evaluate_all("cards => cards.map(c => Number(c.dataset.hintId))")


def _shown_for(page, ids: list[int]) -> None:
    """The ranking on screen is the one for the clue `ids` (the page marks which clue it ranked)."""
    expect(page.locator("#ask-ranking")).to_be_visible()
    expect(page.locator("#ask-ranking")).to_have_attribute("data-for", ",".join(map(str, ids)))


def test_ask_mode_round(server, page):
    page.goto(server + "/")
    # Keyboard: from the focused Guess tab, ArrowRight opens Ask.
    page.locator("#tab-guess").focus()
    with page.expect_response("**/hints"):
        page.keyboard.press("ArrowRight")
    expect(page.locator("#panel-ask")).to_be_visible()
    expect(page.locator("#tab-ask")).to_have_attribute("aria-selected", "true")

    sent = _rank_requests(page)

    # Pictograms show as drawings in the search results, and the clue ranks live as it changes.
    page.locator("#hint-search").fill("animal")
    _images_load(page, "#hint-results img.pictogram", page.locator("#hint-results button").count())
    picked = [_add_hint(page, "animal")]
    _shown_for(page, _clue_ids(page))  # ranked without pressing Rank
    picked += [_add_hint(page, "water"), _add_hint(page, "sun")]
    cards = page.locator("#ask-clue .card")
    expect(cards.locator(".desc")).to_have_text(picked)
    _images_load(page, "#ask-clue .card img.pictogram", 3)
    expect(cards.first.locator(".badge")).to_have_text("main idea")
    _shown_for(page, _clue_ids(page))
    cards.nth(2).get_by_role("button", name="Remove").click()  # removable
    expect(cards.locator(".desc")).to_have_text(picked[:2])
    cards.nth(1).get_by_role("button", name="earlier").click()  # reorderable
    expect(cards.locator(".desc")).to_have_text([picked[1], picked[0]])
    cards.nth(1).get_by_role("button", name="earlier").click()
    expect(cards.locator(".desc")).to_have_text(picked[:2])

    # No options: open vocabulary, re-ranked for the clue as it is now.
    _shown_for(page, _clue_ids(page))
    body, result = _last_ranking(sent)
    assert body["hints"] == _clue_ids(page) and body["explain"] is True and "options" not in body
    assert result["mode"] == "open_vocabulary" and len(result["ranking"]) == 10
    expect(page.locator("#ask-chart .bar-row")).to_have_count(10)
    assert _chart_words(page, "#ask-chart") == result["ranking"]
    expect(page.locator("#ask-status")).to_contain_text("every word pictorank knows")
    expect(page.locator("#ask-why li")).to_have_count(10)
    expect(page.locator("#ask-confidence")).to_have_text("")  # no calibration for open vocabulary
    assert _fits_phone(page)
    _screenshot(page, "game_ask_open_vocabulary.png")

    # "Not it" beside the top answer: ranked again without it.
    top = result["ranking"][0]
    page.locator("#ask-chart .bar-row").first.get_by_role("button", name="rank again without it").click()
    expect(page.locator("#ask-excluded-words")).to_contain_text(top)
    expect(page.locator("#ask-chart .bar-row").first).not_to_have_attribute("data-word", top)
    body, result = _last_ranking(sent)
    assert body["exclude"] == [top] and top not in result["ranking"] and len(result["ranking"]) == 10
    assert _chart_words(page, "#ask-chart") == result["ranking"]
    _screenshot(page, "game_ask_not_it.png")
    page.locator("#ask-excluded-reset").click()
    expect(page.locator("#ask-excluded")).to_be_hidden()
    expect(page.locator("#ask-chart .bar-row").first).to_have_attribute("data-word", top)

    # A repeated option: the service's 422 message is shown, not a blank page.
    page.locator("#ask-options").fill("seal\nhammer\nseal")
    status = page.locator("#ask-status")
    expect(status).to_have_class("status error")
    expect(status).to_contain_text("Error 422")
    expect(status).to_contain_text("repeated option")
    expect(page.locator("#ask-ranking")).to_be_hidden()
    _screenshot(page, "game_ask_error.png")

    options = ["seal", "hammer", "tulip", "river"]
    page.locator("#ask-options").fill("\n".join(options))
    expect(page.locator("#ask-status")).to_have_text("Ranked your 4 options.")
    body, result = _last_ranking(sent)
    assert body["options"] == options
    assert result["mode"] == "options" and sorted(result["ranking"]) == sorted(options)
    assert _chart_words(page, "#ask-chart") == result["ranking"]
    assert result["confidence"] is not None, "the served model has no calibration (retrain it)"
    # typed options may leave the word out: the page's confidence counts that chance
    expect(page.locator("#ask-confidence")).to_contain_text(_percent(result["confidence"] * (1 - result["none_of_these"])))
    expect(page.locator("#ask-why li")).to_have_count(4)
    expect(page.locator("#ask-why li").first.locator(".summary")).to_have_text(result["explanations"][0]["summary"])
    _screenshot(page, "game_ask_options.png")


# Holds back the page's first /rank reply for 1.5 s, so that it arrives after a newer one.
SLOW_FIRST_RANKING = """
(() => {
  const send = window.fetch.bind(window);
  let first = true;
  window.__slowReplyDone = false;
  window.fetch = async (url, options) => {
    const slow = first && String(url).endsWith("/rank");
    if (slow) first = false;
    const response = await send(url, options);
    if (slow) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      setTimeout(() => { window.__slowReplyDone = true; }, 0);
    }
    return response;
  };
})();
"""


def test_ask_mode_never_shows_a_stale_ranking(server, page):
    page.add_init_script(SLOW_FIRST_RANKING)
    page.goto(server + "/")
    with page.expect_response("**/hints"):
        page.locator("#tab-ask").click()
    sent = _rank_requests(page)
    with page.expect_request("**/rank"):
        _add_hint(page, "animal")  # its ranking comes back late...
    _add_hint(page, "water")  # ...after this newer clue's
    newest = _clue_ids(page)
    _shown_for(page, newest)
    page.wait_for_function("() => window.__slowReplyDone === true", timeout=10_000)  # a function: the CSP forbids eval
    page.wait_for_timeout(200)  # the stale reply has been handled (and ignored)
    _shown_for(page, newest)
    body, result = _last_ranking(sent)
    assert body["hints"] == newest and _chart_words(page, "#ask-chart") == result["ranking"]


# -- issue #14: pictorank gives the clue (Clue mode) and suggests one in Ask mode ------------------


def _key_for(index: int) -> str:
    """The number key that picks the option at `index` (1-9, then 0 for the tenth)."""
    return str((index + 1) % 10)


def _suggested_cards(page, panel: str, clue: dict) -> None:
    """The clue on screen is the suggestion: same pictograms in order, drawings loaded, main idea first."""
    cards = page.locator(f"{panel} .card")
    expect(cards).to_have_count(len(clue["pictograms"]))
    expect(cards.locator(".desc")).to_have_text([p["description"] for p in clue["pictograms"]])
    ids = cards.evaluate_all("cards => cards.map(c => Number(c.dataset.hintId))")
    assert ids == [p["id"] for p in clue["pictograms"]]
    _images_load(page, f"{panel} .card img.pictogram", len(clue["pictograms"]))
    expect(cards.first.locator(".badge")).to_have_text("main idea")


def test_clue_mode_round(server, page):
    page.goto(server + "/")
    # pictorank draws a puzzle, picks one of its options as the secret word and clues it; the page
    # gets the clue and the options, never the word (nor the reasons, which would name it).
    with page.expect_response("**/clues/random") as drawn:
        page.locator("#tab-give").click()
    expect(page.locator("#panel-give")).to_be_visible()
    shown_round = drawn.value.json()
    assert set(shown_round) == {"id", "subtask", "pictograms", "options"} and len(shown_round["options"]) == 10
    assert all("reason" not in p for p in shown_round["pictograms"])
    _suggested_cards(page, "#give-clue", shown_round)
    options = page.locator("#give-options button")
    expect(options).to_have_count(10)
    shown = options.all_inner_texts()
    assert shown == shown_round["options"]
    expect(page.locator("#give-verdict")).to_be_hidden()  # nothing tells the word before the guess
    expect(page.locator("#give-why li")).to_have_count(0)
    assert _fits_phone(page)
    _screenshot(page, "game_clue.png")

    # Keyboard: the first option's number key; the server's verdict names the word, the reasons show.
    with page.expect_response("**/clues/*/guess") as guessed:
        page.keyboard.press(_key_for(0))
    assert guessed.value.request.post_data_json == {"guess": shown[0]}
    result = guessed.value.json()
    word, clue = result["answer"], result["clue"]
    assert [p["id"] for p in clue["pictograms"]] == [p["id"] for p in shown_round["pictograms"]]
    verdict = page.locator("#give-verdict")
    if result["correct"]:
        expect(verdict).to_contain_text(f'Right! The word is "{word}"')
    else:
        expect(verdict).to_contain_text(f'Wrong: you picked "{shown[0]}", the word is "{word}"')
    expect(verdict).to_contain_text(f"of {clue['options']}")
    expect(page.locator("#give-options button.answer")).to_have_text(word)
    expect(page.locator("#give-options button:disabled")).to_have_count(10)
    why = page.locator("#give-why li .summary")
    expect(why).to_have_text([p["reason"] for p in clue["pictograms"]])
    expect(page.locator("#give-next")).to_be_focused()
    _screenshot(page, "game_clue_verdict.png")

    # The player's own word: no rivals sent, pictorank's nearest known words stand in; nothing to
    # guess (the player typed it): the clue and its reasons show at once.
    page.locator("#give-word").fill("babysitter")
    with page.expect_response("**/suggest") as suggested:
        page.locator("#give-word").press("Enter")
    sent, result = suggested.value.request.post_data_json, suggested.value.json()
    assert sent == {"word": "babysitter", "avoid": [], "top": 1, "use_known": True}
    assert result["avoid_source"] == "nearest train answers" and len(result["avoid"]) == 10
    best = result["suggestions"][0]
    _suggested_cards(page, "#give-clue", best)
    expect(options).to_have_count(0)
    expect(page.locator("#give-status")).not_to_contain_text("Which is it")
    expect(page.locator("#give-why li .summary")).to_have_text([p["reason"] for p in best["pictograms"]])
    page.set_viewport_size({"width": 1280, "height": 900})
    _screenshot(page, "game_clue_own_word_desktop.png")


def test_ask_mode_suggests_a_clue(server, page):
    page.goto(server + "/")
    with page.expect_response("**/hints"):
        page.locator("#tab-ask").click()
    sent = _rank_requests(page)
    options = ["babysitter", "nurse", "teacher", "grandmother"]
    page.locator("#ask-options").fill("\n".join(options))
    page.locator("#ask-word").fill("babysitter")
    with page.expect_response("**/suggest") as suggested:
        page.locator("#ask-suggest").click()
    body, result = suggested.value.request.post_data_json, suggested.value.json()
    assert body["word"] == "babysitter" and body["avoid"] == options[1:]  # the other options are the rivals
    best = result["suggestions"][0]
    ids = [p["id"] for p in best["pictograms"]]
    # The suggestion becomes the clue, and is ranked like any clue against the player's options.
    _suggested_cards(page, "#ask-clue", best)
    _shown_for(page, ids)
    ranked_body, ranked = _last_ranking(sent)
    assert ranked_body["hints"] == ids and ranked_body["options"] == options
    assert _chart_words(page, "#ask-chart") == ranked["ranking"]
    status = page.locator("#ask-suggest-status")
    expect(status).to_contain_text(f"#{best['rank']} of {best['options']} words")
    assert _fits_phone(page)
    _screenshot(page, "game_ask_suggest.png")

    # Bad words are refused with a readable message, and the clue stays as it was.
    page.locator("#ask-word").fill("   ")
    page.locator("#ask-suggest").click()
    expect(status).to_have_text("Type a word first.")
    page.locator("#ask-word").fill("sun|flower")
    page.locator("#ask-word").press("Enter")
    expect(status).to_have_class("status error")
    expect(status).to_contain_text("Error 422")
    expect(status).to_contain_text("'|'")
    assert _clue_ids(page) == ids
