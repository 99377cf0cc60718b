"""What the training clues teach a clue-giver: for a word, how likely each pictogram is to be its
clue's main idea (first pictogram), a specifier (a later one), or either.

A word is read as its embedding, or, when WordNet defines it, as the unit mean of the embeddings
of the word and of its gloss (:mod:`pictorank.suggest.glossary`): "the word's vector" below.
Every pictogram of the vocabulary is described to the model by numbers that hold for any
vocabulary (nothing depends on a particular hint id or word):

    probe        log P(main idea | word): a logistic regression from the word's embedding to the
                 main idea of its clue, fitted on train (which words share a classifier)
    knn_first, knn_rest
                 how often the pictogram is the main idea / a specifier in the clues of the
                 train answers nearest the word (softmax-weighted by similarity)
    cos_description, cos_synonym
                 how near the word the description is (whole, or its best synonym)
    head, modifier, parenthesis
                 the pictogram names a part of the word (:mod:`pictorank.suggest.parts`)
    log_first, log_rest
                 how often train uses the pictogram as main idea / specifier at all
    first_share  of the train clues that use the pictogram, the share that make it the main idea:
                 whether it is a classifier in general (learned from whatever train is given, so
                 it holds for a new vocabulary's own train file)
    centroid_first, centroid_rest
                 cosine of the word to the mean embedding of the train answers whose clue has the
                 pictogram as main idea / specifier (-1 if none): a nearest-centroid vote in which
                 every user of the pictogram counts, not only the word's nearest
    nearest_similarity
                 the word's cosine to its nearest train answer: how far the neighbours' votes
                 can be trusted
    wide_first, wide_rest
                 the neighbours' vote at temperature 0.2 (near similarity-weighted) beside the
                 sharp one of knn_first / knn_rest
    *_gap, *_rank
                 each of the first five against the word's other pictograms: the distance to
                 the best one, and log(1 + rank). A classifier that sees one pictogram at a time
                 needs them to tell a clear winner from a close call (they raise main-idea
                 accuracy on val).

Three small LightGBM classifiers turn these into P(main idea), P(specifier) and P(in the clue).
They learn from out-of-fold numbers: the probe and neighbour tables that describe a train word
are fitted on the other folds, so the classifiers see words as new as the ones they will meet.
P(main idea) is then multiplied with the main-idea tower's softmax (:mod:`pictorank.suggest.tower`,
a copy of the encoder fine-tuned on train's words -> main ideas), which reorders the main ideas.
Fitting takes minutes (the tower's fine-tuning most of it; of the classifiers' part, the six
probes) and loading a saved fit a moment, so `fit_or_load` keeps the result in the cache folder
(timings: docs/experiments/speed.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pictorank.artifacts import check_files, check_versions, fit_versions, library_versions, read_json, sha256_file, write_json
from pictorank.encoders import Encoder, base_model_version
from pictorank.encoders.memo import CACHE_FORMAT, remove_dead_writers
from pictorank.errors import ModelError, NotFittedError
from pictorank.evaluation.folds import answer_folds
from pictorank.query import Query
from pictorank.suggest.glossary import GLOSSARY, Glossary
from pictorank.suggest.parts import PartIndex
from pictorank.suggest.rules import synonyms
from pictorank.suggest.tower import TOWER_DIR, as_saved, fit_tower, load_tower, main_idea_probabilities, save_tower

if TYPE_CHECKING:
    import lightgbm as lgb

SIGNALS = ("probe", "knn_first", "knn_rest", "cos_description", "cos_synonym")
FEATURES = (
    *SIGNALS, "head", "modifier", "parenthesis", "log_first", "log_rest",
    *(f"{name}_gap" for name in SIGNALS), *(f"{name}_rank" for name in SIGNALS),
    "centroid_first", "centroid_rest", "first_share", "nearest_similarity", "wide_first", "wide_rest",
)
WIDE_TEMPERATURE = 0.2  # the broad neighbour vote: nearly proportional to similarity among the 50
TARGETS = ("first", "rest", "any")
CONFIG_FILE, ARRAYS_FILE = "clue_model.json", "clue_model.npz"
FIT_FORMAT = 2  # bumped when the same inputs fit differently (since 2: folds by evaluation.folds)
DIGEST = "sha256"  # the config's field that holds the digest of the rest of the config

log = logging.getLogger(__name__)
# Candidate pictograms per word that the classifiers score: the best few by each signal, plus
# every part match. On val they hold most human main ideas and most clue pictograms.
POOL = {"probe": 30, "knn_first": 20, "knn_rest": 30, "cos_synonym": 20, "cos_description": 20}


@dataclass(frozen=True)
class Clue:
    """One training clue, as indices into the model's descriptions (main idea first)."""

    answer: str
    pictograms: tuple[int, ...]


