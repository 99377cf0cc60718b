"""The clue model and the suggester on a small slice of train (slow: the real encoder)."""

from __future__ import annotations

import copy
import math
import zlib
from pathlib import Path

import numpy as np
import pytest

from pictorank.errors import ModelError, UsageError
from pictorank.puzzles import to_queries
from pictorank.ranker import SeedRanker
from pictorank.suggest import ClueModel, Suggester, fit_or_load, is_valid_clue
from pictorank.suggest.glossary import GLOSSARY
from pictorank.suggest.evaluate import agreement, evaluate_suggestions, suggest_for_puzzles
from pictorank.suggest.suggester import READER_WEIGHT, first_choice

SLICE = 300  # train rows: enough for 2 folds, fitted in seconds
SMALL = {"folds": 2, "trees": 30, "tower_epochs": 2}
NO_TOWER = {**SMALL, "tower_epochs": 0}  # for tests of where fits are kept and read: no tower to fine-tune
TINY = 40  # train rows for tests of where a fit is kept and read, not of what it learned


@pytest.fixture(scope="module")
def clue_model(encoder, vocab, train_puzzles) -> ClueModel:
    return ClueModel(encoder, **SMALL).fit(to_queries(train_puzzles[:SLICE], vocab), list(vocab.descriptions.values()))


@pytest.fixture(scope="module")
def suggester(clue_model, vocab, encoder) -> Suggester:
    return Suggester(clue_model, vocab, SeedRanker(encoder), encoder)


def test_suggestions_follow_the_rules(suggester: Suggester, vocab) -> None:
    for word in ("cats", "sunflower", "credit card"):
        suggestions = suggester.suggest(word, ["dog", "bird", "rose"], max_length=3, top=4)
        assert 1 <= len(suggestions) <= 4
        for suggestion in suggestions:
            assert 2 <= len(suggestion.pictograms) <= 3
            assert is_valid_clue(suggestion.descriptions, word, ["dog", "bird", "rose"])
            assert suggestion.pictograms[0].role == "main idea" and suggestion.pictograms[0].reason
            assert all(vocab.descriptions[p.id] == p.description for p in suggestion.pictograms)
            assert 1 <= suggestion.rank <= 4 and suggestion.options == 4



def test_explain_judges_the_clue_given_and_refuses_one_the_rule_forbids(suggester: Suggester, vocab) -> None:
    [best] = suggester.suggest("sunflower", ["rose", "tulip"], top=1)
    again = suggester.explain("sunflower", ["rose", "tulip"], best.hint_ids)
    assert again.hint_ids == best.hint_ids and again.rank == best.rank and again.likeness == pytest.approx(best.likeness)
    main = best.hint_ids[0]
    cat = next(i for i, d in vocab.descriptions.items() if d.split(",")[0] == "cat")
    for word, clue in (("sunflower", [main, main]), ("cats", [cat]), ("cats", [main, cat])):
        with pytest.raises(UsageError, match="game's rule"):
            suggester.explain(word, ["rose"], clue)


def test_an_infinite_win_bonus_puts_winners_first(clue_model, vocab, encoder) -> None:
    strict = Suggester(clue_model, vocab, SeedRanker(encoder), encoder, win_bonus=math.inf)
    suggestions = strict.suggest("sunflower", ["rose", "sun", "tulip"], top=8)
    winners = [s for s in suggestions if s.margin > 0]
    assert suggestions[: len(winners)] == winners
    with pytest.raises(UsageError, match="win_bonus"):
        Suggester(clue_model, vocab, SeedRanker(encoder), encoder, win_bonus=-1)


class _ConstantReader:
    """A reader that reads every clue as the word equally well (cosine 1)."""

    model_id = "constant"

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.full((len(texts), 4), 0.5)


def test_a_reader_adds_its_cosine_to_the_likeness(clue_model, vocab, encoder) -> None:
    plain = Suggester(clue_model, vocab, SeedRanker(encoder), encoder)
    read = Suggester(clue_model, vocab, SeedRanker(encoder), encoder, reader=_ConstantReader())
    before = plain.suggest("sunflower", ["rose", "tulip"], top=5, use_known=False)
    after = read.suggest("sunflower", ["rose", "tulip"], top=5, use_known=False)
    assert [s.hint_ids for s in after] == [s.hint_ids for s in before]
    assert [s.likeness for s in after] == pytest.approx([s.likeness + READER_WEIGHT for s in before])


