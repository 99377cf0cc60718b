"""The HTTP service through FastAPI's TestClient: every endpoint, and every kind of bad input
answered by a 4xx whose JSON body names the field and the reason (never a 5xx)."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient
from helpers import DATA, WordHashModel, puzzle_row, write_rows
from pydantic import ValidationError

from pictorank.api.app import create_app
from pictorank.api.schemas import MAX_BATCH, MAX_HINTS, MAX_OPTIONS, MAX_TEXT_LENGTH
from pictorank.api.service import Clue, build_service
from pictorank.api.settings import Settings, bundled_data_dir
from pictorank.encoders import Encoder, base_model_version
from pictorank.puzzles import HintVocabulary, Puzzle
from pictorank.ranker import DEFAULT_METHOD, METHODS, CosineRanker, rank_puzzles


def _puzzle_body(puzzle: Puzzle, top_k: int = 10) -> dict:
    return {"hints": list(puzzle.hints), "options": list(puzzle.options), "top_k": top_k}


# -- happy paths --------------------------------------------------------------------------------
def test_rank_matches_the_served_ranker(api_client: TestClient, api_service, val_puzzles, vocab) -> None:
    puzzle = next(p for p in val_puzzles if p.subtask_id == 3)
    response = api_client.post("/rank", json=_puzzle_body(puzzle))
    assert response.status_code == 200, response.text
    body = response.json()
    [expected] = rank_puzzles(api_service.ranker, [puzzle], vocab)
    assert body["ranking"] == expected[:10]
    assert body["answer"] == "|".join(body["ranking"])
    assert body["scores"] == sorted(body["scores"], reverse=True) and len(body["scores"]) == 10
    assert body["mode"] == "options" and body["model"].startswith("cosine")


def test_rank_top_k_and_short_option_lists(api_client: TestClient) -> None:
    body = {"hint_texts": ["flower", "sun"], "options": ["sun flower", "hammer", "river"], "top_k": 2}
    ranked = api_client.post("/rank", json=body).json()
    assert ranked["ranking"][0] == "sun flower" and len(ranked["ranking"]) == 2
    body["top_k"] = 10  # more than there are options: all of them
    assert sorted(api_client.post("/rank", json=body).json()["ranking"]) == ["hammer", "river", "sun flower"]


def test_free_text_hints_equal_their_ids(api_client: TestClient, val_puzzles, vocab: HintVocabulary) -> None:
    puzzle = val_puzzles[0]
    by_id = api_client.post("/rank", json=_puzzle_body(puzzle)).json()
    texts = {"hint_texts": vocab.describe(puzzle.hints), "options": list(puzzle.options)}
    assert api_client.post("/rank", json=texts).json()["ranking"] == by_id["ranking"]


def test_open_vocabulary_searches_the_answer_words(api_client: TestClient, api_service, val_puzzles) -> None:
    puzzle = val_puzzles[0]
    response = api_client.post("/rank", json={"hints": list(puzzle.hints), "top_k": 10})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "open_vocabulary" and len(body["ranking"]) == 10
    assert set(body["ranking"]) <= set(api_service.index.words)
    # The same candidates given as options are ranked identically.
    candidates = api_service.candidates([api_service.describe(puzzle.hints)])[0]
    again = api_client.post("/rank", json={"hints": list(puzzle.hints), "options": candidates}).json()
    assert again["ranking"] == body["ranking"]


def test_batch_answers_in_order_like_single_requests(api_client: TestClient, val_puzzles) -> None:
    puzzles = [_puzzle_body(p, top_k=3) for p in val_puzzles[:5]] + [{"hint_texts": ["sun"], "top_k": 4}]
    response = api_client.post("/rank/batch", json={"puzzles": puzzles})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["ranking"] for r in results] == [api_client.post("/rank", json=p).json()["ranking"] for p in puzzles]
    assert results[-1]["mode"] == "open_vocabulary"


def test_hints_lists_the_vocabulary(api_client: TestClient, vocab: HintVocabulary) -> None:
    hints = api_client.get("/hints").json()["hints"]
    assert {h["id"]: h["description"] for h in hints} == vocab.descriptions


def test_health_ready_metrics(api_client: TestClient) -> None:
    assert api_client.get("/health").json()["status"] == "ok"
    ready = api_client.get("/ready")
    assert ready.status_code == 200 and ready.json()["model"].startswith("cosine")
    api_client.post("/rank", json={"hint_texts": ["sun"], "options": ["moon", "star"]})
    text = api_client.get("/metrics").text
    assert re.search(r'pictorank_http_requests_total\{method="POST",route="/rank",status="200"\} [1-9]', text)
    assert 'pictorank_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/rank"}' in text


def test_docs_are_served_without_any_external_host(api_client: TestClient) -> None:
    for page in ("/docs", "/redoc"):
        html = api_client.get(page).text
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html), f"{page} references an external host"
        for asset in re.findall(r'(?:src|href)="(/[^"]+)"', html):
            assert api_client.get(asset).status_code == 200, asset
    schema = api_client.get("/openapi.json").json()
    assert {"/rank", "/rank/batch", "/hints", "/health", "/ready", "/metrics"} <= set(schema["paths"])
    assert schema["components"]["schemas"]["RankRequest"]["examples"]


def test_not_loaded_yet_is_503_not_500() -> None:
    client = TestClient(create_app(Settings()))  # no `with`: the lifespan never loads a model
    ready = client.get("/ready")
    assert ready.status_code == 503 and ready.headers["retry-after"].isdigit()
    response = client.post("/rank", json={"hint_texts": ["sun"], "options": ["moon"]})
    assert response.status_code == 503 and response.json()["detail"][0]["msg"]
    assert response.headers["retry-after"].isdigit()  # still loading: ask again in a few seconds


# -- bad input: 4xx, and the body says which field and why ---------------------------------------
OK = {"hints": [1], "options": ["moon", "star"]}
BAD_BODIES = [
    ({"hints": [1, 987654321], "options": ["a"]}, 422, ["body", "hints"], "987654321"),
    ({"hints": [], "options": ["a"]}, 422, ["body"], "exactly one of"),
    ({"options": ["a"]}, 422, ["body"], "exactly one of"),
    ({"hints": [1], "hint_texts": ["sun"], "options": ["a"]}, 422, ["body"], "exactly one of"),
    ({"hints": [1] * (MAX_HINTS + 1), "options": ["a"]}, 422, ["body", "hints"], "at most 20"),
    ({"hints": ["1"], "options": ["a"]}, 422, ["body", "hints", 0], "integer"),
    ({"hints": [True], "options": ["a"]}, 422, ["body", "hints", 0], "integer"),
    ({"hints": [1], "options": []}, 422, ["body", "options"], "at least 1"),
    ({"hints": [1], "options": ["a", "b", "a"]}, 422, ["body", "options"], "repeated"),
    ({"hints": [1], "options": ["a", 7]}, 422, ["body", "options", 1], "string"),
    ({"hints": [1], "options": ["a", None]}, 422, ["body", "options", 1], "string"),
    ({"hints": [1], "options": ["  "]}, 422, ["body", "options", 0], "blank"),
    ({"hints": [1], "options": ["a|b"]}, 422, ["body", "options", 0], "'|'"),
    ({"hints": [1], "options": ["x" * (MAX_TEXT_LENGTH + 1)]}, 422, ["body", "options", 0], "at most"),
    ({"hints": [1], "options": [f"w{i}" for i in range(MAX_OPTIONS + 1)]}, 422, ["body", "options"], "at most"),
    ({"hint_texts": [""], "options": ["a"]}, 422, ["body", "hint_texts", 0], "blank"),
    ({"hint_texts": ["y" * (MAX_TEXT_LENGTH + 1)], "options": ["a"]}, 422, ["body", "hint_texts", 0], "at most"),
    ({**OK, "top_k": 0}, 422, ["body", "top_k"], "greater than or equal to 1"),
    ({**OK, "top_k": 11}, 422, ["body", "top_k"], "less than or equal to 10"),
    ({**OK, "colour": "red"}, 422, ["body", "colour"], "Extra inputs"),
    ([OK], 422, ["body"], "dictionary"),
]


@pytest.mark.parametrize("body,status,loc,message", BAD_BODIES)
def test_bad_rank_bodies_name_field_and_reason(api_client: TestClient, body, status: int, loc: list, message: str) -> None:
    response = api_client.post("/rank", json=body)
    assert response.status_code == status, response.text
    [error] = [e for e in response.json()["detail"] if e["loc"] == loc]
    assert message in error["msg"]


def test_bad_batches(api_client: TestClient) -> None:
    bad = api_client.post("/rank/batch", json={"puzzles": [OK, {"hints": [1, 987654321], "options": ["a"]}]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "puzzles", 1, "hints"]
    for puzzles in ([], [OK] * (MAX_BATCH + 1)):
        response = api_client.post("/rank/batch", json={"puzzles": puzzles})
        assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "puzzles"]
    nested = api_client.post("/rank/batch", json={"puzzles": [OK, {"hints": [1], "options": ["a", "a"]}]})
    assert nested.status_code == 422 and nested.json()["detail"][0]["loc"] == ["body", "puzzles", 1, "options"]


@pytest.mark.parametrize(
    "content,content_type,status,loc",
    [
        (b'{"hints": [1], "options": ["a"]}', "text/plain", 415, ["header", "content-type"]),
        (b'{"hints": [1], "options": ["a"]}', None, 415, ["header", "content-type"]),
        (b'{"hints": [1], "options": ', "application/json", 422, ["body", 26]),
        (b"", "application/json", 422, ["body"]),
        (b"\xff\xfe not utf-8", "application/json", 422, ["body", 0]),
        (b"null", "application/json", 422, ["body"]),
    ],
)
def test_bad_payloads(api_client: TestClient, content: bytes, content_type: str | None, status: int, loc: list) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = api_client.post("/rank", content=content, headers=headers)
    assert response.status_code == status, response.text
    assert response.json()["detail"][0]["loc"] == loc


def test_oversized_bodies_get_413(api_client: TestClient) -> None:
    limit = Settings().max_body_bytes
    big = json.dumps({"hints": [1], "options": ["x" * 90 + str(i) for i in range(limit // 90)]}).encode()
    declared = api_client.post("/rank", content=big, headers={"content-type": "application/json"})
    chunked = api_client.post("/rank", content=iter([big[:1000], big[1000:]]), headers={"content-type": "application/json"})
    for response in (declared, chunked):
        assert response.status_code == 413
        assert response.json()["detail"][0]["loc"] == ["body"]
    small = api_client.post("/rank", content=iter([b'{"hint_texts": ["sun"], ', b'"options": ["moon"]}']),
                            headers={"content-type": "application/json"})
    assert small.status_code == 200, small.text  # a chunked body under the limit is replayed intact


def test_unknown_route_and_method(api_client: TestClient) -> None:
    for response, status in ((api_client.get("/nowhere"), 404), (api_client.get("/rank"), 405)):
        assert response.status_code == status and response.json()["detail"][0]["msg"]


# -- settings --------------------------------------------------------------------------------------
def test_settings_default_to_the_bundled_data(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    settings = Settings()
    assert settings.hints == bundled_data_dir() / "hint_descriptions.csv" and settings.hints.is_file()
    assert all(path.is_file() for path in settings.vocabulary_files)
    monkeypatch.setenv("PICTORANK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PICTORANK_METHOD", "seed")
    monkeypatch.setenv("PICTORANK_CORS_ORIGINS", '["http://localhost:3000"]')
    moved = Settings()
    assert moved.hints == tmp_path / "hint_descriptions.csv" and moved.method == "seed"
    assert moved.cors_origins == ["http://localhost:3000"]
    assert moved.vocabulary_files == [tmp_path / f"{split}.csv" for split in ("train", "val", "test")]  # none there
    (tmp_path / "train.csv").write_text("x")
    (tmp_path / "val.csv").write_text("x")
    assert Settings().vocabulary_files == [tmp_path / "train.csv", tmp_path / "val.csv"]  # another data set, no test.csv


def test_cors_origins_are_allowed(api_service) -> None:
    client = TestClient(create_app(Settings(cors_origins=["http://game.local"]), service=api_service))
    response = client.options("/rank", headers={"Origin": "http://game.local", "Access-Control-Request-Method": "POST"})
    assert response.headers["access-control-allow-origin"] == "http://game.local"


def test_undecodable_body_is_422_not_400(api_client: TestClient) -> None:
    response = api_client.post("/rank/batch", content=b"\x80", headers={"content-type": "application/json"})
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body"]


@pytest.mark.parametrize(("value", "outcome"), [("", []), ("not json", "PICTORANK_CORS_ORIGINS: not valid JSON")])
def test_cors_origins_empty_is_unset_and_not_json_is_one_error(monkeypatch: pytest.MonkeyPatch, value: str,
                                                               outcome: object) -> None:
    """An empty variable counts as unset; a value that is not JSON is named, not `PICTORANK_*`."""
    from pictorank.errors import SettingsError
    from pictorank.settings import read_settings

    monkeypatch.setenv("PICTORANK_CORS_ORIGINS", value)
    if isinstance(outcome, list):
        assert read_settings(Settings).cors_origins == outcome
        return
    with pytest.raises(SettingsError) as caught:
        read_settings(Settings)
    assert str(caught.value).startswith(f"setting {outcome}") and "\n" not in str(caught.value)


def test_settings_take_the_methods_from_the_ranker_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().method == DEFAULT_METHOD
    assert [Settings(method=method).method for method in METHODS] == list(METHODS)
    assert Settings.model_json_schema()["properties"]["method"]["enum"] == list(METHODS)
    with pytest.raises(ValidationError, match="unknown method 'bogus'"):
        Settings(method="bogus")
    monkeypatch.setenv("PICTORANK_METHOD", "bogus")
    with pytest.raises(ValidationError, match="choose one of"):
        Settings()


def test_build_service_uses_the_encoder_as_given(tmp_path, base_model) -> None:
    """Without a cache folder, one encoder, unchanged, for the ranker and the index."""
    encoder = Encoder(model=base_model, model_id=base_model_version())
    words = write_rows(tmp_path / "words.csv", [puzzle_row(choices=("seal", "fish", "candle", "rock"))])
    service = build_service(Settings(method="seed", vocabulary_files=[words]), base=encoder)
    assert service.encoders.base is encoder and service.ranker.encoders() == [encoder]
    [ranked] = service.rank([Clue(("flower", "sun"), ("sunflower", "hammer"))])
    assert ranked.options[0] == "sunflower" and service.model_name.startswith("seed")


def test_an_empty_vocabulary_turns_open_vocabulary_mode_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """PICTORANK_VOCABULARY_FILES='[]' ended start-up in faiss' `assert k > 0` (the self-test)."""
    monkeypatch.setenv("PICTORANK_VOCABULARY_FILES", "[]")
    service = build_service(Settings(method="seed"), base=Encoder(model=WordHashModel(), model_id="word-hash-empty"))
    service.self_test()
    assert service.index is None and service.ready
    [ranked] = service.rank([Clue(("flower", "sun"), ("sunflower", "hammer"))])
    assert ranked.options[0] == "sunflower"
    response = TestClient(create_app(Settings(), service=service)).post("/rank", json={"hint_texts": ["sun"]})
    assert response.status_code == 422 and "open-vocabulary mode is off" in response.text


