"""Family-safe game rounds: random rounds skip puzzles that touch a sensitive topic (decided by the
WordNet-built table of pictorank.api.family); the setting turns it off; /rank is never filtered."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pictorank.api.app import create_app
from pictorank.api.family import puzzle_topics, sensitive_topic, sensitive_words
from pictorank.api.game import GamePuzzles
from pictorank.api.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "data" / "bliss"
ROUNDS = 500


def test_the_table_is_built_from_wordnet_topics():
    words = sensitive_words()
    assert len(words) > 500 and set(words.values()) <= {"sex", "excretion", "obscenity", "slur", "disparagement"}
    assert sensitive_topic("Anal  intercourse") == "sex" and sensitive_topic("farts") == "excretion"
    assert sensitive_topic("venereal disease") == "sex"  # through its definition: "transmitted by sexual intercourse"
    for word in ("sunflower", "umbrella", "zebra", "gender", "woman", "bottle"):
        assert sensitive_topic(word) is None, word


@pytest.mark.parametrize("puzzles_file", ["val.csv", "train.csv"])
def test_random_rounds_hold_no_sensitive_puzzle(puzzles_file):
    game = GamePuzzles.load(DATA / puzzles_file, DATA / "hint_descriptions.csv")
    unfiltered = GamePuzzles.load(DATA / puzzles_file, DATA / "hint_descriptions.csv", family_safe=False)
    sensitive = {i for i, p in unfiltered.puzzles.items() if puzzle_topics(p, unfiltered.descriptions)}
    assert sensitive and game.skipped == sensitive and not unfiltered.skipped
    for subtask in (None, 1, 2, 3):
        drawn = [game.draw(subtask) for _ in range(ROUNDS)]
        assert all(p is not None and not puzzle_topics(p, game.descriptions) for p in drawn)


def test_the_setting_turns_it_off_and_rank_is_never_filtered(api_service, monkeypatch):
    monkeypatch.setenv("PICTORANK_GAME_FAMILY_SAFE", "false")
    assert Settings().game_family_safe is False
    monkeypatch.delenv("PICTORANK_GAME_FAMILY_SAFE")
    assert Settings().game_family_safe is True
    with TestClient(create_app(Settings(), service=api_service)) as client:
        assert client.app.state.game.skipped
        body = client.post("/rank", json={"hint_texts": ["gas", "anus"], "options": ["fart", "tulip"]}).json()
        assert sorted(body["ranking"]) == ["fart", "tulip"]


# Adult, venereal and excretory words a family-safe round must never show: the three a player met
# in 400 rounds (venereal papilloma, birth control, constipation), the data's other such words,
# and common ones the data may hold in a pictogram's description.
NEVER_SHOWN = (
    "venereal papilloma", "birth control", "constipation", "venereal disease", "anal intercourse", "fart",
    "abortion", "catheter (urine)", "diaphragm (contraceptive)", "barrier (contraceptive)", "sanitary napkin",
    "scrotum", "rectum", "urethra", "genitals", "male genitals", "sperm", "erection", "sex", "penis",
    "vagina", "vulva", "testicle", "semen", "urine", "feces", "faeces", "excrement", "diarrhea", "condom",
    "contraception", "orgasm", "masturbation", "prostitute", "prostitution", "intercourse", "copulation",
    "defecation", "anus", "tampon",
)


def _shown(puzzle, descriptions) -> set[str]:
    """Every text a round of `puzzle` shows, in lower case: answer, options, the pictograms'
    synonyms; with each one's plain form (no qualifier)."""
    import re

    texts = [puzzle.answer, *puzzle.options]
    texts += [s for h in puzzle.hints for s in descriptions.get(h, "").split(",")]
    shown = {" ".join(t.lower().split()) for t in texts if t.strip()}
    return shown | {re.sub(r"\s*\(.*\)$", "", t) for t in shown}


def test_a_thousand_default_rounds_show_no_adult_or_excretory_word():
    assert len(NEVER_SHOWN) == 40
    game = GamePuzzles.load(DATA / "val.csv", DATA / "hint_descriptions.csv")  # the default settings' puzzles
    unfiltered = GamePuzzles.load(DATA / "val.csv", DATA / "hint_descriptions.csv", family_safe=False)
    seen_unfiltered = set().union(*(_shown(p, unfiltered.descriptions) for p in unfiltered.puzzles.values()))
    assert {"venereal papilloma", "birth control", "constipation"} <= seen_unfiltered  # the test can fail
    for _ in range(1000):
        shown = _shown(game.draw(), game.descriptions)
        words = {w for text in shown for w in text.split()}
        assert not [w for w in NEVER_SHOWN if w in shown or w in words], shown
