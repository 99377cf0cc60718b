"""POST /suggest over HTTP: the game rule holds, the answer carries what a front-end shows
(pictograms with drawings, roles, reasons; the guesser's rank), and bad input is a 4xx with a JSON
body naming the field, never a 500. Also: without training puzzles only /suggest is off (503).

The clue model is the session's `clue_giver` (tests/api/conftest.py: fitted once on a slice of
train.csv, or read back from the cache folder); the session's real service is shared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from pictorank.api.app import create_app
from pictorank.api.clues import ClueGiver, build_clue_giver
from pictorank.api.settings import Settings
from pictorank.suggest import is_valid_clue

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def client(real_service, clue_giver) -> Iterator[TestClient]:
    """Returns 500s instead of raising them: a server error is a failed assertion, not a crash."""
    with TestClient(create_app(Settings(), service=real_service, clues=clue_giver), raise_server_exceptions=False) as c:
        yield c


def test_a_served_learned_model_lends_its_fine_tuned_encoder_as_reader(real_service, clue_giver) -> None:
    assert clue_giver.suggester is not None
    assert clue_giver.suggester.reader is real_service.encoders.finetuned


def _suggest(client: TestClient, **body) -> dict:
    response = client.post("/suggest", json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("word, avoid", [("cats", ["dog", "bird", "rose"]), ("sunflower", ["rose", "tulip", "sun"]),
                                         ("credit card", ["money", "bank"])])
def test_clues_follow_the_game_rule(client: TestClient, real_service, word: str, avoid: list[str]) -> None:
    body = _suggest(client, word=word, avoid=avoid, max_length=3, top=4, use_known=False)
    assert body["word"] == word and body["avoid"] == avoid and body["avoid_source"] == "request"
    assert body["guesser"] == "seed" and body["model"] == real_service.model_name
    assert 1 <= len(body["suggestions"]) <= 4
    for clue in body["suggestions"]:
        descriptions = [p["description"] for p in clue["pictograms"]]
        assert is_valid_clue(descriptions, word, avoid), descriptions  # none names a word, none repeats
        assert 1 <= len(descriptions) <= 3
        assert [p["role"] for p in clue["pictograms"]] == ["main idea"] + ["specifier"] * (len(descriptions) - 1)
        for p in clue["pictograms"]:
            assert real_service.vocab.descriptions[p["id"]] == p["description"] and p["reason"]
            assert p["icon"].startswith(f"/hints/{p['id']}/icon")
        assert clue["options"] == len(avoid) + 1 and 1 <= clue["rank"] <= clue["options"]
        assert (clue["margin"] > 0) == (clue["rank"] == 1)
        assert not clue["known"]


def test_the_drawings_of_a_suggestion_load(client: TestClient) -> None:
    clue = _suggest(client, word="sunflower", top=1)["suggestions"][0]
    for p in clue["pictograms"]:
        icon = client.get(p["icon"])
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")


def test_without_avoid_the_nearest_train_answers_stand_in(client: TestClient) -> None:
    body = _suggest(client, word="  babysitter  ", top=2)
    assert body["word"] == "babysitter" and body["avoid_source"] == "nearest train answers"
    assert len(body["avoid"]) == 10 and "babysitter" not in body["avoid"]
    assert body["suggestions"][0]["options"] == 11


def test_repeated_avoid_words_and_the_word_itself_are_dropped(client: TestClient) -> None:
    body = _suggest(client, word="sunflower", avoid=["rose", "rose", "sunflower", "tulip"], top=1)
    assert body["suggestions"][0]["options"] == 3
    assert body["avoid"] == ["rose", "tulip"] and body["avoid_source"] == "request"  # what was judged against


def test_avoid_words_that_are_all_the_word_leave_the_nearest_answers_and_say_so(client: TestClient) -> None:
    body = _suggest(client, word="sunflower", avoid=["sunflower", " sunflower "], top=1)
    assert body["avoid_source"] == "nearest train answers" and len(body["avoid"]) == 10
    assert body["suggestions"][0]["options"] == 11


def test_a_train_answer_gets_its_clue_back_first_only_when_the_guesser_picks_it(client: TestClient,
                                                                               train_puzzles) -> None:
    puzzle = next(p for p in train_puzzles if len(set(p.hints)) == len(p.hints) == 2)
    clues = _suggest(client, word=puzzle.answer, top=20)["suggestions"]
    stored = [c for c in clues if c["known"]]
    assert stored, "the train clue is among the clues, marked known"
    if clues[0]["known"]:
        assert clues[0]["rank"] == 1
    else:
        assert all(c["rank"] > 1 for c in stored) and clues[-len(stored):] == stored
    fresh = _suggest(client, word=puzzle.answer, top=3, use_known=False)
    assert not any(clue["known"] for clue in fresh["suggestions"])


@pytest.mark.parametrize("word", ["(", "'s", "1984", "ünïcödé straße", "猫", "x" * 100, "a-b_c.d", "🙂"])
def test_odd_words_get_clues_not_500s(client: TestClient, word: str) -> None:
    body = _suggest(client, word=word, avoid=["dog", "house"], top=2)
    assert body["suggestions"], word


@pytest.mark.parametrize(
    "body, loc, words",
    [
        ({"word": ""}, ["body", "word"], "blank"),
        ({"word": "   "}, ["body", "word"], "blank"),
        ({"word": "x" * 101}, ["body", "word"], "at most 100"),
        ({"word": "sun|flower"}, ["body", "word"], "'|'"),
        ({"word": "cat", "avoid": ["dog", "bi|rd"]}, ["body", "avoid", 1], "'|'"),
        ({"word": "cat", "avoid": ["dog", " "]}, ["body", "avoid", 1], "blank"),
        ({"word": "cat", "avoid": [f"w{i}" for i in range(101)]}, ["body", "avoid"], "at most 100"),
        ({"word": "cat", "avoid": "dog"}, ["body", "avoid"], "list"),
        ({"word": 5}, ["body", "word"], "string"),
        ({"word": None}, ["body", "word"], "string"),
        ({"word": ["cat"]}, ["body", "word"], "string"),
        ({"avoid": ["dog"]}, ["body", "word"], "required"),
        ({"word": "cat", "avoid": [1, 2]}, ["body", "avoid", 0], "string"),
        ({"word": "cat", "max_length": "4"}, ["body", "max_length"], "integer"),
        ({"word": "cat", "max_length": 4.0}, ["body", "max_length"], "integer"),
        ({"word": "cat", "max_length": True}, ["body", "max_length"], "integer"),
        ({"word": "cat", "max_length": 0}, ["body", "max_length"], "greater than or equal to 1"),
        ({"word": "cat", "max_length": 7}, ["body", "max_length"], "less than or equal to 6"),
        ({"word": "cat", "top": 0}, ["body", "top"], "greater than or equal to 1"),
        ({"word": "cat", "top": 21}, ["body", "top"], "less than or equal to 20"),
        ({"word": "cat", "use_known": "yes"}, ["body", "use_known"], "boolean"),
        ({"word": "cat", "guesser": "seed"}, ["body", "guesser"], "Extra inputs"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client: TestClient, body: dict, loc: list, words: str) -> None:
    response = client.post("/suggest", json=body)
    assert response.status_code == 422, response.text
    details = response.json()["detail"]
    assert any(d["loc"] == loc and words in d["msg"] for d in details), details


@pytest.mark.parametrize(
    "content, headers, status",
    [
        (b"{", JSON, 422),  # not JSON
        (b'["cat"]', JSON, 422),  # JSON, not an object
        (b'{"word": NaN}', JSON, 422),
        (b'{"word": "cat"}', {"content-type": "text/plain"}, 415),
        (b'{"word": "\\ud800"}', JSON, 422),  # a lone surrogate
    ],
)
def test_malformed_bodies_are_4xx_with_a_json_body(client: TestClient, content: bytes, headers: dict,
                                                   status: int) -> None:
    response = client.post("/suggest", content=content, headers=headers)
    assert response.status_code == status, response.text
    assert response.json()["detail"][0]["msg"]


def test_without_training_puzzles_only_suggest_is_off(real_service, tmp_path: Path) -> None:
    settings = Settings(suggest_train=tmp_path / "missing.csv")
    with TestClient(create_app(settings, service=real_service), raise_server_exceptions=False) as client:
        response = client.post("/suggest", json={"word": "cat"})
        assert response.status_code == 503
        [detail] = response.json()["detail"]
        assert detail["type"] == "suggest_unavailable" and "PICTORANK_SUGGEST_TRAIN" in detail["msg"]
        assert "missing.csv" in detail["msg"]
        assert client.get("/ready").json()["status"] == "ok"
        ranked = client.post("/rank", json={"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]})
        assert ranked.status_code == 200


def test_a_file_without_answers_turns_suggest_off_too(real_service) -> None:
    from helpers import DATA

    giver = build_clue_giver(Settings(suggest_train=DATA / "test.csv"), real_service)
    assert giver.suggester is None and "answers" in (giver.error or "")


def test_ready_waits_for_the_clue_giver_and_then_suggest_answers(real_service, clue_giver, clue_settings,
                                                                 monkeypatch) -> None:
    """/suggest answered 503 "still loading" for seconds after /ready said ready. Now /ready is
    503 while the clue-giver is built, /health names what is loading, /rank answers meanwhile, and
    once /ready answers 200 so does /suggest, at once."""
    import threading
    import time

    import pictorank.api.app as app_module

    release = threading.Event()

    def slow_build(settings, service, stop=None):
        release.wait(30)
        return clue_giver

    monkeypatch.setattr(app_module, "build_clue_giver", slow_build)
    with TestClient(create_app(clue_settings, service=real_service)) as client:
        waiting = client.get("/ready")
        assert waiting.status_code == 503 and waiting.json()["loading"] == ["suggest"]
        assert waiting.headers["retry-after"].isdigit()
        assert client.get("/health").json()["loading"] == ["suggest"]
        ranked = client.post("/rank", json={"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]})
        assert ranked.status_code == 200
        loading = client.post("/suggest", json={"word": "cat"})
        assert loading.status_code == 503 and "still loading" in loading.text
        release.set()
        deadline = time.monotonic() + 30
        while client.get("/ready").status_code == 503 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get("/ready").json()["status"] == "ok"
        assert client.post("/suggest", json={"word": "cat", "top": 1}).status_code == 200
        assert client.get("/health").json()["loading"] == []


def test_the_background_fit_never_holds_the_lock_for_long(real_service) -> None:
    """The fit encodes thousands of strings; /rank must get the lock between chunks of them."""
    import threading

    from pictorank.encoders import LockedEncoder

    holds: list[int] = []

    class Counting:
        model_id = "counting"

        def encode(self, texts, show_progress=False):
            holds.append(len(texts))
            return real_service.encoders.base.encode(texts)

    locked = LockedEncoder(Counting(), threading.Lock())  # type: ignore[arg-type]
    texts = [f"word {i}" for i in range(100)]
    vectors = locked.encode(texts)
    assert vectors.shape[0] == 100 and max(holds) <= LockedEncoder.CHUNK and sum(holds) == 100
    assert (vectors[5] == real_service.encoders.base.encode(["word 5"])[0]).all()


def test_suggest_and_evaluate_suggest_run_end_to_end_from_the_command_line(
    clue_giver, clue_settings, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The two clue commands in a real run, over the session's fit (read back from its cache
    folder, as a second run of the command reads the first's)."""
    from pictorank.cli import main

    monkeypatch.setenv("PICTORANK_CACHE_DIR", str(clue_settings.cache_dir))
    common = ["--hints", str(data_dir / "hint_descriptions.csv"), "--train", str(clue_settings.suggest_train), "--quiet"]
    assert main(["suggest", "--word", "sunflower", "--avoid", "rose", "tulip", "--top", "2", "--json", *common]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert 1 <= len(payload["suggestions"]) <= 2
    first = payload["suggestions"][0]
    assert first["options"] == 3 and all({"id", "description", "role", "reason"} <= set(p) for p in first["pictograms"])
    val = tmp_path / "val.csv"
    val.write_text("".join((data_dir / "val.csv").read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
    assert main(["evaluate-suggest", "--input", str(val), "--guesser", "cosine", *common]) == 0
    out = capsys.readouterr().out
    assert "main idea" in out and "seed" in out and "cosine" in out


def _as_served(suggestions: list[dict]) -> list[tuple]:
    """What a player sees of each clue, as both the command line and POST /suggest give it."""
    return [([p["id"] for p in s["pictograms"]], [p["reason"] for p in s["pictograms"]], s["rank"], s["options"],
             round(s["margin"], 4), round(s["likeness"], 4), s["known"]) for s in suggestions]


def test_the_command_line_and_the_service_give_the_same_clues(client, clue_settings, capsys) -> None:
    """`pictorank suggest --word W` and POST /suggest build the clue-giver with one function
    (pictorank.suggest.assembly.assemble_suggester) over the same encoders: for 50 val words, with
    and without words to avoid, they give the same clues in the same order."""
    import argparse

    from helpers import DATA
    from pictorank import cli
    from pictorank.puzzles import load_hints, load_puzzles
    from pictorank.suggest.suggester import WIN_BONUS

    vocab = load_hints(DATA / "hint_descriptions.csv")
    puzzles = list({p.answer: p for p in load_puzzles(DATA / "val.csv", vocab)}.values())[:50]
    args = argparse.Namespace(hints=str(DATA / "hint_descriptions.csv"), train=str(clue_settings.suggest_train),
                              guesser="seed", model=None, reader="none", max_length=4, win_bonus=WIN_BONUS,
                              cache_dir=None, no_cache=False, quiet=True)
    suggester, _, _ = cli.suggester_from_args(args, vocab)
    for puzzle in puzzles:
        for avoid in ([], [o for o in puzzle.options if o != puzzle.answer][:5]):
            served = _suggest(client, word=puzzle.answer, avoid=avoid, top=3)["suggestions"]
            made = [s.to_dict() for s in suggester.suggest(puzzle.answer, avoid, max_length=4, top=3)]
            assert _as_served(made) == _as_served(served), (puzzle.answer, avoid)
    for word in ("birthday party", "honey"):  # the command itself, as a user runs it
        command = ["suggest", "--word", word, "--hints", args.hints, "--train", args.train, "--reader", "none",
                   "--top", "3", "--json"]
        assert cli.main(command) == 0
        printed = json.loads(capsys.readouterr().out)["suggestions"]
        assert _as_served(printed) == _as_served(_suggest(client, word=word, top=3)["suggestions"])


def test_no_clue_shows_a_pictogram_naming_the_word_or_a_word_to_avoid(client: TestClient, real_service) -> None:
    """Asked to clue lighthouse with tower among the words to avoid, the clue-giver used the tower
    pictogram. Over 200 val puzzles, each word with its puzzle's other options to avoid (as the
    game's Clue mode asks): no suggested pictogram names the word, a form of it or an avoid word."""
    from helpers import DATA
    from pictorank.puzzles import load_puzzles

    body = _suggest(client, word="lighthouse", avoid=["tower", "house"], top=5)
    assert body["suggestions"]
    assert not [p for clue in body["suggestions"] for p in clue["pictograms"] if p["description"] == "tower"]
    broken = []
    for puzzle in load_puzzles(DATA / "val.csv", real_service.vocab)[:200]:
        avoid = [o for o in puzzle.options if o != puzzle.answer]
        for clue in _suggest(client, word=puzzle.answer, avoid=avoid, top=3)["suggestions"]:
            descriptions = [p["description"] for p in clue["pictograms"]]
            if not is_valid_clue(descriptions, puzzle.answer, avoid):
                broken.append((puzzle.answer, descriptions))
    assert broken == []