@dataclass
class PictogramScores:
    """For one word: P(main idea), P(specifier) and P(in the clue) of the pooled pictograms
    (all other pictograms get 0), plus the part matches for the explanations."""

    first: np.ndarray
    rest: np.ndarray
    any: np.ndarray
    pool: np.ndarray
    parts: Any  # PartMatches
    neighbours: list[int]  # train clues of the nearest answers, nearest first


@dataclass(frozen=True)
class Probe:
    """A fitted logistic regression as scikit-learn leaves it (`coef_`, `intercept_`, `classes_`),
    applied with scikit-learn's own formula: the softmax of X @ coef_.T + intercept_ over the
    classes (two classes: the logistic of the one column). Fitting needs scikit-learn; reading a
    saved fit does not, so a service installs no scikit-learn or scipy."""

    coef_: np.ndarray
    intercept_: np.ndarray
    classes_: np.ndarray

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        decision = X @ self.coef_.T + self.intercept_
        if decision.shape[1] == 1:
            positive = 1.0 / (1.0 + np.exp(-decision[:, 0]))
            return np.column_stack([1.0 - positive, positive])
        exponentials = np.exp(decision - decision.max(axis=1, keepdims=True))
        return exponentials / exponentials.sum(axis=1, keepdims=True)


class Memory:
    """The tables one set of train clues gives: neighbours, counts, and the main-idea probe."""

    def __init__(self, clues: Sequence[Clue], vectors: np.ndarray, size: int, probe_c: float,
                 neighbours: int, temperature: float) -> None:
        self.clues = list(clues)
        self.vectors = vectors
        self.first = np.zeros((len(clues), size), np.float32)
        self.rest = np.zeros((len(clues), size), np.float32)
        for row, clue in enumerate(clues):
            self.first[row, clue.pictograms[0]] = 1.0
            self.rest[row, list(clue.pictograms[1:])] = 1.0
        first_count, rest_count = self.first.sum(0), self.rest.sum(0)
        self.log_first = np.log1p(first_count)
        self.log_rest = np.log1p(rest_count)
        self.first_share = (first_count + 0.5) / (first_count + rest_count + 1.0)  # 0.5 when never used
        self.centroid_first = _centroids(self.first, vectors)
        self.centroid_rest = _centroids(self.rest, vectors)
        self.neighbours = neighbours
        self.temperature = temperature
        self.probe_c = probe_c
        self.probe: Probe | None = None

    def fit_probe(self) -> "Memory":
        from sklearn.linear_model import LogisticRegression  # lazy: scikit-learn is slow to import

        labels = np.array([clue.pictograms[0] for clue in self.clues])
        with warnings.catch_warnings():
            # Many main ideas over few words is what this probe is for (a small vocabulary's train
            # clues, e.g. 63 ELCo phrases): scikit-learn's "could be a regression" hint is noise.
            warnings.filterwarnings("ignore", message="The number of unique classes", category=UserWarning)
            fitted = LogisticRegression(C=self.probe_c, max_iter=3000).fit(self.vectors, labels)
        self.probe = Probe(fitted.coef_, fitted.intercept_, fitted.classes_)
        return self

    def probe_log_probability(self, vectors: np.ndarray) -> np.ndarray:
        """log P(main idea = each description | word); descriptions never a main idea get log(1e-6)."""
        assert self.probe is not None
        out = np.full((len(vectors), self.first.shape[1]), 1e-6)
        out[:, self.probe.classes_] += self.probe.predict_proba(vectors)
        return np.log(out)

    def nearest(self, vectors: np.ndarray, temperature: float | None = None,
                with_similarity: bool = False) -> tuple[np.ndarray, ...]:
        """The nearest train clues of each word and their softmax weights (sum 1 per word), at
        the model's temperature unless another is given; and their cosines if asked."""
        similarity = vectors @ self.vectors.T
        k = min(self.neighbours, similarity.shape[1])
        rows = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        best = np.take_along_axis(similarity, rows, 1)
        order = np.argsort(-best, axis=1)
        rows, best = np.take_along_axis(rows, order, 1), np.take_along_axis(best, order, 1)
        weights = np.exp((best - best[:, :1]) / (temperature or self.temperature))
        weights /= weights.sum(1, keepdims=True)
        return (rows, weights, best) if with_similarity else (rows, weights)