class _HashReader:
    """Unit vectors by hashing, and what it was asked to read."""

    model_id = "hash"

    def __init__(self) -> None:
        self.read: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.read.append(list(texts))
        vectors = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_reader_reads_the_word_with_its_gloss(clue_model, vocab, encoder) -> None:
    reader = _HashReader()
    read = Suggester(clue_model, vocab, SeedRanker(encoder), encoder, reader=reader)
    plain = Suggester(clue_model, vocab, SeedRanker(encoder), encoder)
    [before] = plain.suggest("sunflower", ["rose", "tulip"], top=1, use_known=False)
    after = read.explain("sunflower", ["rose", "tulip"], before.hint_ids)
    gloss = GLOSSARY.gloss("sunflower")
    [texts] = reader.read
    assert texts[:2] == ["sunflower", gloss] and len(texts) == 3
    vectors = reader.encode(texts)
    target = (vectors[0] + vectors[1]) / np.linalg.norm(vectors[0] + vectors[1])
    assert after.likeness - before.likeness == pytest.approx(READER_WEIGHT * float(vectors[2] @ target), abs=1e-6)


def test_an_unlearned_method_has_no_reader(encoder, vocab) -> None:
    from pictorank.encoders import Encoders
    from pictorank.ranker.registry import serving_encoders
    from pictorank.settings import CommonSettings

    assert serving_encoders(None, CommonSettings(), base=encoder) == Encoders(encoder)


def _single_clue_words(train_puzzles, vocab) -> list:
    """Train puzzles of the slice whose answer has this one clue there, a clue the rules allow."""
    count: dict[str, int] = {}
    for p in train_puzzles[:SLICE]:
        count[p.answer] = count.get(p.answer, 0) + 1
    return [p for p in train_puzzles[:SLICE] if count[p.answer] == 1 and len(set(p.hints)) == len(p.hints) <= 4
            and is_valid_clue(vocab.describe(p.hints), p.answer, [o for o in p.options if o != p.answer])]


def test_a_train_clue_comes_first_only_when_the_guesser_picks_its_word(suggester: Suggester, train_puzzles,
                                                                     vocab) -> None:
    """A train word gets its stored clue back first (marked known) when the guesser ranks the word
    first with it against the puzzle's other options; otherwise a clue made for the word leads."""
    outcomes: dict[bool, object] = {}
    for puzzle in _single_clue_words(train_puzzles, vocab)[:40]:
        avoid = [o for o in puzzle.options if o != puzzle.answer]
        wins = suggester.explain(puzzle.answer, avoid, list(puzzle.hints)).rank == 1
        outcomes.setdefault(wins, (puzzle, avoid))
        if len(outcomes) == 2:
            break
    assert set(outcomes) == {True, False}, "the slice should hold a stored clue of each kind"
    puzzle, avoid = outcomes[True]
    first = suggester.suggest(puzzle.answer, avoid, top=3)[0]
    assert first.known and first.descriptions == vocab.describe(puzzle.hints) and first.rank == 1
    puzzle, avoid = outcomes[False]
    suggestions = suggester.suggest(puzzle.answer, avoid, top=20)
    assert suggestions[0].descriptions != vocab.describe(puzzle.hints) and not suggestions[0].known
    stored = [s for s in suggestions if s.known]
    assert all(s.rank > 1 for s in stored) and suggestions[len(suggestions) - len(stored):] == stored  # last
    assert not any(s.known for s in suggester.suggest(puzzle.answer, avoid, top=3, use_known=False))


def test_first_choice_over_the_judged_clues_is_what_suggest_gives(suggester: Suggester) -> None:
    """Benches choose the knobs by re-weighing `judged` clues: with the suggester's own knobs that
    must give suggest's first clue, and other knobs must be able to give another one."""
    for word, avoid in (("sunflower", ["rose", "sun", "tulip"]), ("credit card", ["money", "bank"])):
        judged = suggester.judged(word, avoid, use_known=False)
        [first] = suggester.suggest(word, avoid, top=1, use_known=False)
        chosen = first_choice(judged, suggester.reader_weight, suggester.win_bonus)
        assert [suggester.model.descriptions_[i] for i in chosen.pictograms] == first.descriptions
        assert (chosen.rank, chosen.margin) == (first.rank, pytest.approx(first.margin))
    assert first_choice(judged, 0.0, 0.0).pictograms == max(judged, key=lambda c: c.likeness).pictograms
    assert first_choice(judged, 0.0, math.inf).margin > 0 or not any(c.margin > 0 for c in judged)


def test_without_avoid_the_nearest_answers_stand_in(suggester: Suggester, encoder) -> None:
    neighbours = suggester.hardest_neighbours("kitten", encoder.encode(["kitten"])[0], count=5)
    assert len(neighbours) == 5 and "kitten" not in neighbours
    assert suggester.suggest("kitten", top=1)[0].options == 1 + 10


@pytest.mark.parametrize("word, avoid", [("", []), ("a|b", []), ("x" * 101, []), ("cat", ["w"] * 101)])
def test_bad_input_is_refused(suggester: Suggester, word: str, avoid: list[str]) -> None:
    with pytest.raises(UsageError):
        suggester.suggest(word, avoid)


