"""The official `cohere` SDK against a real `pictorank serve` on 127.0.0.1: a client written for a
hosted rerank API works with pictorank by changing only its base URL.

`cohere.ClientV2.rerank` posts to /v2/rerank, `cohere.Client.rerank` (v1) to /v1/rerank; both are
served. The SDK reads 4xx answers into its own exceptions, with pictorank's body kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from helpers import DATA, serving

cohere = pytest.importorskip("cohere", reason="cohere is in the [test] extra")
DOCUMENTS = ["hammer", "sunflower", "river", "tulip"]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """A `pictorank serve --method cosine` process (a small open vocabulary keeps start-up short)."""
    env = {"PICTORANK_VOCABULARY_FILES": json.dumps([str(DATA / "val.csv")])}
    with serving(["--method", "cosine"], tmp_path_factory.mktemp("rerank") / "serve.log", env) as server:
        yield server.url


@pytest.mark.slow  # the server process loads the real model
def test_cohere_client_v2_reranks_with_pictorank(base_url):
    client = cohere.ClientV2(api_key="not-needed", base_url=base_url)
    response = client.rerank(model="rerank-v3.5", query="flower; sun", documents=DOCUMENTS, top_n=3)
    assert len(response.results) == 3 and DOCUMENTS[response.results[0].index] == "sunflower"
    scores = [r.relevance_score for r in response.results]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert response.id and response.meta.api_version.version == "2"
    ranked = httpx.post(f"{base_url}/rank", json={"hint_texts": ["flower", "sun"], "options": DOCUMENTS}).json()
    assert [DOCUMENTS[r.index] for r in response.results] == ranked["ranking"][:3]


@pytest.mark.slow
def test_cohere_v1_client_gets_documents_back(base_url):
    client = cohere.Client(api_key="not-needed", base_url=base_url)
    response = client.rerank(query="flower; sun", documents=["hammer", {"text": "sunflower"}], return_documents=True)
    assert [(r.index, r.document.text) for r in response.results] == [(1, "sunflower"), (0, "hammer")]


@pytest.mark.slow
def test_cohere_client_sees_pictoranks_422(base_url):
    client = cohere.ClientV2(api_key="not-needed", base_url=base_url)
    with pytest.raises(cohere.errors.UnprocessableEntityError) as refused:
        client.rerank(model="rerank-v3.5", query="flower; ", documents=DOCUMENTS)
    assert refused.value.status_code == 422
    assert refused.value.body["detail"][0]["loc"] == ["body", "query"]