class ClueModel:
    """Learns from train clues how people clue a word; scores every pictogram for a new word.

    Parameters
    ----------
    encoder : the base encoder (words and descriptions are embedded with it).
    folds : out-of-fold splits for the classifiers' training numbers.
    neighbours, temperature : the nearest train answers that vote, and the softmax temperature
        of their similarities (0.05: the vote is dominated by the few nearest).
    probe_c : inverse L2 strength of the main-idea probe (the default was the best on val).
    trees, leaves : LightGBM size (200 trees of 7 leaves: larger ones overfit the 2,100 clues).
    tower_epochs, tower_learning_rate : the main-idea tower's fine-tuning (pictorank.suggest.tower;
        0 epochs: no tower). Both were chosen on train alone, the tower fitted on four fifths of
        its words and scored on the main ideas of the rest: the default rate beats a smaller one
        on each split, and at that rate three epochs do as well as four or five (within noise;
        two do worse), in three fifths of the time (bench/tower_epochs.py,
        docs/experiments/clue-giver.md).
    seed : the folds', LightGBM's and the tower's random seed.
    glosses : read a word with its WordNet gloss (see the module docstring); False: the word alone.
    """

    def __init__(self, encoder: Encoder, folds: int = 5, neighbours: int = 50, temperature: float = 0.05,
                 probe_c: float = 10.0, trees: int = 200, leaves: int = 7, tower_epochs: float = 3.0,
                 tower_learning_rate: float = 4e-4, seed: int = 13, glosses: bool = True) -> None:
        self.encoder = encoder
        self.glosses = glosses
        self.folds = folds
        self.neighbours = neighbours
        self.temperature = temperature
        self.probe_c = probe_c
        self.trees = trees
        self.leaves = leaves
        self.tower_epochs = tower_epochs
        self.tower_learning_rate = tower_learning_rate
        self.seed = seed

    def get_params(self) -> dict[str, Any]:
        return {"folds": self.folds, "neighbours": self.neighbours, "temperature": self.temperature,
                "probe_c": self.probe_c, "trees": self.trees, "leaves": self.leaves,
                "tower_epochs": self.tower_epochs, "tower_learning_rate": self.tower_learning_rate, "seed": self.seed,
                "glosses": self.glosses}

    @property
    def glossary(self) -> Glossary | None:
        return GLOSSARY if self.glosses else None

    def gloss(self, word: str) -> str | None:
        """The word's WordNet gloss when the model reads words with theirs and WordNet has one."""
        return self.glossary.gloss(word) if self.glossary is not None else None

    @staticmethod
    def reading(vector: np.ndarray, gloss_vector: np.ndarray | None) -> np.ndarray:
        """A word as the model reads it: its unit embedding, averaged with its gloss's (if it has
        one) and renormalised."""
        if gloss_vector is None:
            return np.asarray(vector, dtype=np.float32)
        mean = np.asarray(vector, dtype=np.float32) + gloss_vector
        return (mean / np.linalg.norm(mean)).astype(np.float32)

    def word_vectors(self, words: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        """`reading` of many words (`vectors`: the encoder's of `words`), their glosses encoded
        here in one batch."""
        glosses = [self.gloss(w) for w in words]
        found = [i for i, g in enumerate(glosses) if g is not None]
        encoded = dict(zip(found, self.encoder.encode([glosses[i] for i in found]))) if found else {}
        read = [self.reading(v, encoded.get(i)) for i, v in enumerate(vectors)]
        return np.array(read, dtype=np.float32).reshape(np.shape(vectors))

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, queries: Sequence[Query], descriptions: Sequence[str]) -> "ClueModel":
        """Learn from train `queries` (hints and answers); `descriptions` are every pictogram's."""
        answers = len({q.answer for q in queries})  # checked first: the encoding below takes a while
        if answers < 2 * self.folds:
            clues = len({(q.answer, q.hints) for q in queries})
            raise ModelError(f"too few training clues to learn from: {clues} clues of {answers} different "
                             f"answers; the clue model needs at least {2 * self.folds} different answers")
        self._set_vocabulary(list(dict.fromkeys(descriptions)))
        self.clues_ = self._clues(queries)
        answers = [c.answer for c in self.clues_]
        self.clue_vectors_ = self.word_vectors(answers, self.encoder.encode(answers))
        self.mean_length_ = float(np.mean([len(c.pictograms) for c in self.clues_]))
        table, labels = self._out_of_fold_table()
        self.boosters_ = {target: self._fit_booster(table, labels[target]) for target in TARGETS}
        self.memory_ = self._memory(range(len(self.clues_)))
        self.tower_ = None
        if self.tower_epochs > 0:
            fitted = fit_tower([c.answer for c in self.clues_], [c.pictograms[0] for c in self.clues_],
                               self.description_vectors_, self.tower_epochs, self.tower_learning_rate, self.seed)
            self.tower_ = as_saved(fitted)  # the export a saved fit holds, so that saving changes nothing
        return self

    def _set_vocabulary(self, descriptions: list[str]) -> None:
        self.descriptions_ = descriptions
        self.index_ = {d: i for i, d in enumerate(descriptions)}
        self.parts_ = PartIndex(descriptions)
        owners = [(i, s) for i, d in enumerate(descriptions) for s in synonyms(d)]
        self.synonym_owner_ = np.array([i for i, _ in owners])
        self.description_vectors_ = self.encoder.encode(descriptions)
        self.synonym_vectors_ = self.encoder.encode([s for _, s in owners])

    def _clues(self, queries: Sequence[Query]) -> list[Clue]:
        """Distinct (answer, clue) pairs of train; hints outside the vocabulary are an error."""
        clues: dict[tuple[str, tuple[int, ...]], Clue] = {}
        for query in queries:
            if query.answer is None:
                raise ModelError("training queries need answers")
            unknown = [h for h in query.hints if h not in self.index_]
            if unknown:
                raise ModelError(f"training clue of {query.answer!r} uses descriptions not in the vocabulary: {unknown[:3]}")
            pictograms = tuple(self.index_[h] for h in query.hints)
            clues.setdefault((query.answer, pictograms), Clue(query.answer, pictograms))
        return list(clues.values())

    def _memory(self, rows: Sequence[int]) -> Memory:
        rows = list(rows)
        memory = Memory([self.clues_[r] for r in rows], self.clue_vectors_[rows], len(self.descriptions_),
                        self.probe_c, self.neighbours, self.temperature)
        return memory.fit_probe()

    def _out_of_fold_table(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Pooled feature rows of every train clue, each computed without its own fold."""
        folds = answer_folds([c.answer for c in self.clues_], self.folds, self.seed)
        tables, labels = [], {t: [] for t in TARGETS}
        for fold in range(self.folds):
            held = np.flatnonzero(folds == fold)
            memory = self._memory(np.flatnonzero(folds != fold))
            words = [self.clues_[r].answer for r in held]
            features = self._features(memory, words, self.clue_vectors_[held])
            for clue, table in zip([self.clues_[r] for r in held], features):
                pool = self._pool(table, None)
                tables.append(table[pool])
                for target, label in _labels(clue, len(self.descriptions_)).items():
                    labels[target].append(label[pool])
        return np.concatenate(tables), {t: np.concatenate(v) for t, v in labels.items()}

    def _fit_booster(self, table: np.ndarray, label: np.ndarray) -> "lgb.Booster":
        import lightgbm as lgb  # lazy: see pictorank.ranker.learned

        params = {"objective": "binary", "learning_rate": 0.05, "num_leaves": self.leaves, "min_data_in_leaf": 20,
                  "bagging_fraction": 0.8, "bagging_freq": 1, "feature_fraction": 0.8, "seed": self.seed,
                  "num_threads": 2, "verbose": -1, "deterministic": True}
        data = lgb.Dataset(table, label=label, feature_name=list(FEATURES), free_raw_data=False)
        return lgb.train(params, data, num_boost_round=self.trees)

    # -- scoring ------------------------------------------------------------------------------
    def _features(self, memory: Memory, words: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        """(words, descriptions, FEATURES) numbers of every pictogram for every word."""
        rows, weights, similarity = memory.nearest(vectors, with_similarity=True)
        knn_first = np.einsum("nk,nkm->nm", weights, memory.first[rows])
        knn_rest = np.einsum("nk,nkm->nm", weights, memory.rest[rows])
        wide = np.exp((similarity - similarity[:, :1]) / WIDE_TEMPERATURE)
        wide /= wide.sum(1, keepdims=True)
        wide_first = np.einsum("nk,nkm->nm", wide, memory.first[rows])
        wide_rest = np.einsum("nk,nkm->nm", wide, memory.rest[rows])
        centroid_first, centroid_rest = vectors @ memory.centroid_first.T, vectors @ memory.centroid_rest.T
        centroid_first[:, ~memory.first.any(0)] = -1.0
        centroid_rest[:, ~memory.rest.any(0)] = -1.0
        cos_description = vectors @ self.description_vectors_.T
        cos_synonym = self._best_synonym(vectors)
        probe = memory.probe_log_probability(vectors)
        size = len(self.descriptions_)
        signals = np.stack([probe, knn_first, knn_rest, cos_description, cos_synonym], axis=2)
        gaps = signals - signals.max(axis=1, keepdims=True)
        ranks = np.log1p(np.argsort(np.argsort(-signals, axis=1, kind="stable"), axis=1, kind="stable"))
        out = np.empty((len(words), size, len(FEATURES)), np.float32)
        for i, word in enumerate(words):
            parts = self.parts_.match(word)
            counts = [parts.head, parts.modifier, parts.parenthesis, memory.log_first, memory.log_rest]
            more = [centroid_first[i], centroid_rest[i], memory.first_share, np.full(size, similarity[i, 0]),
                    wide_first[i], wide_rest[i]]
            out[i] = np.concatenate([signals[i], np.stack(counts, axis=1), gaps[i], ranks[i], np.stack(more, axis=1)],
                                    axis=1)
        return out

    def _best_synonym(self, vectors: np.ndarray) -> np.ndarray:
        """Cosine of each word to each description's nearest synonym."""
        similarity = vectors @ self.synonym_vectors_.T
        best = np.full((len(vectors), len(self.descriptions_)), -1.0, np.float32)
        order = np.argsort(self.synonym_owner_, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(self.synonym_owner_[order]) != 0])
        best[:, self.synonym_owner_[order][starts]] = np.maximum.reduceat(similarity[:, order], starts, axis=1)
        return best

    @staticmethod
    def _pool(table: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
        """The candidate pictograms of one word: the best few by each signal, and part matches."""
        column = {name: i for i, name in enumerate(FEATURES)}
        scores = {name: table[:, column[name]] for name in POOL}
        if allowed is not None:
            scores = {name: np.where(allowed, s, -np.inf) for name, s in scores.items()}
        chosen = [np.argsort(-s, kind="stable")[:k] for name, k in POOL.items() for s in [scores[name]]]
        parts = np.flatnonzero(table[:, [column["head"], column["modifier"], column["parenthesis"]]].max(1) > 0)
        pool = np.unique(np.concatenate(chosen + [parts]))
        return pool if allowed is None else pool[allowed[pool]]

    def score(self, word: str, vector: np.ndarray, allowed: np.ndarray | None = None) -> PictogramScores:
        """P(main idea), P(specifier), P(in the clue) of each allowed pictogram for `word`, whose
        vector is as `word_vectors` reads it."""
        if not hasattr(self, "boosters_"):
            raise NotFittedError("ClueModel is not fitted; call fit() or load()")
        table = self._features(self.memory_, [word], vector[None, :])[0]
        pool = self._pool(table, allowed)
        size = len(self.descriptions_)
        probabilities = {}
        for target in TARGETS:
            values = np.zeros(size)
            if len(pool):
                values[pool] = self.boosters_[target].predict(table[pool], num_threads=1)
            probabilities[target] = values
        if self.tower_ is not None and len(pool):
            probabilities["first"][pool] = self._with_tower(word, pool, probabilities["first"][pool])
        rows, _ = self.memory_.nearest(vector[None, :])
        parts = self.parts_.match(word)
        return PictogramScores(probabilities["first"], probabilities["rest"], probabilities["any"], pool, parts,
                               rows[0].tolist())

    def _with_tower(self, word: str, pool: np.ndarray, first: np.ndarray) -> np.ndarray:
        """P(main idea) of the pool as the product of the classifiers' and the tower's opinions,
        renormalised to the classifiers' total: the tower reorders the main ideas, and the
        likeness keeps weighing P(main idea) against the expected set F1 as before.
        (It raises both main idea and set F1 on Bliss val: docs/experiments/clue-giver.md.)"""
        product = first * main_idea_probabilities(self.tower_, word, self.description_vectors_[pool])
        total = product.sum()
        return product * (first.sum() / total) if total > 0 else first

    # -- persistence ----------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike, key: str = "") -> None:
        """Write the fitted model (arrays, boosters, parameters, versions) to `directory`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        # An earlier save's config must not vouch for a half-written folder: it is written last.
        (directory / CONFIG_FILE).unlink(missing_ok=True)
        probe = self.memory_.probe
        np.savez(
            directory / ARRAYS_FILE,
            clue_vectors=self.clue_vectors_, description_vectors=self.description_vectors_,
            synonym_vectors=self.synonym_vectors_, synonym_owner=self.synonym_owner_,
            probe_coef=probe.coef_, probe_intercept=probe.intercept_, probe_classes=probe.classes_,
        )
        config = {
            "params": self.get_params(), "key": key, "versions": library_versions(),
            "base_model": base_model_version(), "encoder": self.encoder.model_id, "descriptions": self.descriptions_,
            "clues": [[c.answer, list(c.pictograms)] for c in self.clues_], "mean_length": self.mean_length_,
            "boosters": {t: b.model_to_string() for t, b in self.boosters_.items()},
        }
        if self.tower_ is not None:
            save_tower(self.tower_, directory)
        config["files"] = _file_digests(directory, self.tower_ is not None)
        config = json.loads(json.dumps(config, default=str))  # as `load` will read it, for the digest
        config[DIGEST] = _config_digest(config)
        write_json(directory / CONFIG_FILE, config, indent=None)  # last: a half-saved folder has no config

    @classmethod
    def load(cls, directory: str | os.PathLike, encoder: Encoder) -> "ClueModel":
        """A model `save` wrote; ModelError if it is missing, damaged or made by other versions.

        Every file is checked against the sha256 `save` recorded before it is read (the config
        against the digest it holds of itself): a damaged file is a ModelError naming it, never a
        model that loads and clues differently.
        """
        import lightgbm as lgb

        directory = Path(directory)
        config = _checked_config(directory)
        try:
            arrays = dict(np.load(directory / ARRAYS_FILE, allow_pickle=False))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ModelError(f"{directory}: not a readable clue model ({exc})") from None
        if config.get("base_model") != base_model_version():
            raise ModelError(f"{directory}: made with encoder {config.get('base_model')!r}, installed is {base_model_version()!r}")
        if config.get("encoder") != encoder.model_id:  # e.g. fitted on PyTorch's vectors, handed an int8 ONNX export
            raise ModelError(f"{directory}: fitted with encoder {config.get('encoder')!r}, not {encoder.model_id!r}")
        try:
            model = cls(encoder, **{"glosses": False, **config["params"]})  # saved before glosses: none
            model.descriptions_ = list(config["descriptions"])
            model.index_ = {d: i for i, d in enumerate(model.descriptions_)}
            model.parts_ = PartIndex(model.descriptions_)
            model.description_vectors_ = arrays["description_vectors"]
            model.synonym_vectors_ = arrays["synonym_vectors"]
            model.synonym_owner_ = arrays["synonym_owner"]
            model.clues_ = [Clue(answer, tuple(p)) for answer, p in config["clues"]]
            model.clue_vectors_ = arrays["clue_vectors"]
            model.mean_length_ = float(config["mean_length"])
            model.boosters_ = {t: lgb.Booster(model_str=config["boosters"][t]) for t in TARGETS}
            if any(b.feature_name() != list(FEATURES) for b in model.boosters_.values()):
                raise ValueError("its classifiers read other features than this pictorank makes")
            memory = Memory(model.clues_, model.clue_vectors_, len(model.descriptions_), model.probe_c,
                            model.neighbours, model.temperature)
            memory.probe = Probe(arrays["probe_coef"], arrays["probe_intercept"], arrays["probe_classes"])
            model.memory_ = memory
            model.tower_ = load_tower(directory) if model.tower_epochs > 0 else None
        except (KeyError, TypeError, ValueError, lgb.basic.LightGBMError) as exc:
            raise ModelError(f"{directory}: damaged clue model ({type(exc).__name__}: {exc})") from None
        return model


def _file_digests(directory: Path, tower: bool) -> dict[str, str]:
    """sha256 of each file the clue model saved in `directory` (a model folder holds others)."""
    names = [ARRAYS_FILE]
    if tower:
        names += sorted(p.relative_to(directory).as_posix() for p in (directory / TOWER_DIR).rglob("*") if p.is_file())
    return {name: sha256_file(directory / name) for name in names}


def _config_digest(config: dict[str, Any]) -> str:
    """The sha256 of the config without its own digest: the config cannot list its own hash."""
    body = {key: value for key, value in config.items() if key != DIGEST}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _checked_config(directory: Path) -> dict[str, Any]:
    """The clue model's config, once it and every file it lists (inside `directory`) match the
    digests `save` recorded, and its versions are compatible; else a ModelError naming the file."""
    path = directory / CONFIG_FILE
    config = read_json(path)
    if not isinstance(config, dict):
        raise ModelError(f"{path}: not a clue model")
    if DIGEST not in config:
        raise ModelError(f"{path}: no file hashes; written by an older pictorank, fit it again")
    if config[DIGEST] != _config_digest(config):
        raise ModelError(f"{path}: corrupt (sha256 differs from the one recorded when it was saved)")
    check_versions(config.get("versions"), path)
    check_files(directory, config.get("files"), path)
    return config


def fitted_key(model: ClueModel, queries: Sequence[Query], descriptions: Sequence[str],
               made_with: Any = None) -> str:
    """A digest of everything a fit depends on: same key, same fitted model. The encoder's
    `model_id` is part of it: an ONNX export's vectors (`<base>+onnx-int8`, which a learned model
    may hand the service) differ from PyTorch's, and the classifiers' numbers with them.
    `made_with`: the versions a saved fit recorded (artifacts.fit_versions)."""
    clues = sorted({(q.answer or "", q.hints) for q in queries})
    glossary = model.glossary.digest if model.glossary is not None else None
    blob = json.dumps([model.get_params(), list(dict.fromkeys(descriptions)), clues, base_model_version(),
                       model.encoder.model_id, CACHE_FORMAT, FIT_FORMAT, fit_versions(made_with), glossary],
                      ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def fit_or_load(queries: Sequence[Query], descriptions: Sequence[str], encoder: Encoder,
                cache_dir: str | os.PathLike | None, shipped: str | os.PathLike | None = None,
                fit_elsewhere: Callable[[], None] | None = None, **params: Any) -> ClueModel:
    """A ClueModel fitted on `queries`: the same fit read back from `shipped` or the cache when one
    is there, else fitted now and saved in the cache.

    Fitting is slow, loading is quick; a command that suggests one clue should not pay it every
    time. `shipped` is a folder that may hold the fit and is never written: a model directory,
    where `pictorank train` leaves the clue model its service will ask for (a container that mounts
    the model then does not fit it again with an empty cache).

    A damaged fit (a file whose sha256 differs from the one its save recorded, an unreadable
    config) is never used. It is refused with an error in the log naming the file, and the next
    place is tried: a damaged shipped fit falls back to the cache, then to a fit now, so /suggest
    keeps working (late, once) while the log says the model folder needs restoring. A fit of
    other puzzles or hints is passed over quietly: it is not damaged, only not this one.

    `fit_elsewhere`, when there is a cache: called instead of fitting here, to leave the fit in
    the cache (a service fits in a child process, so that the training stack's memory goes when
    the fit is done); the cache is read again after it, and only a fit still missing is made here.
    """
    model = ClueModel(encoder, **params)
    key = fitted_key(model, queries, descriptions)
    folder = Path(cache_dir) / "suggest" / key[:24] if cache_dir is not None else None
    for place in (shipped, folder):
        loaded = _load_fit(place, lambda made_with: fitted_key(model, queries, descriptions, made_with), encoder)
        if loaded is not None:
            return loaded
    if fit_elsewhere is not None and folder is not None:
        fit_elsewhere()
        loaded = _load_fit(folder, lambda made_with: fitted_key(model, queries, descriptions, made_with), encoder)
        if loaded is not None:
            return loaded
    model.fit(queries, descriptions)
    if folder is None:
        return model
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        remove_dead_writers(folder.parent, f".{folder.name}", "")  # stagings of killed fits
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.{os.getpid()}.", dir=folder.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the cache is shared like the rest of it
        model.save(staging, key)
    except OSError:
        return model  # an unwritable cache only costs the next run a fit
    # Read back as every later run will: the tower on its ONNX export, not on PyTorch.
    return _publish(staging, folder, key, encoder) or model


def _publish(staging: Path, folder: Path, key: str, encoder: Encoder) -> ClueModel | None:
    """Move a saved fit into place unless another process put one there first, and read back the
    fit in place. Two processes fitting the same key (a service's workers starting together) do
    not give the same fit: the int8 encoder's vectors depend on the batches a process encoded.
    First come wins, so every worker serves the same clues (a Clue-mode round shown by one worker
    is judged by another); a damaged fit in place is replaced."""
    if folder.exists() and _load_fit(folder, lambda _: key, encoder) is None:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        os.rename(staging, folder)  # atomic; refused when another process's fit is already there
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return _load_fit(folder, lambda _: key, encoder)


def _load_fit(folder: str | os.PathLike | None, key_for: Callable[[Any], str], encoder: Encoder) -> ClueModel | None:
    """The clue model saved in `folder` if it is the fit that `key_for(its recorded versions)`
    names, else None: a missing, damaged or other fit is only lost time, never an error; a damaged
    one is logged as an error (see `fit_or_load`)."""
    if folder is None or not (Path(folder) / CONFIG_FILE).is_file():
        return None
    try:
        config = read_json(Path(folder) / CONFIG_FILE)
        if not isinstance(config, dict) or config.get("key") != key_for(config.get("versions")):
            return None
        return ClueModel.load(folder, encoder)
    except ModelError as exc:
        log.error("refusing the clue model in %s, fitting or reading another instead: %s", folder, exc)
        return None


def _centroids(table: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Per pictogram, the unit mean of the answer vectors of the clues that use it as `table` says
    (zeros for a pictogram no clue uses)."""
    sums = table.T @ vectors
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.maximum(norms, 1e-12)).astype(np.float32)


def _labels(clue: Clue, size: int) -> dict[str, np.ndarray]:
    first, rest = np.zeros(size), np.zeros(size)
    first[clue.pictograms[0]] = 1.0
    rest[list(clue.pictograms[1:])] = 1.0
    return {"first": first, "rest": rest, "any": np.maximum(first, rest)}