def test_a_method_is_served_on_the_base_models_onnx_export(tmp_path, base_model, monkeypatch) -> None:
    """With a cache folder, cosine runs on the base model's fp32 ONNX export, made once and kept
    there, with PyTorch's rankings; a second service reuses it without loading the PyTorch model.
    Start-up fills the disk cache and requests only read it (a request must not stall on
    rewriting a file)."""
    from pictorank.encoders.onnx import OnnxSentenceEncoder

    cache_dir = tmp_path / "cache"
    words = write_rows(tmp_path / "words.csv", [puzzle_row(choices=("seal", "fish", "candle", "rock"))])
    settings = Settings(method="cosine", vocabulary_files=[words])
    service = build_service(settings, base=Encoder(model=base_model, model_id=base_model_version(), cache_dir=cache_dir))
    assert isinstance(service.encoders.base.model, OnnxSentenceEncoder) and service.encoders.base.model.quantization == "fp32"
    assert service.ranker.encoders() == [service.encoders.base] and service.encoders.base.model_id.endswith("+onnx2-fp32")
    assert service.model_name.startswith("cosine") and "+onnx2-fp32" in service.model_name
    [cache_file] = cache_dir.glob("*.npz")
    written = cache_file.read_bytes()
    texts = ["sunflower", "a small boat", "candle"]
    np.testing.assert_allclose(service.encoders.base.encode(texts), base_model.encode(texts, normalize_embeddings=True),
                               atol=2e-5)
    [ranked] = service.rank([Clue(("flower", "sun"), ("sunflower", "hammer"))])
    assert ranked.options[0] == "sunflower" and cache_file.read_bytes() == written

    lazy = Encoder(model_id=base_model_version(), cache_dir=cache_dir)  # would load PyTorch if asked
    monkeypatch.setattr("pictorank.encoders.load_base_model", lambda: pytest.fail("loaded the PyTorch model"))
    again = build_service(settings, base=lazy)
    assert again.encoders.base.model.directory == service.encoders.base.model.directory


