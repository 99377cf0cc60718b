"""Issue #12 over HTTP: nothing a client sends makes the service answer 5xx, grow without bound,
or work (or wait) without limit.

- metric labels come from closed sets, whatever method or path a client invents;
- a request's work is capped (distinct texts per request) and its body must arrive in time;
- NaN/Infinity and lone surrogates are a 422 with a readable JSON body, never a 500;
- strict types, HEAD wherever GET, no redirect built from the Host header.

Most tests use the session's service through an app of their own (own metrics, own settings) and
a client that returns 500s instead of raising them, so a server error is a failed assertion.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import re
import socket
import threading
import time
from typing import Iterator

import pytest
import uvicorn
from fastapi.exceptions import RequestValidationError
from fastapi.testclient import TestClient
from helpers import free_port, in_thread

from pictorank.api.app import create_app
from pictorank.api.errors import validation_error_handler
from pictorank.api.middleware import BodyLimits
from pictorank.api.protocol import HeaderTimeoutProtocol
from pictorank.api.schemas import MAX_BATCH
from pictorank.api.serve import uvicorn_options
from pictorank.api.settings import Settings

JSON = {"content-type": "application/json"}
OK = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]}


@pytest.fixture(scope="module")
def client(api_service) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(), service=api_service), raise_server_exceptions=False) as client:
        yield client


def _detail(response) -> list[dict]:
    """The error list of a refusal, checking on the way that it is a readable UTF-8 JSON body."""
    assert response.headers["content-type"] == "application/json"
    body = json.loads(response.content.decode("utf-8"))
    assert all({"loc", "msg", "type"} <= set(item) for item in body["detail"]), body
    return body["detail"]


# -- 5: metric labels come from closed sets ----------------------------------------------------------
def test_invented_methods_and_paths_add_no_metric_series(api_service) -> None:
    client = TestClient(create_app(Settings(), service=api_service), raise_server_exceptions=False)
    client.get("/health")
    before = client.get("/metrics").text.count("\n")
    for i in range(200):
        client.request(f"INVENTED{i}" + "X" * 4000, "/health")
        client.request(f"BREW{i}", f"/nowhere/{i}")
        client.get(f"/also/nowhere/{i}")
    text = client.get("/metrics").text
    assert "INVENTED" not in text and "BREW" not in text and "nowhere" not in text
    assert re.search(r'pictorank_http_requests_total\{method="other",route="/health",status="405"\} 200', text)
    assert text.count("\n") - before < 150  # a few new series (~20 lines each), not hundreds


# -- 7: a request's work is capped, its body must arrive in time -------------------------------------
def test_too_many_distinct_texts_is_413_naming_the_limit(api_service) -> None:
    client = TestClient(create_app(Settings(max_texts_per_request=60, open_vocab_candidates=50), service=api_service))
    puzzle = {"hint_texts": ["flower", "sun"], "options": [f"never seen option {i}" for i in range(30)]}
    other = {"hint_texts": ["flower", "sun"], "options": [f"another new option {i}" for i in range(30)]}
    refused = client.post("/rank/batch", json={"puzzles": [puzzle, other]})  # 62 distinct texts
    assert refused.status_code == 413, refused.text
    [error] = _detail(refused)
    assert error["loc"] == ["body"] and error["type"] == "too_many_texts"
    assert "62" in error["msg"] and "60" in error["msg"]
    # Repeated texts count once: the same puzzle many times is 32 distinct texts.
    assert client.post("/rank/batch", json={"puzzles": [puzzle] * MAX_BATCH}).status_code == 200
    one = client.post("/rank", json={**puzzle, "options": puzzle["options"] + other["options"]})
    assert one.status_code == 413 and "60" in _detail(one)[0]["msg"]


def test_open_vocabulary_clues_count_as_their_candidates(api_service) -> None:
    """Each open-vocabulary clue ranks `open_vocab_candidates` words: uncapped, 64 of them with 20
    new hint texts each took a gigabyte in one request."""
    client = TestClient(create_app(Settings(), service=api_service))
    k = api_service.open_vocab_candidates
    clues = [{"hint_texts": [f"new hint {i} {j}" for j in range(20)], "top_k": 3} for i in range(MAX_BATCH)]
    refused = client.post("/rank/batch", json={"puzzles": clues})
    assert refused.status_code == 413, refused.text
    [error] = _detail(refused)
    assert error["type"] == "too_many_texts" and f"{MAX_BATCH * (20 + k)}" in error["msg"]
    assert f"counts as its {k} candidate words" in error["msg"]
    fits = 2_000 // (20 + k)  # the default limit
    assert client.post("/rank/batch", json={"puzzles": clues[:fits]}).status_code == 200
    assert client.post("/rank/batch", json={"puzzles": clues[: fits + 1]}).status_code == 413
    # The same clue repeated is one clue's work, as a repeated text is one text.
    assert client.post("/rank/batch", json={"puzzles": [clues[0]] * MAX_BATCH}).status_code == 200


def test_the_default_limit_lets_a_batch_of_task_puzzles_through(client: TestClient, val_puzzles) -> None:
    puzzles = [p for p in val_puzzles if p.subtask_id == 3][:MAX_BATCH]
    body = {"puzzles": [{"hints": list(p.hints), "options": list(p.options)} for p in puzzles]}
    assert client.post("/rank/batch", json=body).status_code == 200


@pytest.fixture(scope="module")
def live_server(api_service) -> Iterator[str]:
    """The app behind a real uvicorn (in a thread, over the session's service) with a 1 s body
    timeout and a 1 s keep-alive timeout, both given as the service's settings."""
    settings = Settings(body_timeout=1.0, keep_alive_timeout=1, port=free_port())
    with in_thread(create_app(settings, service=api_service), uvicorn_options(settings)) as address:
        yield address


def _connect(address: str) -> socket.socket:
    host, port = address.split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_that_stops_arriving_is_408_and_closed(live_server: str) -> None:
    with _connect(live_server) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /rank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n" + b'{"hint_te')  # 10 of the declared 100 bytes
        answer = _read_all(sock)
        waited = time.monotonic() - started
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:500]
    assert b"connection: close" in head.lower()
    [error] = json.loads(body)["detail"]
    assert error["type"] == "body_timeout" and "1" in error["msg"]
    assert waited < 8


