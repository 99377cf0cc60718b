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
