"""POST /rank's additions for a game front-end: `confidence` on every ranking of given options,
`explain` (why each returned option ranks where it does), `exclude` (words already guessed
wrong); the guess endpoint's confidence and explanations; /hints' icons; /health's model."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from helpers import DATA

CLUE = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "tulip", "hammer", "river"]}
# For the stand-in encoder of `api_client`, which knows words, not meanings: the answer shares them.
STUB_CLUE = {"hint_texts": ["flower", "sun"], "options": ["sun flower", "tulip", "hammer", "river"]}


@pytest.fixture(scope="module")
def learned_client(small_learned, encoder):
    """The service over the session's small learned ranker (calibrated by training)."""
    from pictorank.api.app import create_app
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings

    settings = Settings(vocabulary_files=[DATA / "val.csv"])
    service = build_service(settings, base=encoder, ranker=small_learned)
    service.self_test()
    with TestClient(create_app(settings, service=service)) as client:
        yield client


def test_every_ranking_of_options_carries_a_confidence_and_no_explanation_unless_asked(api_client):
    body = api_client.post("/rank", json=STUB_CLUE).json()
    assert 0.0 < body["confidence"] < 1.0 and body["explanations"] is None
    assert body["ranking"][0] == "sun flower"


def test_open_vocabulary_rankings_have_no_confidence(api_client):
    body = api_client.post("/rank", json={"hint_texts": ["animal", "water"], "top_k": 5}).json()
    assert body["mode"] == "open_vocabulary" and body["confidence"] is None


def test_cosine_explanations_are_each_hints_similarity(real_client, real_service):
    encoder = real_service.encoders.base
    body = real_client.post("/rank", json={**CLUE, "explain": True, "top_k": 3}).json()
    explanations = body["explanations"]
    assert [e["option"] for e in explanations] == body["ranking"]
    for e, score in zip(explanations, body["scores"]):
        assert [h["hint"] for h in e["hints"]] == ["flower", "sun"]
        assert e["groups"] == {"similarity": pytest.approx(score, abs=1e-4)}
        expected = encoder.encode([e["option"]]) @ encoder.encode(["flower", "sun"]).T
        assert [h["pull"] for h in e["hints"]] == pytest.approx(expected[0].tolist(), abs=1e-4)
    # cosine has no spelling group, so its sentence names only the closest hint
    assert explanations[0]["summary"] == "closest to 'flower'"


def test_learned_explanations_add_up_to_the_score(learned_client):
    body = learned_client.post("/rank", json={**CLUE, "explain": True}).json()
    assert 0.0 < body["confidence"] < 1.0
    for e, score in zip(body["explanations"], body["scores"]):
        assert set(e["groups"]) - {"unseen_vocabulary"} == {"similarity", "spelling", "train_clues", "clue_size", "baseline"}
        assert sum(e["groups"].values()) == pytest.approx(score, abs=1e-3)
        assert sum(h["pull"] for h in e["hints"]) == pytest.approx(e["groups"]["similarity"], abs=1e-3)


def test_explaining_changes_nothing_else(learned_client):
    plain = learned_client.post("/rank", json=CLUE).json()
    explained = learned_client.post("/rank", json={**CLUE, "explain": True}).json()
    assert set(explained) == set(plain) and plain["explanations"] is None
    assert explained["ranking"] == plain["ranking"] and explained["scores"] == pytest.approx(plain["scores"])
    assert explained["confidence"] == pytest.approx(plain["confidence"])


def test_excluded_words_leave_the_options_and_the_confidence_follows(api_client):
    full = api_client.post("/rank", json=CLUE).json()
    body = api_client.post("/rank", json={**CLUE, "exclude": ["sunflower", "not an option"]}).json()
    assert body["ranking"] == [w for w in full["ranking"] if w != "sunflower"]
    assert body["confidence"] != full["confidence"]


def test_excluded_words_leave_the_open_vocabulary_without_shortening_it(api_client):
    clue = {"hint_texts": ["animal", "water"], "top_k": 10}
    first = api_client.post("/rank", json=clue).json()["ranking"]
    after = api_client.post("/rank", json={**clue, "exclude": first[:3]}).json()["ranking"]
    assert len(after) == 10 and not set(first[:3]) & set(after)


def test_excluding_every_option_is_a_422(api_client):
    response = api_client.post("/rank", json={**CLUE, "exclude": CLUE["options"]})
    assert response.status_code == 422 and "nothing is left" in response.json()["detail"][0]["msg"]
    bad = api_client.post("/rank", json={**CLUE, "exclude": ["a|b"]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", "exclude"]


def test_a_batch_may_mix_explained_and_plain_clues(api_client):
    batch = {"puzzles": [CLUE, {**CLUE, "explain": True, "top_k": 2}, {"hints": [325, 636], "options": ["a", "b"]}]}
    results = api_client.post("/rank/batch", json=batch).json()["results"]
    assert results[0]["explanations"] is None and len(results[1]["explanations"]) == 2
    assert results[2]["explanations"] is None and results[0]["ranking"][:2] == results[1]["ranking"]


def test_the_guess_answer_says_how_sure_and_why(learned_client):
    puzzle = learned_client.get("/puzzles/random", params={"subtask": 3}).json()
    result = learned_client.post(f"/puzzles/{puzzle['id']}/guess", json={"guess": puzzle["options"][0]}).json()
    assert 0.0 < result["confidence"] < 1.0
    assert [e["option"] for e in result["explanations"]] == result["ranking"] and len(result["ranking"]) == 10


def test_hints_carry_icon_urls_and_health_names_the_model(api_client):
    hints = api_client.get("/hints").json()["hints"]
    assert all(h["icon"] == f"/hints/{h['id']}/icon?v={h['icon'].rsplit('=', 1)[1]}" for h in hints)
    health = api_client.get("/health").json()
    assert health["status"] == "ok" and health["model"].startswith("cosine")


def test_none_of_these_is_a_new_field_for_given_options_only(api_client):
    from pictorank.api.schemas import RankResponse

    body = api_client.post("/rank", json=CLUE).json()
    assert set(body) == set(RankResponse.model_fields)
    assert set(body) - {"none_of_these"} == {"ranking", "answer", "scores", "model", "mode", "confidence", "explanations"}
    assert 0.0 <= body["none_of_these"] <= 1.0
    # the clue's own words among the options make its absence less likely than unrelated words do
    present = api_client.post("/rank", json={"hint_texts": ["flower", "sun"], "options": ["flower; sun", "hammer", "river"]}).json()
    absent = api_client.post("/rank", json={"hint_texts": ["flower", "sun"], "options": ["hammer", "river", "car"]}).json()
    assert present["none_of_these"] < absent["none_of_these"]
    open_vocabulary = api_client.post("/rank", json={"hint_texts": ["animal", "water"], "top_k": 5}).json()
    assert open_vocabulary["none_of_these"] is None


def test_exclude_matches_as_guesses_are_told_apart(api_client):
    """A word guessed wrong is excluded whatever its case or qualifier ("Zebra" excludes zebra)."""
    clue = {"hint_texts": ["animal", "stripes"], "options": ["zebra", "tiger", "horse"], "top_k": 3}
    body = api_client.post("/rank", json={**clue, "exclude": ["Zebra"]}).json()
    assert body["ranking"] and "zebra" not in body["ranking"]
    response = api_client.post("/rank", json={**clue, "exclude": ["ZEBRA", "Tiger", "horse"]})
    assert response.status_code == 422 and "nothing is left" in response.json()["detail"][0]["msg"]
