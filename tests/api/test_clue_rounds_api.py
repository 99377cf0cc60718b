"""The game's Clue mode over HTTP (GET /clues/random, POST /clues/{id}/guess): pictorank picks the
secret word on the server and the page never holds it; a guess is checked by any app that shares
the key (as `pictorank serve --workers N` shares it); bad input is a 4xx naming the field.

The clue-giver is the session's (the real clue model, read from the cache); the rounds' secrets
are also checked without HTTP, on `GamePuzzles` itself.
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from pictorank.api.app import create_app
from pictorank.api.clues import ClueGiver, build_clue_giver
from pictorank.api.game import GamePuzzles
from pictorank.api.settings import share_game_key as _share_game_key
from pictorank.api.settings import Settings
from pictorank.suggest import is_valid_clue

KEY = "k" * 32


def _client(real_service, clue_giver, key: str | None = KEY) -> TestClient:
    """Returns 500s instead of raising them: a server error is a failed assertion, not a crash."""
    app = create_app(Settings(game_key=key), service=real_service, clues=clue_giver)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def client(real_service, clue_giver) -> Iterator[TestClient]:
    with _client(real_service, clue_giver) as c:
        yield c


def _round(client: TestClient, **params) -> dict:
    response = client.get("/clues/random", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _guess(client: TestClient, round_id: str, guess: str) -> dict:
    response = client.post(f"/clues/{round_id}/guess", json={"guess": guess})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_round_shows_the_clue_and_the_options_but_not_the_word(client: TestClient, val_puzzles) -> None:
    body = _round(client)
    assert set(body) == {"id", "subtask", "pictograms", "options"}
    puzzle = {p.datapoint_id: p for p in val_puzzles}[body["id"].rpartition(".")[0]]
    assert body["subtask"] == 2 and body["options"] == list(puzzle.options) and len(body["options"]) == 10
    assert body["pictograms"] and body["pictograms"][0]["role"] == "main idea"
    for pictogram in body["pictograms"]:  # reasons would name the word: they wait for the guess
        assert set(pictogram) == {"id", "description", "icon", "role"}
        assert pictogram["icon"].startswith(f"/hints/{pictogram['id']}/icon")


def test_exactly_one_option_is_the_word_and_the_guess_shows_the_same_clue(client: TestClient) -> None:
    body = _round(client)
    verdicts = [_guess(client, body["id"], option) for option in body["options"]]
    assert sum(v["correct"] for v in verdicts) == 1
    [word] = {v["answer"] for v in verdicts}
    assert [v["guess"] for v in verdicts if v["correct"]] == [word] and word in body["options"]
    clue = verdicts[0]["clue"]
    assert [p["id"] for p in clue["pictograms"]] == [p["id"] for p in body["pictograms"]]
    assert all(p["reason"] for p in clue["pictograms"]) and clue["options"] == 10 and not clue["known"]
    assert is_valid_clue([p["description"] for p in clue["pictograms"]], word)
    assert verdicts[0]["guesser"] == "seed"


def test_an_app_with_the_same_key_knows_the_word_and_one_with_another_key_may_not(real_service, clue_giver,
                                                                                   client: TestClient) -> None:
    body = _round(client)
    answer = _guess(client, body["id"], body["options"][0])["answer"]
    with _client(real_service, clue_giver, key=KEY) as worker:  # another worker of the same server
        assert _guess(worker, body["id"], body["options"][0])["answer"] == answer


def test_secret_words_spread_over_the_options_and_follow_the_key(real_service) -> None:
    settings = Settings()
    first = GamePuzzles.load(settings.game_puzzles, settings.hints, key=b"a" * 32)  # type: ignore[arg-type]
    same = GamePuzzles.load(settings.game_puzzles, settings.hints, key=b"a" * 32)  # type: ignore[arg-type]
    other = GamePuzzles.load(settings.game_puzzles, settings.hints, key=b"b" * 32)  # type: ignore[arg-type]
    puzzle = next(p for p in first.puzzles.values() if len(p.options) == 10)
    ids = [f"{puzzle.datapoint_id}.{n:032x}" for n in range(60)]
    words = [first.round(i).word for i in ids]  # type: ignore[union-attr]
    assert words == [same.round(i).word for i in ids]  # type: ignore[union-attr]
    assert words != [other.round(i).word for i in ids]  # type: ignore[union-attr]
    assert len(set(words)) >= 6  # 60 draws over 10 options: any fixed choice would show
    round_ = first.round(ids[0])
    assert round_ is not None and set(round_.avoid) == set(puzzle.options) - {round_.word}
    fresh = [first.new_round(puzzle) for _ in range(3)]
    assert len({r.id for r in fresh}) == 3 and all(first.round(r.id) == r for r in fresh)


def _unclued(round_id: str) -> str:
    """The id as it was before the clue was shown: `<puzzle>.<nonce>` of `<puzzle>.<nonce>~<clue>~<tag>`."""
    return round_id.rsplit("~", 2)[0]


def test_the_guess_explains_the_clue_the_round_id_carries(client: TestClient) -> None:
    """Another worker may choose another clue for the same word (its int8 vectors depend on what it
    encoded before): the guess explains the pictograms the round showed, which its id carries."""
    body = _round(client)
    shown = [p["id"] for p in body["pictograms"]]
    assert body["id"].rsplit("~", 2)[1] == "-".join(map(str, shown))
    game: GamePuzzles = client.app.state.game  # type: ignore[attr-defined]
    other = tuple(reversed(shown)) if len(shown) > 1 else (*shown, 1)
    round_ = game.clued(game.round(_unclued(body["id"])), other)  # type: ignore[arg-type]  # as a worker shows it
    clue = _guess(client, round_.id, body["options"][0])["clue"]
    assert [p["id"] for p in clue["pictograms"]] == list(other) and clue["pictograms"][0]["role"] == "main idea"
    assert _guess(client, _unclued(body["id"]), body["options"][0])["answer"] in body["options"]  # an id without a clue


@pytest.mark.parametrize("clue", ["999999", "1-2-3-4-5-6-7", "1--2", ""])
def test_a_round_id_whose_clue_names_no_clue_is_a_404(client: TestClient, clue: str) -> None:
    body = _round(client)
    game: GamePuzzles = client.app.state.game  # type: ignore[attr-defined]
    base = _unclued(body["id"])
    round_id = f"{base}~{clue}~{game._tag(base, clue)}"  # signed, yet no clue of this vocabulary
    response = client.post(f"/clues/{round_id}/guess", json={"guess": body["options"][0]})
    assert response.status_code == 404, response.text
    assert "no round" in response.json()["detail"][0]["msg"]


def test_a_clue_the_service_did_not_show_is_a_404(client: TestClient) -> None:
    """The clue part is signed: no one without the key can have the service explain (and vouch
    for) a clue it never gave, such as one that repeats a pictogram or names the word."""
    body = _round(client)
    base, shown, tag = body["id"].rsplit("~", 2)
    first = shown.split("-")[0]
    for forged in (f"{base}~{first}-{first}~{tag}", f"{base}~{shown}~{'0' * 32}", f"{base}~{shown}",
                   f"{base}~{shown}~{tag.upper()}"):
        response = client.post(f"/clues/{forged}/guess", json={"guess": body["options"][0]})
        assert response.status_code == 404, (forged, response.text)
        assert response.json()["detail"][0]["loc"] == ["path", "round_id"]


@pytest.mark.parametrize("round_id", ["val_000000", "no_such_puzzle." + "0" * 32, "val_000000.xyz",
                                      "val_000000." + "0" * 31, "val_000000." + "G" * 32])
def test_a_round_id_that_names_no_round_is_a_404(client: TestClient, round_id: str) -> None:
    response = client.post(f"/clues/{round_id}/guess", json={"guess": "x"})
    assert response.status_code == 404, response.text
    [detail] = response.json()["detail"]
    assert detail["loc"] == ["path", "round_id"] and "no round" in detail["msg"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "loc", "message"),
    [
        ("post", "/clues/{id}/guess", {"guess": "not an option"}, 422, ["body", "guess"], "not one of this round's options"),
        ("post", "/clues/{id}/guess", {"guess": ""}, 422, ["body", "guess"], "at least 1 character"),
        ("post", "/clues/{id}/guess", {"guess": "x", "extra": 1}, 422, ["body", "extra"], "Extra inputs"),
        ("get", "/clues/random?subtask=9", None, 404, ["query", "subtask"], "no puzzles of subtask 9"),
        ("get", "/clues/random?subtask=two", None, 422, ["query", "subtask"], "valid integer"),
    ],
)
def test_bad_requests_are_4xx_naming_the_field(client: TestClient, method: str, path: str, body: dict | None,
                                               status: int, loc: list, message: str) -> None:
    path = path.replace("{id}", _round(client)["id"]) if "{id}" in path else path
    response = client.request(method, path, json=body)
    assert response.status_code == status, response.text
    [detail] = response.json()["detail"]
    assert detail["loc"] == loc and message in detail["msg"]


def test_a_guess_needs_json(client: TestClient) -> None:
    round_id = _round(client)["id"]
    response = client.post(f"/clues/{round_id}/guess", content="guess=x",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415 and response.json()["detail"][0]["msg"]


def test_without_the_clue_giver_the_clue_mode_is_a_503(real_service, tmp_path) -> None:
    settings = Settings(suggest_train=tmp_path / "missing.csv")
    with TestClient(create_app(settings, service=real_service), raise_server_exceptions=False) as client:
        response = client.get("/clues/random")
        assert response.status_code == 503
        assert response.json()["detail"][0]["type"] == "suggest_unavailable"
        assert client.get("/puzzles/random").status_code == 200  # the Guess mode still plays


def test_a_short_game_key_is_refused() -> None:
    with pytest.raises(ValueError, match="game_key"):
        Settings(game_key="short")


def test_serve_shares_one_key_with_its_workers(monkeypatch) -> None:
    monkeypatch.setenv("PICTORANK_GAME_KEY", "")  # so that the teardown restores whatever was there
    monkeypatch.delenv("PICTORANK_GAME_KEY")
    _share_game_key()
    made = os.environ["PICTORANK_GAME_KEY"]
    assert len(made) == 64 and Settings().game_key.get_secret_value() == made  # type: ignore[union-attr]
    _share_game_key()
    assert os.environ["PICTORANK_GAME_KEY"] == made  # an operator's (or the first call's) key is kept
