"""Open play's own ranker: its out-of-fold tables of lexicon candidates, its fit, saving it beside
the learned model, and the service ranking clues without options with it."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers import DATA, SMALL_TRAIN_ROWS
from pictorank.api.service import Clue, build_service
from pictorank.api.settings import Settings
from pictorank.encoders import Encoder
from pictorank.errors import ModelError
from pictorank.features.gloss import GLOSS_COLUMNS
from pictorank.features.word import WORD_COLUMNS, word_columns
from pictorank.features.wordnet import WORDNET_COLUMNS
from pictorank.lexicon import Lexicon, guess_key, matches, without_qualifier
from pictorank.lexicon import store
from pictorank.lexicon.echo import echoes, hint_stems
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.open_play import OPEN_PLAY_DIR, OpenPlayRanker
from pictorank.train.fold_encoders import query_folds
from pictorank.train.open_play import fit_open_play, open_play_tables

CANDIDATES = 20


@pytest.fixture(scope="module")
def train(vocab, train_puzzles):
    return to_queries(train_puzzles[:SMALL_TRAIN_ROWS], vocab)


@pytest.fixture(scope="module")
def lexicon(train):
    """The slice's answers (without qualifiers) and its other options: a lexicon where most
    answers can be found, with a frequency a word."""
    words = sorted({without_qualifier(w) for q in train for w in (*q.options, q.answer)})
    zipf = np.array([2.0 + (sum(map(ord, w)) % 40) / 10 for w in words], np.float32)
    return Lexicon(tuple(words), zipf, "wordnet")


@pytest.fixture(scope="module")
def tables(train, lexicon, encoder, small_config):
    return open_play_tables(train, lexicon, encoder, small_config, log=lambda message: None, candidates=CANDIDATES)


@pytest.fixture(scope="module")
def open_ranker(small_learned, tables, small_config, lexicon):
    return fit_open_play(small_learned, tables, small_config, lambda message: None, lexicon.frequencies())


def test_word_columns_say_how_common_and_how_long_a_word_is():
    columns = word_columns(["snow", "snow-white", "cold sweat", "unheard-of word"], {"snow": 4.5, "snow-white": 2.5,
                                                                                     "cold sweat": 2.0})
    assert columns["open_zipf"].tolist() == [4.5, 2.5, 2.0, 2.0]  # an unknown word counts as the rarest
    assert columns["open_words"].tolist() == [1, 2, 2, 3]
    assert columns["open_zipf_z"].mean() == pytest.approx(0.0) and columns["open_zipf_z"][0] > 0
    assert word_columns(["a", "b"], {})["open_zipf_z"].tolist() == [0.0, 0.0]


def test_each_clue_gets_playable_lexicon_words_from_a_fold_that_never_saw_its_answer(train, tables, lexicon, small_config):
    keys = {guess_key(w) for w in lexicon.words}
    assert len(tables.queries) == sum(without_qualifier(q.answer).casefold() in keys for q in train)
    assert tables.sizes.tolist() == [len(q.options) for q in tables.queries] and tables.sizes.max() <= CANDIDATES
    assert list(tables.X.columns[-len(WORD_COLUMNS) - len(WORDNET_COLUMNS):]) == [*WORD_COLUMNS, *WORDNET_COLUMNS]
    assert len(tables.X) == tables.sizes.sum()
    bounds = np.cumsum([0, *tables.sizes])
    for i, q in enumerate(tables.queries):
        stems = hint_stems(q.hints)
        assert not [o for o in q.options if echoes(o, stems)]
        assert tables.y[bounds[i] : bounds[i + 1]].sum() == float(tables.found[i]) <= 1.0
        assert tables.found[i] == any(matches(o, q.answer) for o in q.options)
    folds = query_folds(train, small_config.folds, small_config.seed)
    fold_of = {q.answer: int(f) for q, f in zip(train, folds)}
    assert [fold_of[q.answer] for q in tables.queries] == tables.folds.tolist()
    assert 0.2 < tables.found.mean() < 1.0  # the answer is often, not always, among the nearest words


@pytest.fixture(scope="module")
def glosses(lexicon, encoder):
    return store.embed_glosses(lexicon, encoder)


@pytest.fixture(scope="module")
def searched(train, lexicon, encoder, small_config, glosses):
    """Tables whose candidates were found by name and by gloss, as the service finds them."""
    return open_play_tables(train, lexicon, encoder, small_config, lambda message: None, CANDIDATES, glosses,
                            search_glosses=True)


@pytest.fixture(scope="module")
def gloss_ranker(small_learned, searched, small_config, glosses):
    """Open play's ranker fitted on `searched`, reading the gloss columns."""
    return fit_open_play(small_learned, searched, small_config, lambda message: None, None, glosses)


