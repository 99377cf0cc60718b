"""Open play as a new player meets it: eight everyday clues in free text, asked through /rank
without options, against the trained model.

Needs a trained model with its lexicon and open play's ranker (models/default, made by `make
demo`); a fresh clone has none, so there the tests are skipped.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from helpers import ROOT
from pictorank.api.app import create_app
from pictorank.api.service import build_service
from pictorank.api.settings import Settings
from pictorank.lexicon import matches

MODEL = ROOT / "models" / "default"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (MODEL / "open_play" / "ranker.json").is_file(),
                                                   reason="no trained model with open play's ranker (make demo)")]

EVERYDAY = [
    (["animal", "stripes", "horse"], "zebra"), (["water", "frozen"], "ice"), (["sun", "flower"], "sunflower"),
    (["building", "books"], "library"), (["person", "fire", "water hose"], "firefighter"),
    pytest.param(["time", "wrist"], "watch", marks=pytest.mark.xfail(
        strict=False, reason="its compounds and near words (hour hand, wrist watch, clock, timepiece) rank above "
                             "watch: 12th for a model of the one-string encoders, 5th for one of the batched "
                             "encoders; val open play moved by less than its standard error between them")),
    (["sky", "water", "falling"], "rain"),
    pytest.param(["cold", "white", "falling"], "snow", marks=pytest.mark.xfail(
        strict=False, reason="a model retrained with one-string encoders ranks it 18th (the one before, 7th, "
                             "as this code serves it too), one of the batched encoders out of the top 10; val "
                             "open play moved by less than its standard error")),
]


@pytest.fixture(scope="module")
def client() -> TestClient:
    settings = Settings(model_dir=MODEL)
    return TestClient(create_app(settings, service=build_service(settings)))


@pytest.mark.parametrize(("hints", "answer"), EVERYDAY)
def test_the_answer_is_among_the_first_ten_guesses(client: TestClient, hints: list[str], answer: str) -> None:
    body = client.post("/rank", json={"hint_texts": hints, "top_k": 10}).json()
    assert body["mode"] == "open_vocabulary"
    assert any(matches(guess, answer) for guess in body["ranking"]), body["ranking"]


def test_no_list_of_guesses_holds_two_spellings_of_one_word(client: TestClient) -> None:
    """"air traveler" and "air traveller" were two of the same ten guesses: over val's clues, no
    top 10 holds two spellings of one word (pictorank.lexicon.spellings), nor a word twice."""
    from helpers import DATA
    from pictorank.lexicon import DEFAULT_SOURCE, guess_key, load_lexicon
    from pictorank.lexicon.glosses import read_glosses
    from pictorank.lexicon.spellings import spelling_groups
    from pictorank.puzzles import load_hints, load_puzzles

    lexicon = load_lexicon(DEFAULT_SOURCE)
    spellings = spelling_groups(lexicon.words, read_glosses())
    vocab = load_hints(DATA / "hint_descriptions.csv")
    clues = [{"hints": list(p.hints), "top_k": 10} for p in load_puzzles(DATA / "val.csv", vocab)]
    twice = []
    for start in range(0, len(clues), 16):  # 16 clues' candidates: under the texts a request may hold
        response = client.post("/rank/batch", json={"puzzles": clues[start : start + 16]})
        assert response.status_code == 200, response.text
        for answer in response.json()["results"]:
            keys = [guess_key(spellings.get(word, word)) for word in answer["ranking"]]
            if len(set(keys)) < len(keys):
                twice.append(answer["ranking"])
    assert twice == []
