"""Rankers on the real model: permutations, the seed template, pooling, save/load, load errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pictorank.puzzles import HintVocabulary, Puzzle
from pictorank.encoder import Encoder
from pictorank.evaluation.evaluate import evaluate_rankings
from pictorank.ranker import (
    CONFIG_FILE,
    CosineRanker,
    ModelError,
    Query,
    SeedRanker,
    joined_text,
    load_ranker,
    make_ranker,
    pool,
    rank_puzzles,
    seed_text,
    to_queries,
)
from pictorank.artifacts import FORMAT_VERSION, library_versions


@pytest.fixture(scope="module")
def val_queries(val_puzzles: list[Puzzle], vocab: HintVocabulary) -> list[Query]:
    return to_queries(val_puzzles, vocab)


def test_to_queries_uses_descriptions(vocab: HintVocabulary) -> None:
    puzzle = Puzzle("x", 1, (2, 1), ("a", "b"), "a")
    (query,) = to_queries([puzzle], vocab)
    assert query == Query((vocab.descriptions[2], vocab.descriptions[1]), ("a", "b"), "a")


def test_seed_text_template() -> None:
    assert seed_text(["animal", "water mammal", "hair, fur"]) == (
        "The following hints at our target word:\n"
        "<HINT_PRIMARY>animal</HINT_PRIMARY>\n"
        "<HINT>water mammal</HINT>\n"
        "<HINT>hair, fur</HINT>"
    )
    assert seed_text(["flower"]) == "The following hints at our target word:\n<HINT_PRIMARY>flower</HINT_PRIMARY>"


def test_joined_text() -> None:
    assert joined_text(["flower", "sun"]) == "flower; sun"


def test_pool_weights() -> None:
    vectors = np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(pool(vectors[:2], [2.0, 1.0]), np.array([2, 1, 0]) / np.sqrt(5), rtol=1e-6)
    # positions past the end of the weights take the last weight
    np.testing.assert_allclose(pool(vectors, [3.0, 1.0]), np.array([3, 1, 1]) / np.sqrt(11), rtol=1e-6)
    np.testing.assert_allclose(pool(vectors, [1.0]), np.ones(3) / np.sqrt(3), rtol=1e-6)
    np.testing.assert_array_equal(pool(vectors[:1], [0.0]), np.zeros(3))


@pytest.mark.parametrize("make", [lambda e: SeedRanker(e), lambda e: CosineRanker(e), lambda e: CosineRanker(e, "weighted", (2.0, 1.0))])
def test_rank_returns_a_permutation(encoder: Encoder, val_queries: list[Query], make) -> None:
    queries = val_queries[:12]  # seed encodes one row at a time: a few rows are enough here
    ranker = make(encoder)
    for query, (ranked, scores) in zip(queries, ranker.rank_with_scores(queries)):
        assert sorted(ranked) == sorted(query.options)
        assert scores == sorted(scores, reverse=True)
    assert ranker.rank(queries) == [r for r, _ in ranker.rank_with_scores(queries)]


def test_cosine_ranks_the_obvious_answer_first(encoder: Encoder) -> None:
    query = Query(("flower", "sun"), ("piano", "sunflower", "car", "bread"))
    for ranker in (CosineRanker(encoder), CosineRanker(encoder, "weighted", (1.0,)), SeedRanker(encoder)):
        assert ranker.rank([query])[0][0] == "sunflower"


def test_rank_puzzles_matches_rank_in_chunks(encoder: Encoder, val_puzzles: list[Puzzle], vocab: HintVocabulary) -> None:
    ranker = CosineRanker(encoder)
    puzzles = val_puzzles[:25]
    assert rank_puzzles(ranker, puzzles, vocab, chunk=7) == ranker.rank(to_queries(puzzles, vocab))


def test_cosine_quality_on_val(encoder: Encoder, val_puzzles: list[Puzzle], vocab: HintVocabulary) -> None:
    """The documented figure for the default cosine ranker (val score 0.9652, Hits@1 0.670)."""
    overall = evaluate_rankings(val_puzzles, rank_puzzles(CosineRanker(encoder), val_puzzles, vocab))["overall"]
    assert overall["score"] == pytest.approx(0.9652, abs=0.005)
    assert overall["hits@1"] == pytest.approx(0.670, abs=0.01)


def test_invalid_parameters() -> None:
    encoder = Encoder(model=object(), model_id="unused")
    with pytest.raises(ValueError, match="pooling must be"):
        CosineRanker(encoder, pooling="max")
    with pytest.raises(ValueError, match="position_weights"):
        CosineRanker(encoder, "weighted", ())
    with pytest.raises(ValueError, match="position_weights"):
        CosineRanker(encoder, "weighted", (1.0, -1.0))
    with pytest.raises(ValueError, match="unknown method 'bm25'"):
        make_ranker("bm25", encoder)


def test_make_ranker() -> None:
    encoder = Encoder(model=object(), model_id="unused")
    assert isinstance(make_ranker("seed", encoder), SeedRanker)
    assert make_ranker("cosine", encoder).get_params() == {"pooling": "joined", "position_weights": [1.0]}


def test_save_load_round_trip(encoder: Encoder, val_queries: list[Query], tmp_path: Path) -> None:
    ranker = CosineRanker(encoder, "weighted", (0.5, 1.0, 2.0))
    ranker.save(tmp_path / "model")
    config = json.loads((tmp_path / "model" / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["method"] == "cosine"
    assert config["versions"] == library_versions()
    loaded = load_ranker(tmp_path / "model", encoder=encoder)
    assert isinstance(loaded, CosineRanker)
    assert loaded.get_params() == ranker.get_params()
    assert loaded.encoder is encoder
    assert loaded.rank(val_queries[:30]) == ranker.rank(val_queries[:30])


def test_seed_save_load(tmp_path: Path) -> None:
    encoder = Encoder(model=object(), model_id="unused")
    SeedRanker(encoder).save(tmp_path)
    assert isinstance(load_ranker(tmp_path, encoder=encoder), SeedRanker)


def write_config(directory: Path, config: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG_FILE).write_text(json.dumps(config), encoding="utf-8")
    return directory


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"method": "bm25", "params": {}}, "unknown method 'bm25'"),
        ({"method": "cosine", "params": {"pooling": "max"}}, "invalid parameters"),
        ({"method": "cosine", "params": {"temperature": 2}}, "invalid parameters"),
        ({"params": {}}, "corrupt model config"),
        ([1, 2], "corrupt model config"),
    ],
)
def test_load_ranker_bad_config(tmp_path: Path, config: object, message: str) -> None:
    if isinstance(config, dict):
        config["versions"] = library_versions()
    directory = write_config(tmp_path / "model", config)
    with pytest.raises(ModelError, match=message) as caught:
        load_ranker(directory, encoder=Encoder(model=object(), model_id="unused"))
    assert str(directory / CONFIG_FILE) in str(caught.value)


def test_load_ranker_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"nope: not a pictorank model directory \(no ranker.json\)"):
        load_ranker(tmp_path / "nope")


def test_load_ranker_corrupt_json(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('{"method": "cosine", ', encoding="utf-8")
    with pytest.raises(ModelError, match="corrupt model config"):
        load_ranker(tmp_path)
    (tmp_path / CONFIG_FILE).write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ModelError, match="corrupt model config"):
        load_ranker(tmp_path)


def test_load_ranker_version_mismatch(tmp_path: Path) -> None:
    versions = library_versions() | {"numpy": "1.0.0"}
    directory = write_config(tmp_path, {"method": "cosine", "params": {}, "versions": versions})
    with pytest.raises(ModelError, match="made with numpy 1.0.0, installed is .*; install numpy==1.0.0 or retrain"):
        load_ranker(directory)
    versions = library_versions() | {"format": 99}
    write_config(tmp_path, {"method": "cosine", "params": {}, "versions": versions})
    with pytest.raises(ModelError, match=f"model format 99, this pictorank reads format {FORMAT_VERSION}"):
        load_ranker(directory)
