"""The unlearned rankers and the registry: permutations, quality on val, save/load, load errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

from pictorank.artifacts import FORMAT_VERSION, library_versions
from pictorank.encoders import Encoder
from pictorank.errors import ModelError, UsageError
from pictorank.evaluation.evaluate import evaluate_rankings
from pictorank.puzzles import HintVocabulary, Puzzle, to_queries
from pictorank.query import Query, joined_text
from pictorank.ranker import CONFIG_FILE, METHODS, CosineRanker, SeedRanker, load_ranker, make_ranker, rank_puzzles
from pictorank.ranker.base import chunks
from helpers import WordHashModel


@pytest.fixture(scope="module")
def val_queries(val_puzzles: list[Puzzle], vocab: HintVocabulary) -> list[Query]:
    return to_queries(val_puzzles, vocab)


@pytest.mark.parametrize("make", [SeedRanker, CosineRanker])
def test_rank_returns_a_permutation(encoder: Encoder, val_queries: list[Query], make) -> None:
    queries = val_queries[:12]
    ranker = make(encoder)
    for query, ranking in zip(queries, ranker.rank(queries)):
        assert sorted(ranking.options) == sorted(query.options)
        assert ranking.scores == sorted(ranking.scores, reverse=True)
        assert ranking.confidence is not None and ranking.explanations == []  # shipped calibration, nothing asked


@pytest.mark.parametrize("make", [SeedRanker, CosineRanker])
def test_a_batch_is_encoded_at_once_and_each_row_ranked_as_alone(val_queries: list[Query], make) -> None:
    """Each distinct string of a batch is encoded once, in calls far larger than one row's
    strings (a row's few strings alone make small, slow batches), and every row is ranked as
    when it comes alone."""

    class Counting(WordHashModel):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[int] = []

        def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
            self.calls.append(len(texts))
            return super().encode(texts, **kwargs)

    queries = val_queries[:40]
    model = Counting()
    ranker = make(Encoder(model=model, model_id="stub"))
    batch = ranker.rank(queries)
    distinct = {s for q in queries for s in (ranker.clue_text(q.hints), *q.options)}
    assert sum(model.calls) == len(distinct) and max(model.calls) > 2 * (len(queries[0].options) + 1)
    alone = [make(Encoder(model=WordHashModel(), model_id="stub")).rank([q])[0] for q in queries]
    assert [(r.options, r.scores) for r in batch] == [(r.options, r.scores) for r in alone]


def test_cosine_ranks_the_obvious_answer_first(encoder: Encoder) -> None:
    query = Query(("flower", "sun"), ("piano", "sunflower", "car", "bread"))
    for ranker in (CosineRanker(encoder), SeedRanker(encoder)):
        assert ranker.rank([query])[0].options[0] == "sunflower"


def test_rank_puzzles_matches_rank_in_chunks(encoder: Encoder, val_puzzles: list[Puzzle], vocab: HintVocabulary) -> None:
    ranker = CosineRanker(encoder)
    puzzles = val_puzzles[:25]
    assert rank_puzzles(ranker, puzzles, vocab, chunk=7) == [r.options for r in ranker.rank(to_queries(puzzles, vocab))]


def test_chunks_stop_at_rows_and_at_texts() -> None:
    queries = [Query(("a",), tuple(f"o{i}-{j}" for j in range(n))) for i, n in enumerate([3, 3, 3, 20, 1])]
    sizes = [[len(q.options) for q in part] for part in chunks(queries, rows=2)]
    assert sizes == [[3, 3], [3, 20], [1]]
    # each query counts its options, its hint and its two clue texts: 6, 6, 6, 23, 4
    assert [[len(q.options) for q in part] for part in chunks(queries, rows=10, texts=12)] == [[3, 3], [3], [20], [1]]
    assert chunks([], rows=3, texts=5) == []


def test_rank_puzzles_encodes_each_string_once_under_a_small_memo(val_puzzles: list[Puzzle], vocab: HintVocabulary) -> None:
    """A chunk holding more strings than the memo would forget some before its queries read them.
    The puzzles share no string, so any string encoded twice was forgotten within its chunk."""
    seen: set[str] = set()
    puzzles = []
    for puzzle, query in zip(val_puzzles, to_queries(val_puzzles, vocab)):
        strings = {*query.hints, *query.options, joined_text(query.hints)}
        if not strings & seen:
            puzzles.append(puzzle)
            seen |= strings
    model = CountingModel()
    ranker = CosineRanker(Encoder(model=model, model_id="counting", max_cached=100))
    rankings = rank_puzzles(ranker, puzzles, vocab)
    # one 256-row chunk would have overflowed the memo twice over
    assert len(model.encoded) == len(set(model.encoded)) > 2 * ranker.encoder.max_cached
    plain = CosineRanker(Encoder(model=CountingModel(), model_id="plain"))
    assert rankings == [r.options for r in plain.rank(to_queries(puzzles, vocab))]


class CountingModel(WordHashModel):
    """The stand-in model, keeping every string it was asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        self.encoded.extend(texts)
        return super().encode(texts, **kwargs)


def test_cosine_quality_on_val(encoder: Encoder, val_puzzles: list[Puzzle], vocab: HintVocabulary) -> None:
    """The documented figure for the default cosine ranker (val score 0.9652, Hits@1 0.670)."""
    overall = evaluate_rankings(val_puzzles, rank_puzzles(CosineRanker(encoder), val_puzzles, vocab))["overall"]
    assert overall["score"] == pytest.approx(0.9652, abs=0.005)
    assert overall["hits@1"] == pytest.approx(0.670, abs=0.01)


def test_unknown_method() -> None:
    with pytest.raises(UsageError, match="unknown method 'bm25'"):
        make_ranker("bm25", Encoder(model=object(), model_id="unused"))


def test_make_ranker() -> None:
    encoder = Encoder(model=object(), model_id="unused")
    assert isinstance(make_ranker("seed", encoder), SeedRanker)
    assert isinstance(make_ranker("cosine", encoder), CosineRanker)
    assert make_ranker("cosine", encoder).get_params() == {}
    assert set(METHODS) == {"seed", "cosine"}


def test_save_load_round_trip(encoder: Encoder, val_queries: list[Query], tmp_path: Path) -> None:
    ranker = CosineRanker(encoder)
    ranker.save(tmp_path / "model")
    config = json.loads((tmp_path / "model" / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["method"] == "cosine"
    assert config["versions"] == library_versions()
    loaded = load_ranker(tmp_path / "model", encoder=encoder)
    assert isinstance(loaded, CosineRanker)
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
        ({"method": "open_play", "params": {}}, "open play's ranker is part of the model in .*; pass that folder"),
        ({"method": "cosine", "params": {"pooling": "max"}}, "'cosine' takes no parameters, found 'pooling'"),
        ({"method": "cosine", "params": {"temperature": 2}}, "takes no parameters, found 'temperature'"),
        ({"params": {}}, "unknown method None"),
        ({"method": ["cosine"], "params": {}}, r"unknown method \(a list, not a name\)"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_load_ranker_bad_config(tmp_path: Path, config: object, message: str) -> None:
    if isinstance(config, dict):
        config["versions"] = library_versions()
    directory = write_config(tmp_path / "model", config)
    with pytest.raises(ModelError, match=message) as caught:
        load_ranker(directory, encoder=Encoder(model=object(), model_id="unused"))
    assert str(directory / CONFIG_FILE) in str(caught.value)


def test_a_parameter_list_is_named_briefly_not_dumped(tmp_path: Path) -> None:
    """A learned model's params under method cosine: the error names a few, not all 83 features."""
    names = [f"feature_{i}" for i in range(83)]
    config = {"method": "cosine", "params": {"feature_names": names, "boosters": 1, **{n: 0 for n in names}},
              "versions": library_versions()}
    directory = write_config(tmp_path / "model", config)
    with pytest.raises(ModelError) as caught:
        load_ranker(directory, encoder=Encoder(model=object(), model_id="unused"))
    message = str(caught.value)
    assert "'feature_names', 'boosters', 'feature_0' and 82 more" in message
    assert "feature_1'" not in message and len(message) < len(str(directory)) + 120


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


def test_a_deeply_nested_config_is_one_error(tmp_path: Path) -> None:
    """Nesting too deep to parse, or parsed and then too deep to print in the error message."""
    for depth in (100_000, 900):
        text = json.dumps({"versions": library_versions()})[:-1] + ', "method": ' + "[" * depth + "]" * depth + "}"
        (tmp_path / CONFIG_FILE).write_text(text, encoding="utf-8")
        with pytest.raises(ModelError, match="corrupt model config|unknown method"):
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