def test_a_content_length_of_thousands_of_digits_is_413_not_a_500() -> None:
    # uvicorn's parser refuses such a header itself (a plain 400), but another ASGI server may pass
    # it on, and int() raises past 4,300 digits: the limit check must answer without calling it.
    called, sent = [], []

    async def app(scope, receive, send) -> None:
        called.append(scope)

    async def receive() -> dict:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/rank", "headers": [(b"content-length", b"9" * 5000)]}
    asyncio.run(BodyLimits(app, max_bytes=1000, timeout=1.0)(scope, receive, send))
    assert not called and sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["detail"][0]["type"] == "body_too_large"


def test_an_idle_keep_alive_connection_is_closed(live_server: str) -> None:
    with _connect(live_server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        started = time.monotonic()
        answer = _read_all(sock)  # returns when the server closes the kept-alive connection
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200") and waited < 3  # 1 s set; uvicorn's default is 5


def test_a_slow_but_steady_body_within_the_timeout_is_answered(live_server: str) -> None:
    body = json.dumps(OK).encode()
    with _connect(live_server) as sock:
        sock.sendall(b"POST /rank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode())
        for part in (body[:10], body[10:]):
            sock.sendall(part)
            time.sleep(0.3)
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:500]


def test_server_options_come_from_the_settings() -> None:
    settings = Settings(host="127.0.0.1", port=8123, keep_alive_timeout=7, header_timeout=3.5, max_connections=40)
    options = uvicorn_options(settings)
    protocol = options.pop("http")
    assert options == {"host": "127.0.0.1", "port": 8123, "timeout_keep_alive": 7, "log_level": "info"}
    # The cap goes to the protocol, which answers it in JSON; uvicorn's own would be plain text.
    keywords = {"header_timeout": 3.5, "max_connections": 40}
    assert protocol.func is HeaderTimeoutProtocol and protocol.keywords == keywords
    assert pickle.loads(pickle.dumps(protocol)).keywords == keywords  # sent to each worker


# -- 8: NaN, Infinity and lone surrogates are a 422 with a readable body -----------------------------
NON_FINITE = [
    b'{"hint_texts": ["sun"], "options": ["moon"], "top_k": NaN}',
    b'{"hint_texts": ["sun"], "options": ["moon"], "top_k": Infinity}',
    b'{"hints": [-Infinity], "options": ["moon"]}',
    b'{"hint_texts": ["sun"], "options": ["moon"], "extra": [1, {"deep": NaN}]}',
    b"NaN",
]


@pytest.mark.parametrize("content", NON_FINITE)
def test_nan_and_infinity_are_422_saying_so(client: TestClient, content: bytes) -> None:
    for path in ("/rank", "/rank/batch", "/puzzles/val_000000/guess"):
        response = client.post(path, content=content, headers=JSON)
        assert response.status_code == 422, (path, response.text)
        [error] = _detail(response)
        assert re.search(r"NaN|Infinity", error["msg"]) and "JSON" in error["msg"] and error["type"] == "json_invalid"


@pytest.mark.parametrize("content, message", [
    (b'{"hint_texts": ["sun"], "options": ["moon"], "top_k": ' + b"9" * 5000 + b"}", "4300 digits"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
])
def test_json_python_cannot_read_is_422_saying_why(client: TestClient, content: bytes, message: str) -> None:
    """Valid JSON all the same: "not valid JSON (UTF-8 expected)" sent the caller looking for the
    wrong mistake."""
    response = client.post("/rank", content=content, headers=JSON)
    assert response.status_code == 422, response.text
    [error] = _detail(response)
    assert message in error["msg"] and error["type"] == "json_invalid" and error["loc"] == ["body"]


LONE_SURROGATES = [
    (b'{"hint_texts": ["\\ud800"], "options": ["moon"]}', ["body", "hint_texts", 0]),
    (b'{"hint_texts": ["sun"], "options": ["moon", "x\\udfffy"]}', ["body", "options", 1]),
    (b'{"hint_texts": ["sun"], "options": ["moon"], "\\ud800": 1}', ["body"]),
    (b'{"puzzles": [{"hint_texts": ["sun"], "options": ["moon"]}, {"hint_texts": ["\\udc00\\ud800"]}]}',
     ["body", "puzzles", 1, "hint_texts", 0]),
    (b'{"guess": "\\ud83c"}', ["body", "guess"]),
]


@pytest.mark.parametrize("content,loc", LONE_SURROGATES)
def test_lone_surrogates_are_422_with_an_encodable_body(client: TestClient, content: bytes, loc: list) -> None:
    path = "/puzzles/val_000000/guess" if b"guess" in content else "/rank/batch" if b"puzzles" in content else "/rank"
    response = client.post(path, content=content, headers=JSON)
    assert response.status_code == 422, response.text
    [error] = _detail(response)
    assert error["loc"] == loc and "surrogate" in error["msg"] and error["type"] == "string_unicode"


def test_surrogate_pairs_are_ordinary_characters(client: TestClient) -> None:
    body = b'{"hint_texts": ["\\ud83c\\udf3b", "sun"], "options": ["sunflower \\ud83c\\udf3b", "hammer"]}'
    response = client.post("/rank", content=body, headers=JSON)
    assert response.status_code == 200, response.text
    assert "sunflower \N{SUNFLOWER}" in response.json()["ranking"]


def test_validation_errors_do_not_echo_the_input(client: TestClient) -> None:
    long_option = "z" * 101
    response = client.post("/rank", json={"hint_texts": ["sun"], "options": [long_option]})
    assert response.status_code == 422
    assert long_option not in response.text
    assert [set(e) for e in _detail(response)] == [{"loc", "msg", "type"}]


def test_validation_error_bodies_always_encode() -> None:
    """Whatever a validation error carries, its body is UTF-8 JSON (surrogates escaped)."""
    error = RequestValidationError([{"loc": ("body", "\ud800"), "msg": "bad \udfff", "type": "x", "input": "\ud800"}])
    response = asyncio.run(validation_error_handler(None, error))  # type: ignore[arg-type]
    [item] = json.loads(response.body.decode("utf-8"))["detail"]
    assert item == {"loc": ["body", "\\ud800"], "msg": "bad \\udfff", "type": "x"}


# -- 11: strict types, HEAD wherever GET, no Host-built redirect ------------------------------------
@pytest.mark.parametrize("top_k", ["5", True, 5.0, "five", None])
def test_top_k_must_be_an_integer(client: TestClient, top_k) -> None:
    for path, body, loc in (("/rank", {**OK, "top_k": top_k}, ["body", "top_k"]),
                            ("/rank/batch", {"puzzles": [{**OK, "top_k": top_k}]}, ["body", "puzzles", 0, "top_k"])):
        response = client.post(path, json=body)
        assert response.status_code == 422, response.text
        assert [e["loc"] for e in _detail(response)] == [loc]


@pytest.mark.parametrize(
    "path,body,loc",
    [
        ("/rank", {**OK, "explain": 1}, ["body", "explain"]),
        ("/rank", {**OK, "explain": "true"}, ["body", "explain"]),
        ("/v1/rerank", {"query": "flower; sun", "documents": ["hammer"], "top_n": "1"}, ["body", "top_n"]),
        ("/v1/rerank", {"query": "flower; sun", "documents": ["hammer"], "priority": False}, ["body", "priority"]),
        ("/v2/rerank", {"query": "flower; sun", "documents": ["hammer"], "return_documents": 1},
         ["body", "return_documents"]),
    ],
)
def test_other_numbers_and_flags_are_strict(client: TestClient, path: str, body: dict, loc: list) -> None:
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert [e["loc"] for e in _detail(response)] == [loc]


@pytest.mark.parametrize("path", ["/", "/health", "/ready", "/hints", "/openapi.json", "/docs", "/static/app.js"])
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    get, head = client.get(path), client.head(path)
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    for name in ("content-type", "content-length"):
        assert head.headers.get(name) == get.headers.get(name), name


def test_head_on_routes_without_get(client: TestClient) -> None:
    assert client.head("/puzzles/random").status_code == 200
    assert client.head("/metrics").status_code == 200
    refused = client.head("/rank")
    assert refused.status_code == 405 and refused.content == b""
    assert client.head("/nowhere").status_code == 404


def test_no_redirect_is_built_from_the_host_header(client: TestClient) -> None:
    for path in ("/static", "/health/", "/hints/"):
        response = client.get(path, headers={"host": "attacker.example"}, follow_redirects=False)
        assert "attacker.example" not in response.headers.get("location", ""), path
        assert response.status_code < 500


def test_a_body_that_is_not_utf8_is_named_so(api_client) -> None:
    """Invalid UTF-8 was answered "JSON holds an integer of more than 4300 digits"."""
    response = api_client.post("/rank", content=b'{"hint_texts": ["\xff\xfe"], "options": ["a"]}',
                               headers={"content-type": "application/json"})
    assert response.status_code == 422
    message = response.json()["detail"][0]["msg"]
    assert "UTF-8" in message and "digits" not in message


def test_a_text_cap_below_open_plays_candidates_is_refused_at_start_up() -> None:
    """PICTORANK_MAX_TEXTS_PER_REQUEST below the candidate count turned every clue without
    options into a 413, silently: such settings are refused, naming both."""
    from pictorank.errors import SettingsError
    from pictorank.settings import read_settings

    with pytest.raises(SettingsError, match="open_vocab_candidates"):
        read_settings(Settings, max_texts_per_request=50)
    assert read_settings(Settings, max_texts_per_request=50, open_vocab_candidates=40).max_texts_per_request == 50


def test_the_probes_batch_is_answered_fast_and_a_small_rank_answers_beside_it(api_client) -> None:
    """64 copies of one puzzle of 980 options (1,002 distinct texts, under the text cap) ranked
    62,720 rows and held the only worker for 12 s while a small /rank waited 10 s. A repeated
    clue is ranked once, and a batch of 64 different such puzzles ranks too many rows: 413 at once."""
    import threading
    import time

    hints = [f"hint {i}" for i in range(20)]
    puzzle = {"hint_texts": hints, "options": [f"word{i}" for i in range(980)]}
    small = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]}
    answers: dict[str, tuple[int, float]] = {}

    def send(name: str, path: str, body: dict) -> None:
        started = time.perf_counter()
        answers[name] = (api_client.post(path, json=body).status_code, time.perf_counter() - started)

    big = threading.Thread(target=send, args=("batch", "/rank/batch", {"puzzles": [puzzle] * 64}))
    big.start()
    time.sleep(0.05)
    send("small", "/rank", small)
    big.join(30)
    assert answers["batch"][0] == 200 and answers["batch"][1] < 2.0, answers
    assert answers["small"][0] == 200 and answers["small"][1] < 1.0, answers
    different = [{"hint_texts": hints, "options": [f"w{j}-{i}" for i in range(30)]} for j in range(64)] * 1
    assert api_client.post("/rank/batch", json={"puzzles": different}).status_code == 200  # 1,920 rows
    many = [{"hint_texts": [f"h{j}"], "options": [f"w{i}" for i in range(980)]} for j in range(5)]
    refused = api_client.post("/rank/batch", json={"puzzles": many})  # 4,900 rows, 985 texts
    assert refused.status_code == 413 and refused.json()["detail"][0]["type"] == "too_many_rows"
    assert "4900" in refused.json()["detail"][0]["msg"]
