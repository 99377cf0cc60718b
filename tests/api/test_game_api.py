"""The game page's endpoints and static files through TestClient, over a stub ranker (no model)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from helpers import puzzle_row, write_rows
from pictorank.api.app import create_app
from pictorank.api.routes.game import STATIC_DIR
from pictorank.api.service import RankingService
from pictorank.api.settings import Settings
from pictorank.ranker import Ranker


class LengthRanker(Ranker):
    """Longest option first: cheap, deterministic, and unlike the data's option order."""

    method = "stub"

    def encoders(self):
        return []

    def score(self, queries):
        return [np.array([float(len(o)) for o in q.options]) for q in queries]


@pytest.fixture(scope="module")
def stub_service(vocab) -> RankingService:
    service = RankingService(LengthRanker(), vocab, index=None, encoders=None, model_name="stub-model")
    service.ready = True
    return service


@pytest.fixture(scope="module")
def client(stub_service):
    with TestClient(create_app(Settings(), service=stub_service)) as client:
        yield client


def test_random_puzzle_hides_the_answer_and_describes_hints(client, val_puzzles, vocab):
    by_id = {p.datapoint_id: p for p in val_puzzles}
    for _ in range(5):
        body = client.get("/puzzles/random").json()
        assert set(body) == {"id", "subtask", "hints", "options"}
        puzzle = by_id[body["id"]]
        assert body["options"] == list(puzzle.options)
        assert [h["id"] for h in body["hints"]] == list(puzzle.hints)
        assert [h["description"] for h in body["hints"]] == vocab.describe(puzzle.hints)
    for subtask, options in ((1, 4), (2, 10), (3, 30)):
        body = client.get("/puzzles/random", params={"subtask": subtask}).json()
        assert body["subtask"] == subtask and len(body["options"]) == options


def test_guess_right_and_wrong_with_pictoranks_top_10(client, val_puzzles):
    puzzle = next(p for p in val_puzzles if p.subtask_id == 3)
    right = client.post(f"/puzzles/{puzzle.datapoint_id}/guess", json={"guess": puzzle.answer}).json()
    expected = sorted(puzzle.options, key=len, reverse=True)
    assert right["correct"] is True and right["answer"] == puzzle.answer
    assert right["ranking"] == expected[:10] and len(right["scores"]) == 10
    assert right["answer_position"] == expected.index(puzzle.answer) + 1
    assert right["model"] == "stub-model"
    wrong_option = next(o for o in puzzle.options if o != puzzle.answer)
    wrong = client.post(f"/puzzles/{puzzle.datapoint_id}/guess", json={"guess": wrong_option}).json()
    assert wrong["correct"] is False and wrong["guess"] == wrong_option and wrong["answer"] == puzzle.answer


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("post", "/puzzles/no_such_id/guess", {"guess": "x"}, 404, "no puzzle 'no_such_id'"),
        ("post", "/puzzles/val_000000/guess", {"guess": "not an option"}, 422, "not one of this puzzle's options"),
        ("post", "/puzzles/val_000000/guess", {"guess": ""}, 422, "at least 1 character"),
        ("post", "/puzzles/val_000000/guess", {"guess": "flame", "x": 1}, 422, "Extra inputs"),
        ("get", "/puzzles/random?subtask=9", None, 404, "no puzzles of subtask 9"),
        ("get", "/puzzles/random?subtask=one", None, 422, "valid integer"),
    ],
)
def test_bad_requests_are_4xx_with_a_message(client, method, path, body, status, message):
    response = client.request(method, path, json=body)
    assert response.status_code == status, response.text
    assert message in " ".join(item["msg"] for item in response.json()["detail"])


def test_guess_needs_json(client):
    response = client.post("/puzzles/val_000000/guess", content="guess=flame",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415


def test_without_game_puzzles_only_the_game_is_unavailable(stub_service, data_dir: Path):
    settings = Settings(game_puzzles=data_dir / "test.csv")  # no answers: cannot be played
    with TestClient(create_app(settings, service=stub_service)) as client:
        response = client.get("/puzzles/random")
        assert response.status_code == 503
        assert "answer column" in response.json()["detail"][0]["msg"]
        assert client.get("/health").status_code == 200
        assert client.get("/").status_code == 200


def test_puzzle_ids_with_slashes_can_be_guessed_and_dot_ids_are_left_out(stub_service, tmp_path: Path, caplog):
    """A datapointID is any text: `a/b` (sent as a%2Fb, which routing decodes) must reach its
    puzzle; `.` and `..` cannot be a URL's path segment, so the game leaves them out, saying so."""
    ids = ["a/b", "<b>x</b>", "../../etc", "til~12", ".", ".."]
    rows = [puzzle_row(i, choices=("seal", "fish", "candle", "rock")) for i in ids]
    settings = Settings(game_puzzles=write_rows(tmp_path / "game.csv", rows))
    with TestClient(create_app(settings, service=stub_service)) as client:
        for puzzle_id in ids[:4]:
            quoted = puzzle_id.replace("/", "%2F")
            response = client.post(f"/puzzles/{quoted}/guess", json={"guess": "seal"})
            assert response.status_code == 200, (puzzle_id, response.text)
            assert response.json()["correct"] is True
        assert set(client.app.state.game.puzzles) == set(ids[:4])  # type: ignore[attr-defined]
    assert "cannot be part of a URL" in caplog.text


def test_page_and_static_files_work_offline(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    linked = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sorted(linked) == ["/favicon.ico", "/static/app.js", "/static/style.css"]  # where browsers look for the icon
    for path in linked:
        assert client.get(path).status_code == 200
    for file in STATIC_DIR.iterdir():  # no CDN, no fonts or scripts from elsewhere
        # (the SVG namespace is a name an SVG file must declare, never fetched)
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg\")", file.read_text()), file.name


def test_the_page_may_not_be_framed_nor_load_anything_from_elsewhere(client):
    page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy and "'unsafe-inline'" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    for path in ("/", "/static/app.js", "/puzzles/no_such_id/guess"):  # files and JSON errors alike
        response = client.get(path) if path != "/puzzles/no_such_id/guess" else client.post(path, json={"guess": "x"})
        assert response.headers["x-content-type-options"] == "nosniff", path
    inline = re.findall(r"<script(?![^>]*\bsrc=)|<style|\son[a-z]+=|style=", (STATIC_DIR / "index.html").read_text())
    assert inline == []  # the policy allows nothing inline: the page must need nothing inline


def test_without_a_vocabulary_index_options_are_required(client):
    """The stub service has no open-vocabulary index: a clue without options is a 422, not a 500."""
    response = client.post("/rank", json={"hint_texts": ["sun"]})
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "options"] and "open-vocabulary mode is off" in error["msg"]
