"""Open-vocabulary mode over a lexicon: the model folder's stored one, a deployment's word list,
or none; what /health says of it; and the guesses a player would accept."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from helpers import DATA, WordHashModel
from pictorank.api.app import create_app
from pictorank.api.serve import _check_paths
from pictorank.api.service import Clue, build_service
from pictorank.open_play import vocabulary_words
from pictorank.api.settings import Settings
from pictorank.cli import main
from pictorank.encoders import Encoder
from pictorank.errors import DataError
from pictorank.lexicon import Lexicon, guess_key
from pictorank.lexicon import store
from pictorank.lexicon.echo import echoes, hint_stems
from pictorank.ranker.unlearned import CosineRanker

WORDS = ("zebra horse animal", "zebu", "stripes", "animal", "horse", "cold snow", "snow", "fall", "library", "giraffe")
ZIPF = np.array([3.4, 1.8, 3.9, 4.9, 4.6, 3.0, 4.7, 5.0, 4.9, 3.5], np.float32)


def _model(tmp_path, model_id: str = "word-hash-lexicon", stored_by: str | None = None,
           lexicon: Lexicon = Lexicon(WORDS, ZIPF, "wordnet")):
    """A cosine model folder over the stand-in encoder, with a stored lexicon."""
    encoder = Encoder(model=WordHashModel(), model_id=model_id)
    model_dir = tmp_path / "model"
    CosineRanker(encoder=encoder).save(model_dir)
    embedder = Encoder(model=WordHashModel(), model_id=stored_by or model_id)
    store.build(model_dir, lexicon, {"base": embedder}, "base")
    return model_dir, encoder


def test_a_stored_lexicon_is_searched_with_the_data_words(tmp_path) -> None:
    model_dir, encoder = _model(tmp_path)
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[DATA / "val.csv"]), base=encoder)
    data_words = vocabulary_words([DATA / "val.csv"], None)
    assert set(service.index.words) == set(WORDS) | set(data_words) and service.index.source == "wordnet"
    assert service.index.zipf["zebu"] == pytest.approx(1.8)
    service.self_test()
    client = TestClient(create_app(Settings(), service=service))
    health = client.get("/health").json()
    assert health["lexicon_size"] == len(service.index.words) and health["lexicon_source"] == "wordnet"
    body = client.post("/rank", json={"hint_texts": ["animal", "stripes", "horse"], "top_k": 10}).json()
    assert body["mode"] == "open_vocabulary" and "zebra horse animal" in body["ranking"]
    stems = hint_stems(["animal", "stripes", "horse"])
    assert [w for w in body["ranking"] if echoes(w, stems)] == []
    assert len({guess_key(w) for w in body["ranking"]}) == len(body["ranking"])


def test_ranking_found_lexicon_words_reads_their_stored_vectors_instead_of_encoding_them(tmp_path) -> None:
    model_dir, encoder = _model(tmp_path)
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[]), base=encoder)
    before = encoder.encoded_count
    [ranking] = service.rank([Clue(("animal", "stripes", "horse"), None)])
    assert ranking.options and set(ranking.options) <= set(WORDS)
    assert encoder.encoded_count - before <= 3  # the hints at most, never the words found


def test_stored_vectors_of_another_encoder_are_not_used_for_ranking(tmp_path, caplog) -> None:
    model_dir, encoder = _model(tmp_path, stored_by="another-encoder")
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[]), base=encoder)
    before = encoder.encoded_count
    service.rank([Clue(("animal", "stripes", "horse"), None)])
    assert encoder.encoded_count - before > 3 and "its words are encoded when ranked" in caplog.text


def test_an_irregular_form_of_a_hint_word_is_never_a_candidate(tmp_path) -> None:
    words = ("freeze", "froze", "frozen water", "freezer", "ice", "water ice")
    model_dir, encoder = _model(tmp_path, lexicon=Lexicon(words, np.full(len(words), 3.0, np.float32), "wordnet"))
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[]), base=encoder)
    [candidates] = service.candidates([("water", "frozen")])
    assert sorted(candidates) == ["freezer", "ice", "water ice"]  # a derivation and new words stay


def test_the_frequency_prior_orders_the_open_vocabulary_guesses(tmp_path) -> None:
    model_dir, encoder = _model(tmp_path)
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[]), base=encoder)
    clue = Clue(("stripes zebra", "zebu horse", "animal"), None)
    service.prior_weight = 0.0
    [plain] = service.rank([clue])
    service.prior_weight = 50.0
    [common] = service.rank([clue])
    assert sorted(plain.options) == sorted(common.options) and plain.options != common.options
    frequency = service.index.zipf
    assert [frequency[w] for w in common.options] == sorted((frequency[w] for w in common.options), reverse=True)


def test_a_lexicon_stored_by_another_encoder_is_embedded_anew(tmp_path, caplog) -> None:
    model_dir, encoder = _model(tmp_path, stored_by="another-encoder")
    service = build_service(Settings(model_dir=model_dir, vocabulary_files=[]), base=encoder)
    assert set(service.index.words) == set(WORDS) and "embedding it anew" in caplog.text


def test_none_keeps_the_data_words_and_a_word_list_replaces_the_lexicon(tmp_path) -> None:
    model_dir, encoder = _model(tmp_path)
    data = build_service(Settings(model_dir=model_dir, open_vocab_lexicon="none",
                                  vocabulary_files=[DATA / "val.csv"]), base=encoder)
    assert data.index.source == "data" and data.index.zipf is None and "zebu" not in data.index.words
    words = tmp_path / "words.tsv"
    words.write_text("okapi\t2.9\nquagga\n", encoding="utf-8")
    listed = build_service(Settings(open_vocab_lexicon=str(words), vocabulary_files=[]), base=encoder)
    assert listed.index.words == ["okapi", "quagga"] and listed.index.source == str(words)
    assert listed.index.zipf == {"okapi": pytest.approx(2.9), "quagga": 0.0}


def test_the_data_words_are_never_offered_back_as_hint_words(api_client: TestClient, api_service) -> None:
    hints = [next(w for w in api_service.index.words if w.isalpha()), "light"]  # the stand-in's nearest word
    ranking = api_client.post("/rank", json={"hint_texts": hints, "top_k": 10}).json()["ranking"]
    assert ranking and [w for w in ranking if echoes(w, hint_stems(hints))] == []


def test_a_missing_lexicon_is_a_one_line_error(tmp_path, capsys) -> None:
    with pytest.raises(DataError, match="lexicon not found"):
        _check_paths(Settings(open_vocab_lexicon=str(tmp_path / "missing.tsv"), vocabulary_files=[]))
    assert main(["lexicon", "--model", str(tmp_path / "no-model")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_a_model_folder_without_lexicon_or_open_play_says_so(tmp_path) -> None:
    """A missing lexicon.json or open_play/ fell back silently: the service now says what open
    play lacks and how to add it (`pictorank serve` logs it after its first line)."""
    from pictorank.api.service import what_open_play_lacks
    from pictorank.api.settings import Settings

    settings = Settings(model_dir=tmp_path)
    [lexicon] = what_open_play_lacks(settings, None, None)
    assert "stores no lexicon" in lexicon and "pictorank lexicon --model" in lexicon

    class Index:
        zipf = {"dog": 5.0}

    [ranker] = what_open_play_lacks(settings, Index(), None)  # type: ignore[arg-type]
    assert "no open-play ranker" in ranker
    assert what_open_play_lacks(settings.model_copy(update={"open_vocab_lexicon": "none"}), None, None) == []


def test_open_play_answers_stay_small_whatever_the_word_list(tmp_path) -> None:
    """A 16-million-character "word" once came back in answers of 201 MB: words are at most
    MAX_WORD_CHARACTERS, so even a list of the longest words, ranked and explained, answers in
    under 64 KB."""
    from pictorank.lexicon.words import MAX_WORD_CHARACTERS

    encoder = Encoder(model=WordHashModel(), model_id="word-hash-long")
    words = tmp_path / "long.tsv"
    stems = ("zebra", "horse", "snow", "library", "giraffe", "stripes", "animal", "cold")
    lines = [(f"{stem} {i} " * 40)[:MAX_WORD_CHARACTERS].strip() for stem in stems for i in range(30)]
    words.write_text("\n".join(lines) + "\n", encoding="utf-8")
    service = build_service(Settings(open_vocab_lexicon=str(words), vocabulary_files=[]), base=encoder)
    client = TestClient(create_app(Settings(), service=service))
    for hints in (["!!!"], ["zebra", "stripes"], ["x" * 100, "snow", "cold", "animal"]):
        response = client.post("/rank", json={"hint_texts": hints, "top_k": 10, "explain": True})
        assert response.status_code == 200 and response.json()["ranking"], response.text
        assert len(response.content) < 64 * 1024


def test_a_huge_word_list_is_refused_in_moments_before_any_model_loads(tmp_path) -> None:
    """A 256 MB one-line list passed 8 GB of memory: `pictorank serve` reads and checks the
    lists it is given before it loads a model, and ends with one line (exit 2)."""
    import subprocess
    import sys
    import time

    huge = tmp_path / "huge.tsv"
    with huge.open("wb") as sparse:
        sparse.truncate(256 * 1024 * 1024)
    run = ("import resource, subprocess, sys\n"
           "done = subprocess.run([sys.executable, '-m', 'pictorank', 'serve', '--method', 'cosine'],"
           " capture_output=True, text=True)\n"
           "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.stderr.write(done.stderr)\n")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True,
                          env={**__import__("os").environ, "PICTORANK_OPEN_VOCAB_LEXICON": str(huge)})
    seconds = time.perf_counter() - started
    code, rss_kb = map(int, done.stdout.split())
    assert code == 2 and done.stderr.count("\n") == 1 and "268,435,456 bytes" in done.stderr, done.stderr
    assert seconds < 5 and rss_kb < 200 * 1024