def test_with_glosses_the_rows_get_gloss_columns_and_retrieval_reads_them_too(train, tables, lexicon, encoder,
                                                                              small_config, glosses, searched,
                                                                              gloss_ranker):
    with_columns = open_play_tables(train, lexicon, encoder, small_config, lambda message: None, CANDIDATES, glosses)
    assert [q.options for q in with_columns.queries] == [q.options for q in tables.queries]  # found by name only
    assert set(GLOSS_COLUMNS) <= set(with_columns.X.columns) and not set(GLOSS_COLUMNS) & set(tables.X.columns)
    defined = np.array([o in glosses for q in with_columns.queries for o in q.options])
    assert defined.any() and np.isnan(with_columns.X["gloss_cos"].to_numpy()).tolist() == (~defined).tolist()
    assert [q.options for q in searched.queries] != [q.options for q in tables.queries]
    assert set(GLOSS_COLUMNS) <= set(gloss_ranker.feature_names) and gloss_ranker.glosses is glosses


@pytest.fixture(scope="module")
def with_lexicon(small_learned, lexicon, tmp_path_factory):
    """The small learned model saved with the lexicon stored beside it (words and glosses in the
    base space): a folder the tests below copy and add an open-play ranker to."""
    model = tmp_path_factory.mktemp("with-lexicon") / "model"
    small_learned.save(model)
    store.build(model, lexicon, {"base": small_learned.extractor.base_encoder}, "base")
    return model


def test_a_model_whose_open_play_reads_glosses_is_served_searching_them(with_lexicon, small_learned, gloss_ranker,
                                                                        tmp_path, caplog):
    model = Path(shutil.copytree(with_lexicon, tmp_path / "model"))
    gloss_ranker.save(model)  # fitted on the same glosses, embedded by another encoder over the same base model
    assert OpenPlayRanker.reads_glosses(model) and not OpenPlayRanker.reads_glosses(tmp_path)
    service = build_service(Settings(model_dir=model, vocabulary_files=[DATA / "val.csv"]),
                            ranker=small_learned, encoders=None, base=small_learned.extractor.base_encoder)
    # searched beside the words (a clue vector in two spaces), and read by the ranker
    assert service.index.glosses is not None and service.open_ranker.glosses is service.index.glosses
    assert service.index.clue_vectors(["stripes"], service.encoders.base).shape[1] == service.index.index.d
    clue = ("animal", "stripes", "horse")
    [open_play] = service.rank([Clue(clue)])
    candidates = service.candidates([clue])[0]
    assert open_play.options == service.open_ranker.rank([Query(clue, tuple(candidates))])[0].options
    assert np.isfinite(service.open_ranker._features([Query(clue, tuple(candidates))])["gloss_cos"]).any()
    other = Encoder(model=small_learned.extractor.base_encoder.model, model_id="another-base")
    lost = build_service(Settings(model_dir=model, vocabulary_files=[]), ranker=small_learned, encoders=None, base=other)
    assert lost.index.glosses is None and lost.index.gloss_encoder is None
    assert "stored glosses were made by" in caplog.text


def test_the_fit_reads_the_learned_columns_the_words_own_and_its_wordnet_entry_s(open_ranker, small_learned, tables):
    assert open_ranker.feature_names == [*small_learned.feature_names, *WORD_COLUMNS, *WORDNET_COLUMNS]
    estimate = open_ranker.training["train_cv"]
    assert estimate["clues"] == len(tables.queries) and estimate["ceiling"] == pytest.approx(tables.found.mean())
    assert 0.0 <= estimate["hits@1"] <= estimate["hits@10"] <= estimate["ceiling"]
    assert open_ranker.calibrator is None and open_ranker.extractor is small_learned.extractor