def test_save_load_and_cache(clue_model: ClueModel, encoder, vocab, train_puzzles, tmp_path: Path) -> None:
    clue_model.save(tmp_path / "model")
    loaded = ClueModel.load(tmp_path / "model", encoder)
    vector = encoder.encode(["kitten"])[0]
    assert np.allclose(loaded.score("kitten", vector).any, clue_model.score("kitten", vector).any)
    (tmp_path / "model" / "clue_model.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelError):
        ClueModel.load(tmp_path / "model", encoder)
    queries = to_queries(train_puzzles[:TINY], vocab)
    first = fit_or_load(queries, list(vocab.descriptions.values()), encoder, tmp_path / "cache", **SMALL)
    again = fit_or_load(queries, list(vocab.descriptions.values()), encoder, tmp_path / "cache", **SMALL)
    assert again.descriptions_ == first.descriptions_ and len(list((tmp_path / "cache" / "suggest").iterdir())) == 1
    assert type(first.tower_).__name__ == "OnnxSentenceEncoder"  # a fresh fit runs as later runs read it back


def test_a_damaged_cached_fit_is_refitted_and_the_first_fit_in_place_is_served(
        encoder, vocab, train_puzzles, tmp_path: Path, monkeypatch) -> None:
    """A truncated clue_model.npz raised BadZipFile on every run; and two workers fitting the same
    key served different clues (their int8 vectors differ), so a Clue-mode round shown by one was
    judged against another clue by the other."""
    from pictorank.suggest.model import fitted_key

    queries, descriptions = to_queries(train_puzzles[:TINY], vocab), list(vocab.descriptions.values())
    cache = tmp_path / "cache"
    first = fit_or_load(queries, descriptions, encoder, cache, **NO_TOWER)
    [folder] = (cache / "suggest").iterdir()
    arrays = folder / "clue_model.npz"
    arrays.write_bytes(arrays.read_bytes()[:1000])
    key = fitted_key(ClueModel(encoder, **NO_TOWER), queries, descriptions)
    fit = ClueModel.fit

    def fit_while_another_worker_saves_first(self, *args):
        fitted = fit(self, *args)
        first.mean_length_ = 9.0  # marks the other worker's fit
        first.save(folder, key)
        return fitted

    monkeypatch.setattr(ClueModel, "fit", fit_while_another_worker_saves_first)
    served = fit_or_load(queries, descriptions, encoder, cache, **NO_TOWER)
    assert served.mean_length_ == 9.0 and [p.name for p in (cache / "suggest").iterdir()] == [folder.name]


def test_a_staging_folder_a_killed_fit_left_is_removed_by_the_next_fit(encoder, vocab, train_puzzles,
                                                                        tmp_path: Path) -> None:
    """A fit killed while saving left its staging folder in the cache for good: the next fit of
    that key removes those of dead processes."""
    import subprocess
    import sys

    from pictorank.suggest.model import fitted_key

    queries, descriptions = to_queries(train_puzzles[:TINY], vocab), list(vocab.descriptions.values())
    key = fitted_key(ClueModel(encoder, **NO_TOWER), queries, descriptions)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / "cache" / "suggest" / f".{key[:24]}.{dead.stdout.strip()}.abc123"
    left.mkdir(parents=True)
    fit_or_load(queries, descriptions, encoder, tmp_path / "cache", **NO_TOWER)
    assert [p.name for p in (tmp_path / "cache" / "suggest").iterdir()] == [key[:24]]


def test_a_shipped_fit_is_read_not_refitted_and_another_fit_is_ignored(
        clue_model: ClueModel, encoder, vocab, train_puzzles, tmp_path: Path, monkeypatch) -> None:
    """A model folder's clue model (`shipped`, written by `pictorank train`) serves a service with
    an empty cache of its own; the folder is never written, and a fit of other puzzles is not used."""
    from pictorank.suggest.model import fitted_key

    queries, descriptions = to_queries(train_puzzles[:SLICE], vocab), list(vocab.descriptions.values())
    shipped = tmp_path / "model"
    clue_model.save(shipped, fitted_key(ClueModel(encoder, **SMALL), queries, descriptions))
    before = sorted((p.name, p.stat().st_mtime_ns) for p in shipped.iterdir())
    fits: list[int] = []
    fit = ClueModel.fit
    monkeypatch.setattr(ClueModel, "fit", lambda self, *a: fits.append(1) or fit(self, *a))

    read = fit_or_load(queries, descriptions, encoder, tmp_path / "cache", shipped=shipped, **SMALL)
    assert fits == [] and read.clues_ == clue_model.clues_ and not (tmp_path / "cache").exists()
    other = fit_or_load(queries[:TINY], descriptions, encoder, None, shipped=shipped, **NO_TOWER)
    assert fits == [1] and len(other.clues_) == len({(q.answer, q.hints) for q in queries[:TINY]}) < len(clue_model.clues_)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in shipped.iterdir()) == before