def test_the_torch_runtime_keeps_a_method_on_pytorch(tmp_path, base_model, monkeypatch) -> None:
    monkeypatch.setenv("PICTORANK_ENCODER_RUNTIME", "torch")  # read by the settings, handed down from there
    encoder = Encoder(model=base_model, model_id=base_model_version(), cache_dir=tmp_path / "cache")
    words = write_rows(tmp_path / "words.csv", [puzzle_row(choices=("seal", "fish"))])
    service = build_service(Settings(method="cosine", vocabulary_files=[words]), base=encoder)
    assert service.encoders.base is encoder and not (tmp_path / "cache" / "onnx").exists()


def test_a_model_directory_is_served_over_the_settings_vocabulary(tmp_path, api_service) -> None:
    model_dir = tmp_path / "model"
    CosineRanker(encoder=api_service.encoders.base).save(model_dir)
    # a saved unlearned model runs on the base encoder it is given: here the session service's
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[DATA / "val.csv"]), base=api_service.encoders.base)
    assert service.model_name.startswith("cosine:model") and service.index.words == api_service.index.words
    clue = Clue(("animal", "water"))
    assert service.rank([clue]) == api_service.rank([clue])


def test_concurrent_requests_get_their_own_answers(api_client: TestClient) -> None:
    bodies = [{"hint_texts": [f"colour {i}", "flower"], "options": ["red rose", "blue sea", f"number {i}"]}
              for i in range(24)]
    expected = [api_client.post("/rank", json=b).json()["ranking"] for b in bodies]
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda b: api_client.post("/rank", json=b), bodies))
    assert [r.status_code for r in responses] == [200] * len(bodies)
    assert [r.json()["ranking"] for r in responses] == expected


def test_word_list_extends_the_open_vocabulary(tmp_path) -> None:
    encoder = Encoder(model=WordHashModel(), model_id="word-hash-api")
    words = tmp_path / "words.txt"
    words.write_text("zebracorn unicorn\n\n  giraffe-whale  \nnot|allowed\n", encoding="utf-8")
    settings = Settings(vocabulary_files=[bundled_data_dir() / "val.csv"], word_list=words)
    service = build_service(settings, base=encoder)
    assert {"zebracorn unicorn", "giraffe-whale"} <= set(service.index.words) and "not|allowed" not in service.index.words
    [ranked] = service.rank([Clue(("zebracorn",))])  # the list's word, not the hint's own echoed back
    assert ranked.options[0] == "zebracorn unicorn"
