"""Refusals that name the right mistake: blank means blank under Unicode (zero-width characters
too, a no-break space as before), an encoded body is a 415, an over-long integer is a 422 that
quotes no interpreter advice, and /suggest's blank word is called a word."""

from __future__ import annotations

import gzip
import json

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from pictorank.api.app import create_app
from pictorank.api.schemas import SuggestRequest
from pictorank.api.settings import Settings
from pictorank.puzzles import is_blank

OK = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "hammer"]}
BLANKS = ["\u200b", "\u200b\u2060\ufeff", "\xa0", " \u3164\u200d ", "\u2028", "\U000e0020"]


@pytest.fixture(scope="module")
def client(api_service) -> TestClient:
    with TestClient(create_app(Settings(), service=api_service), raise_server_exceptions=False) as client:
        yield client


def _error(response) -> dict:
    body = response.json()
    assert all({"loc", "msg", "type"} <= set(item) for item in body["detail"]), body
    return body["detail"][0]


@pytest.mark.parametrize("text", BLANKS)
def test_invisible_text_is_blank(client: TestClient, text: str) -> None:
    assert is_blank(text)
    option = client.post("/rank", json={**OK, "options": ["sunflower", text]})
    assert option.status_code == 422 and _error(option)["loc"] == ["body", "options", 1]
    assert "option is blank" in _error(option)["msg"]
    hint = client.post("/rank", json={**OK, "hint_texts": ["flower", text]})
    assert hint.status_code == 422 and "hint text is blank" in _error(hint)["msg"]
    document = client.post("/v1/rerank", json={"query": "flower; sun", "documents": ["sunflower", text]})
    assert document.status_code == 422 and "blank" in _error(document)["msg"]


def test_a_word_with_an_invisible_character_inside_is_a_word(client: TestClient) -> None:
    assert not is_blank("sun\u200bflower")
    assert client.post("/rank", json={**OK, "options": ["sun\u200bflower", "hammer"]}).status_code == 200


@pytest.mark.parametrize("word", ["", " ", "\u200b", "\xa0"])
def test_a_blank_suggest_word_is_called_the_word(word: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SuggestRequest.model_validate({"word": word})
    [error] = caught.value.errors()
    assert error["loc"] == ("word",) and "word is blank" in error["msg"] and "option" not in error["msg"]


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "GZIP"])
def test_an_encoded_body_is_415_naming_the_encoding(client: TestClient, encoding: str) -> None:
    body = gzip.compress(json.dumps(OK).encode())
    for path in ("/rank", "/rank/batch"):
        response = client.post(path, content=body, headers={"content-type": "application/json",
                                                              "content-encoding": encoding})
        assert response.status_code == 415, response.text
        error = _error(response)
        assert error["loc"] == ["header", "content-encoding"] and encoding in error["msg"]
        assert error["type"] == "unsupported_media_type" and "UTF-8" not in error["msg"]


def test_an_identity_encoding_is_the_body_as_it_is(client: TestClient) -> None:
    response = client.post("/rank", content=json.dumps(OK), headers={"content-type": "application/json",
                                                                      "content-encoding": "identity"})
    assert response.status_code == 200


def test_an_over_long_integer_is_422_without_interpreter_advice(client: TestClient) -> None:
    content = b'{"hint_texts": ["sun"], "options": ["moon"], "top_k": ' + b"9" * 5000 + b"}"
    response = client.post("/rank", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 422
    msg = _error(response)["msg"]
    assert "4300 digits" in msg and "sys." not in msg and "set_int_max_str_digits" not in msg