def test_the_tower_learns_main_ideas_and_only_reorders_them(clue_model: ClueModel, encoder, vocab,
                                                             train_puzzles) -> None:
    """The main-idea tower puts the train words' own main ideas first far more often than the
    base encoder it started from, and in the model it reorders P(main idea) without changing
    the classifiers' total (the likeness keeps its balance)."""
    from pictorank.suggest.tower import main_idea_probabilities

    clues = clue_model.clues_[:100]
    vectors = clue_model.description_vectors_

    def right(tower) -> int:
        return sum(int(np.argmax(main_idea_probabilities(tower, c.answer, vectors))) == c.pictograms[0] for c in clues)

    assert right(clue_model.tower_) > right(encoder.model) + 20
    # The tower is fitted after everything else, so the same fit without it is the model with its
    # tower taken away (a fit without one is checked on a tiny slice).
    tiny = ClueModel(encoder, **NO_TOWER).fit(to_queries(train_puzzles[:TINY], vocab), list(vocab.descriptions.values()))
    assert tiny.tower_ is None
    without = copy.copy(clue_model)
    without.tower_ = None
    vector = encoder.encode(["kitten"])[0]
    plain, towered = without.score("kitten", vector), clue_model.score("kitten", vector)
    assert np.array_equal(plain.pool, towered.pool) and np.allclose(plain.any, towered.any)
    assert towered.first.sum() == pytest.approx(plain.first.sum())
    assert not np.allclose(towered.first, plain.first)


def test_a_saved_tower_runs_on_onnx_and_a_missing_one_is_a_damaged_model(clue_model: ClueModel, encoder,
                                                                         tmp_path: Path) -> None:
    import shutil

    from pictorank.encoders.onnx import OnnxSentenceEncoder
    from pictorank.suggest.tower import TOWER_DIR

    clue_model.save(tmp_path / "model")
    loaded = ClueModel.load(tmp_path / "model", encoder)
    assert isinstance(loaded.tower_, OnnxSentenceEncoder)  # a service that loads it needs no torch
    vector = encoder.encode(["kitten"])[0]
    assert np.allclose(loaded.score("kitten", vector).first, clue_model.score("kitten", vector).first, atol=1e-5)
    loaded.save(tmp_path / "again")  # a loaded tower is copied as it is
    assert (tmp_path / "again" / TOWER_DIR / "model.onnx").is_file()
    loaded.save(tmp_path / "model")  # into its own folder (train re-saving a clue model read from there)
    assert ClueModel.load(tmp_path / "model", encoder).score("kitten", vector).first.sum() > 0
    shutil.rmtree(tmp_path / "model" / TOWER_DIR)
    with pytest.raises(ModelError, match=f"{TOWER_DIR}/.*: missing"):  # its files are hash-checked first
        ClueModel.load(tmp_path / "model", encoder)


def test_evaluation_measures_agreement_and_guessability(suggester: Suggester, val_puzzles, vocab, encoder) -> None:
    assert agreement(["a", "b"], ["a", "c", "d"]) == {"main_idea": 1.0, "set_f1": 0.4, "exact": 0.0, "length": 2.0}
    puzzles = val_puzzles[:6]
    suggestions, seconds = suggest_for_puzzles(suggester, puzzles, max_length=3)
    result = evaluate_suggestions(puzzles, suggestions, vocab, {"seed": SeedRanker(encoder)})
    assert result["agreement"]["rows"] == 6 and len(seconds) == 6
    assert 0 <= result["agreement"]["set_f1"] <= 1
    assert set(result["guessers"]["seed"]) == {"suggested", "human"}


def test_the_model_is_tied_to_the_encoder_it_was_fitted_with(clue_model: ClueModel, encoder, vocab, train_puzzles,
                                                              tmp_path: Path) -> None:
    """An ONNX int8 export (the base encoder a learned model may hand the service) gives other
    vectors than PyTorch: a model fitted on one is never read back or scored with the other."""
    from pictorank.encoders import Encoder
    from pictorank.suggest.model import fitted_key

    onnx = Encoder(model=encoder.model, model_id=f"{encoder.model_id}+onnx-int8")
    queries, descriptions = to_queries(train_puzzles[:SLICE], vocab), list(vocab.descriptions.values())
    assert fitted_key(ClueModel(encoder, **SMALL), queries, descriptions) != fitted_key(ClueModel(onnx, **SMALL), queries, descriptions)
    clue_model.save(tmp_path / "model")
    with pytest.raises(ModelError, match="fitted with encoder"):
        ClueModel.load(tmp_path / "model", onnx)
    with pytest.raises(UsageError, match="fitted with encoder"):
        Suggester(clue_model, vocab, SeedRanker(onnx), onnx)
