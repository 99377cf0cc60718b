"""POST /v1/rerank and /v2/rerank in process: the shape rerank clients send and read, pictorank's
ranking behind it, and the service's 4xx discipline. The official SDK is in test_rerank_cohere.py."""

from __future__ import annotations

import pytest

# `api_client` runs on a stand-in encoder that knows words, not meanings: the answer shares the query's.
REQUEST = {"model": "rerank-v3.5", "query": "flower; sun", "documents": ["hammer", "sun flower", "river", "tulip"]}


@pytest.mark.parametrize("version", ["1", "2"])
def test_results_are_pictoranks_ranking_by_document_index(api_client, version):
    rank = api_client.post("/rank", json={"hint_texts": ["flower", "sun"], "options": REQUEST["documents"]}).json()
    body = api_client.post(f"/v{version}/rerank", json=REQUEST).json()
    assert [REQUEST["documents"][r["index"]] for r in body["results"]] == rank["ranking"]
    scores = [r["relevance_score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert all("document" not in r for r in body["results"])
    assert body["meta"]["api_version"]["version"] == version and body["meta"]["model"].startswith("cosine")
    assert isinstance(body["id"], str) and body["id"]


def test_top_n_return_documents_and_document_objects(api_client):
    documents = ["hammer", {"text": "sun flower", "title": "ignored"}, "river"]
    body = api_client.post("/v1/rerank", json={**REQUEST, "documents": documents, "top_n": 2,
                                               "return_documents": True}).json()
    assert len(body["results"]) == 2
    assert body["results"][0] == {"index": 1, "relevance_score": pytest.approx(body["results"][0]["relevance_score"]),
                                  "document": {"text": "sun flower"}}
    assert api_client.post("/v1/rerank", json={**REQUEST, "top_n": 99}).json()["results"].__len__() == 4


def test_a_repeated_document_is_reported_at_each_index(api_client):
    body = api_client.post("/v2/rerank", json={**REQUEST, "documents": ["sunflower", "hammer", "sunflower"]}).json()
    results = body["results"]
    assert [r["index"] for r in results] == [0, 2, 1] and results[0]["relevance_score"] == results[1]["relevance_score"]


def test_the_query_is_the_hints_joined_by_semicolons(api_client):
    one = api_client.post("/v2/rerank", json={**REQUEST, "query": "sun; flower"}).json()
    two = api_client.post("/rank", json={"hint_texts": ["sun", "flower"], "options": REQUEST["documents"]}).json()
    assert [REQUEST["documents"][r["index"]] for r in one["results"]] == two["ranking"]


@pytest.mark.parametrize("change,where", [
    ({"query": "flower; "}, ["body", "query"]),
    ({"query": "; ".join(["a"] * 21)}, ["body", "query"]),
    ({"documents": []}, ["body", "documents"]),
    ({"documents": ["  "]}, ["body", "documents", 0]),
    ({"top_n": 0}, ["body", "top_n"]),
    ({"rank_fields": ["title"]}, ["body", "rank_fields", 0]),
    ({"relevant_spans": True}, ["body", "relevant_spans"]),
])
def test_invalid_requests_are_422_in_the_services_error_shape(api_client, change, where):
    response = api_client.post("/v2/rerank", json={**REQUEST, **change})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][: len(where)] == where


def test_a_body_that_is_not_json_is_415(api_client):
    response = api_client.post("/v1/rerank", content="query=flower", headers={"content-type": "text/plain"})
    assert response.status_code == 415 and response.json()["detail"][0]["type"] == "unsupported_media_type"


def test_the_per_request_text_limit_applies(api_service):
    from fastapi.testclient import TestClient

    from pictorank.api.app import create_app
    from pictorank.api.settings import Settings

    client = TestClient(create_app(Settings(max_texts_per_request=3, open_vocab_candidates=2), service=api_service))
    response = client.post("/v2/rerank", json=REQUEST)  # 2 hints + 4 documents
    assert response.status_code == 413 and response.json()["detail"][0]["type"] == "too_many_texts"