def test_it_is_saved_beside_the_learned_model_and_loaded_back(open_ranker, small_learned, lexicon, tables, tmp_path):
    model = tmp_path / "model"
    small_learned.save(model)
    assert OpenPlayRanker.load_beside(model, small_learned, lexicon.frequencies()) is None
    open_ranker.save(model)
    loaded = OpenPlayRanker.load_beside(model, small_learned, lexicon.frequencies())
    queries = tables.queries[:5]
    assert [r.options for r in loaded.rank(queries)] == [r.options for r in open_ranker.rank(queries)]
    assert loaded.training["candidates"] == CANDIDATES
    booster = model / OPEN_PLAY_DIR / "model-0.txt"
    booster.write_text(booster.read_text() + "\n")
    with pytest.raises(ModelError, match="corrupt"):
        OpenPlayRanker.load_beside(model, small_learned)


def test_how_common_a_word_is_moves_it(open_ranker, tables, lexicon):
    query = next(q for q, found in zip(tables.queries, tables.found) if found)
    scores = open_ranker.score([query])[0]
    rare = OpenPlayRanker(open_ranker, open_ranker.booster, open_ranker.feature_names, {})
    assert not np.allclose(rare.score([query])[0], scores)


def test_wordnet_s_entries_are_read_only_by_a_ranker_fitted_on_them(open_ranker, small_learned, tables, small_config):
    query = tables.queries[0]
    assert set(WORDNET_COLUMNS) <= set(open_ranker._features([query]).columns)
    without = copy.copy(tables)
    without.X = tables.X.drop(columns=list(WORDNET_COLUMNS))
    older = fit_open_play(small_learned, without, small_config, lambda message: None)  # as a model fitted before them
    assert not set(WORDNET_COLUMNS) & set(older.feature_names)
    assert not set(WORDNET_COLUMNS) & set(older._features([query]).columns)
    assert len(older.rank([query])[0].options) == len(query.options)


def test_the_service_ranks_clues_without_options_with_it_and_given_options_as_before(
        open_ranker, small_learned, with_lexicon, tmp_path):
    model = Path(shutil.copytree(with_lexicon, tmp_path / "model"))
    open_ranker.save(model)
    service = build_service(Settings(model_dir=model, vocabulary_files=[DATA / "val.csv"]),
                            ranker=small_learned, encoders=None, base=small_learned.extractor.base_encoder)
    assert isinstance(service.open_ranker, OpenPlayRanker)
    assert service.index.glosses is None  # fitted without gloss columns: words are found by name, as it was fitted
    clue = ("animal", "stripes", "horse")
    [open_play] = service.rank([Clue(clue)])
    candidates = service.candidates([clue])[0]
    # the service's frequencies: its lexicon also holds the data's words, which may be candidates
    served = OpenPlayRanker(open_ranker, open_ranker.booster, open_ranker.feature_names, service.index.zipf)
    expected = served.rank([Query(clue, tuple(candidates))])[0].options
    assert open_play.options == expected and open_play.confidence is None
    [explained] = service.rank([Clue(clue, explain=3)])
    assert explained.options == expected and len(explained.explanations) == 3
    groups = explained.explanations[0].groups
    assert "word" in groups and "dictionary" in groups and "other" not in groups
    options = ("zebra", "horse", "tiger", "cow")
    [given] = service.rank([Clue(clue, options)])
    assert given.options == small_learned.rank([Query(clue, options)])[0].options


def test_a_fifo_in_place_of_open_plays_config_is_refused_not_read(tmp_path) -> None:
    """A FIFO at open_play/ranker.json hung start-up forever: it is refused, naming it."""
    import os

    from pictorank.errors import ModelError
    from pictorank.open_play import OpenPlayRanker

    (tmp_path / "open_play").mkdir()
    os.mkfifo(tmp_path / "open_play" / "ranker.json")
    with pytest.raises(ModelError, match="not a regular file"):
        OpenPlayRanker.load_beside(tmp_path, None)  # type: ignore[arg-type]
