"""Features of each (clue, option) pair for the learned ranker, as named columns.

Everything here works on hint *texts*, never on ids, so a model trained on Bliss pictograms
can rank clues from any other vocabulary. Column names carry their group as a prefix, which is
what the ablations of bench/quality.py drop:

- ``base_*`` / ``ft_*``: cosine similarities from the base and the fine-tuned encoder
  (several poolings, per-hint statistics, rank and gap to the row's best);
- ``lex_*``: surface links between the option and the descriptions (shared words, compounds
  such as sunflower = flower + sun, fuzzy string similarity);
- ``q_*``: size of the query (number of hints and options). The option's own shape (length,
  word count, brackets) was tried and left out: it is a prior of Bliss glosses that made the
  ranker worse on the emoji vocabulary and did not help on val;
- ``assoc_*``: associations learned from the training clues, in both encoders' spaces: token
  PMI; nearest train clues and their answers; what each description has meant in train (the
  centroid of the answers of clues using it, matched by text); reverse neighbours (the train
  answers nearest to the option, and whether their clues use this clue's descriptions); clues
  sharing both the first and a later description. Worth about 4 points of val Hits@1 together;
- ``hub_*``: hubness of the option (how close it is to every clue, CSLS-style).

`FeatureExtractor.fit` learns the position weights, the association tables and the reference
sets from training queries; `transform` only looks things up, so one 30-option query costs a few
milliseconds once its embeddings are cached.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from rapidfuzz import fuzz

from pictorank.artifacts import read_json, write_json
from pictorank.encoder import Encoder
from pictorank.errors import ModelError, NotFittedError
from pictorank.query import Query, joined_text, seed_text

STOPWORDS = frozenset("a an and or of the to in on at by for with from as is be into its it".split())
MAX_POSITION_BUCKET = 4  # clues of 4 or more hints share one set of position weights
WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
SCORE_COLUMNS = ("joined", "mean", "learned", "seed")  # poolings that get rank/gap columns


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stopwords."""
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


def synonyms(description: str) -> list[str]:
    """A description lists synonyms separated by commas: 'container, bowl, holder'."""
    return [s.strip().lower() for s in re.split(r"[,;]", description) if s.strip()]


LEXICAL = ("shared", "shared_frac", "substr_hints", "substr_first", "cover", "fuzz_max", "fuzz_token_set")
NEIGHBOURS = ("knn_weighted", "knn_max", "hint_first", "hint_rest", "hint_rest_mean", "hint_nn_first", "hint_nn_rest",
              "rev_clue", "rev_hints", "rev_first", "rev_rest", "rev_idf")
ASSOCIATIONS = (
    "assoc_pmi_max", "assoc_pmi_sum", "assoc_answer_token_seen",
    *(f"assoc_{space}_{name}" for space in ("base", "ft") for name in NEIGHBOURS),
    "assoc_pair_centroid", "assoc_pair_nn", "assoc_pair_count",
)


def selected_features(drop_groups: Sequence[str]) -> list[str]:
    """The feature columns a model with these ablations uses, in the code's order."""
    return [n for n in feature_names() if not any(n.startswith(g) for g in drop_groups)]


def feature_names() -> list[str]:
    """The columns of `FeatureExtractor.transform`, in order: a saved model must match them."""
    names = []
    for prefix in ("base", "ft"):
        names += [f"{prefix}_cos_{s}" for s in SCORE_COLUMNS]
        names += [f"{prefix}_hint_{s}" for s in ("first", "last", "max", "min", "mean", "spread")]
        names += [f"{prefix}_{kind}_{s}" for s in SCORE_COLUMNS for kind in ("rank", "gap", "z")]
    names += [f"lex_{n}" for n in LEXICAL]
    names += ["q_hints", "q_options"]
    names += [*ASSOCIATIONS, "hub_option", "hub_csls"]
    return names


# -- learned position-weighted pooling ---------------------------------------------------------


def position_bucket(n_hints: int) -> int:
    return min(n_hints, MAX_POSITION_BUCKET)


def expand_weights(weights: Sequence[float], n_hints: int) -> np.ndarray:
    """Weights for `n_hints` positions; positions past the list reuse its last value."""
    return np.array([weights[min(i, len(weights) - 1)] for i in range(n_hints)], dtype=np.float64)


def _pooled_cosines(hint_cos: np.ndarray, gram: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cosine of each option to the weighted sum of hint vectors, without forming the sum.

    With unit hint vectors h_i and option o: cos(o, sum w_i h_i) = (H w) / sqrt(w' G w).
    """
    norm = math.sqrt(max(float(w @ gram @ w), 1e-12))
    return hint_cos @ w / norm


def _reciprocal_rank(scores: np.ndarray, answer: int) -> float:
    return 1.0 / (1 + int((scores > scores[answer]).sum()))


def fit_position_weights(queries: Sequence[Query], encoder: Encoder, passes: int = 2) -> dict[int, list[float]]:
    """Per-position hint weights for each clue length, maximising MRR of pooled cosine on `queries`.

    Coordinate ascent over a small grid, started from equal weights: the first pictogram is the
    classifier and often generic ('animal'), so whether it deserves more or less weight is left
    to the data. A handful of numbers per clue length cannot memorise answers.
    """
    encoder.encode(list(dict.fromkeys(s for q in queries for s in (*q.hints, *q.options))))
    rows: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] = {}
    for q in queries:
        if q.answer is None or q.answer not in q.options:
            continue
        hints = encoder.encode(list(q.hints))
        options = encoder.encode(list(q.options))
        rows.setdefault(position_bucket(len(q.hints)), []).append(
            (options @ hints.T, hints @ hints.T, q.options.index(q.answer))
        )
    learned: dict[int, list[float]] = {}
    for bucket, items in sorted(rows.items()):
        weights = [1.0] * bucket

        def objective(ws: Sequence[float]) -> float:
            total = 0.0
            for hint_cos, gram, answer in items:
                w = expand_weights(ws, hint_cos.shape[1])
                total += _reciprocal_rank(_pooled_cosines(hint_cos, gram, w), answer)
            return total / len(items)

        best = objective(weights)
        for _ in range(passes):
            for position, value in product(range(bucket), WEIGHT_GRID):
                trial = list(weights)
                trial[position] = value
                if sum(trial) == 0:
                    continue
                score = objective(trial)
                if score > best + 1e-9:
                    best, weights = score, trial
        top = max(weights)
        learned[bucket] = [round(w / top, 4) for w in weights]
    return learned


# -- the extractor ----------------------------------------------------------------------------


@dataclass
class _Reference:
    """Training clues and answers, embedded once per encoder space ('base', 'ft'), for the
    neighbour, hint and hubness features.

    `clue_hints` holds each training clue's hint descriptions, so that a description is looked
    up by its text (never by its id) in `rows_with_hint`.
    """

    answers: list[str]
    clue_hints: list[tuple[str, ...]]
    clue_vectors: dict[str, np.ndarray]
    answer_vectors: dict[str, np.ndarray]

    def __post_init__(self) -> None:
        by_answer: dict[str, list[int]] = {}
        by_hint: dict[str, list[int]] = {}
        for i, (answer, hints) in enumerate(zip(self.answers, self.clue_hints)):
            by_answer.setdefault(answer, []).append(i)
            for hint in set(hints):
                by_hint.setdefault(hint, []).append(i)
        self._by_answer = by_answer
        self._by_hint = {h: np.array(rows) for h, rows in by_hint.items()}

    def rows_of(self, answer: str) -> list[int]:
        """Reference rows whose answer is `answer`."""
        return self._by_answer.get(answer, [])

    def rows_with_hint(self, description: str) -> np.ndarray:
        """Reference rows whose clue uses a pictogram with this description."""
        return self._by_hint.get(description, np.zeros(0, dtype=int))


@dataclass
class _TokenStats:
    """Co-occurrence counts of description tokens and answer tokens over train clues.

    `answer_hints` keeps each answer's clue tokens so that the rows answering an option can be
    taken out of the counts when that option is scored (see FeatureExtractor docs).
    """

    rows: int = 0
    hint_counts: dict[str, int] = field(default_factory=dict)
    answer_counts: dict[str, int] = field(default_factory=dict)
    pair_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    answer_hints: dict[str, list[list[str]]] = field(default_factory=dict)

    @classmethod
    def count(cls, train: Sequence[Query]) -> "_TokenStats":
        hint_counts: Counter[str] = Counter()
        answer_counts: Counter[str] = Counter()
        pair_counts: Counter[tuple[str, str]] = Counter()
        answer_hints: dict[str, list[list[str]]] = {}
        for q in train:
            hint_tokens = sorted({t for h in q.hints for t in tokens(h)})
            answer_tokens = set(tokens(q.answer))
            hint_counts.update(hint_tokens)
            answer_counts.update(answer_tokens)
            pair_counts.update(product(hint_tokens, answer_tokens))
            answer_hints.setdefault(q.answer, []).append(hint_tokens)
        return cls(len(train), dict(hint_counts), dict(answer_counts), dict(pair_counts), answer_hints)

    def option_values(self, hint_tokens: set[str], option: str, min_pair_count: int) -> tuple[float, float, float]:
        """(max PMI, sum of PMI, log count of the option's tokens among answers), without the
        train rows whose answer is `option` itself."""
        own = [set(h) for h in self.answer_hints.get(option, [])]
        n = self.rows - len(own)
        option_tokens = set(tokens(option))
        values = []
        for h in hint_tokens:
            own_h = sum(h in o for o in own)
            for a in option_tokens:
                c = self.pair_counts.get((h, a), 0) - own_h
                if c < min_pair_count:
                    continue
                values.append(math.log(c * n / ((self.hint_counts[h] - own_h) * (self.answer_counts[a] - len(own)))))
        seen = max((self.answer_counts.get(a, 0) - len(own) for a in option_tokens), default=0)
        return (max(values) if values else 0.0), float(sum(values)), math.log1p(max(seen, 0))


@dataclass
class FeatureExtractor:
    """Builds the feature table of queries.

    Parameters
    ----------
    base_encoder : the untouched sentence encoder.
    finetuned_encoder : the contrastively fine-tuned encoder; None repeats the base encoder's
        values in the ``ft_*`` columns so the column list never changes.
    neighbours : train clues consulted by the nearest-clue association features.
    hub_k : nearest train clues averaged for an option's hubness.
    min_pair_count : a (description token, answer token) pair must co-occur this often in
        train to get a PMI; rarer pairs are noise.

    Train rows whose answer is the option being scored are left out of every association
    feature of that option. Why: options are drawn from the answers of the same split, so on
    out-of-fold train rows the wrong options are answers of the fitted folds (their own clue is
    in the tables), while the right one never is; on val/test no option is a train answer.
    Without this, LightGBM learns "seen in train = wrong", which is false at prediction time.
    """

    base_encoder: Encoder
    finetuned_encoder: Encoder | None = None
    neighbours: int = 10
    hub_k: int = 10
    min_pair_count: int = 2
    position_weights_: dict[int, list[float]] = field(default_factory=dict)
    token_stats_: _TokenStats = field(default_factory=_TokenStats)
    reference_: _Reference | None = None

    # -- fit ----------------------------------------------------------------------------------
    def fit(self, queries: Sequence[Query], position_weights: dict[int, list[float]] | None = None) -> "FeatureExtractor":
        """Learn position weights, token associations and the reference clue set from `queries`."""
        train = [q for q in queries if q.answer is not None]
        if not train:
            raise ValueError("FeatureExtractor.fit needs queries with answers")
        self.position_weights_ = position_weights or fit_position_weights(train, self.base_encoder)
        self.token_stats_ = _TokenStats.count(train)
        clue_texts, answers = [joined_text(q.hints) for q in train], [q.answer for q in train]
        self.reference_ = _Reference(
            answers=answers,
            clue_hints=[tuple(q.hints) for q in train],
            clue_vectors={space: enc.encode(clue_texts) for space, enc in self.encoders().items()},
            answer_vectors={space: enc.encode(answers) for space, enc in self.encoders().items()},
        )
        self._hub_cache = {}
        return self

    # -- persistence --------------------------------------------------------------------------
    POOLING_FILE = "pooling.json"
    ASSOCIATIONS_FILE = "associations.json"
    REFERENCE_FILE = "reference.npz"

    def save(self, directory: Path) -> None:
        """Write what `fit` learned into `directory` (three files; the encoders are saved by their owner).

        pooling.json       learned position weights (by clue length)
        associations.json  token co-occurrence counts learned from train (PMI is computed from them)
        reference.npz      train answers, their clues' descriptions, and both encoders' embeddings
        """
        if self.reference_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; nothing to save")
        pooling = {"position_weights": {str(k): v for k, v in self.position_weights_.items()},
                   "note": "weight of each hint position, by clue length (key 4 = 4 or more hints)"}
        write_json(directory / self.POOLING_FILE, pooling)
        stats = self.token_stats_
        associations = {
            "params": {"neighbours": self.neighbours, "hub_k": self.hub_k, "min_pair_count": self.min_pair_count},
            "rows": stats.rows,
            "hint_counts": stats.hint_counts,
            "answer_counts": stats.answer_counts,
            "pair_counts": sorted([h, a, c] for (h, a), c in stats.pair_counts.items()),
            "answer_hints": stats.answer_hints,
        }
        write_json(directory / self.ASSOCIATIONS_FILE, associations, indent=None)
        ref = self.reference_
        vectors = {f"{space}_{kind}": table[space] for kind, table in
                   (("clue_vectors", ref.clue_vectors), ("answer_vectors", ref.answer_vectors)) for space in table}
        np.savez(directory / self.REFERENCE_FILE, answers=np.array(ref.answers, dtype=str),
                 clue_hints=np.array([json.dumps(h) for h in ref.clue_hints], dtype=str), **vectors)

    @classmethod
    def load(cls, directory: Path, base_encoder: Encoder, finetuned_encoder: Encoder | None) -> "FeatureExtractor":
        """The extractor `save` wrote into `directory`; a damaged file is a ModelError naming it."""
        pooling = read_json(directory / cls.POOLING_FILE)
        associations = read_json(directory / cls.ASSOCIATIONS_FILE)
        try:
            with np.load(directory / cls.REFERENCE_FILE, allow_pickle=False) as ref:
                spaces = ("base", "ft")
                reference = _Reference(
                    answers=ref["answers"].tolist(),
                    clue_hints=[tuple(json.loads(h)) for h in ref["clue_hints"].tolist()],
                    clue_vectors={space: ref[f"{space}_clue_vectors"] for space in spaces},
                    answer_vectors={space: ref[f"{space}_answer_vectors"] for space in spaces},
                )
            params = associations["params"]
            extractor = cls(base_encoder, finetuned_encoder, neighbours=int(params["neighbours"]),
                            hub_k=int(params["hub_k"]), min_pair_count=int(params["min_pair_count"]))
            extractor.position_weights_ = {
                int(k): [float(w) for w in v] for k, v in pooling["position_weights"].items()
            }
            extractor.token_stats_ = _TokenStats(
                rows=int(associations["rows"]),
                hint_counts={str(k): int(v) for k, v in associations["hint_counts"].items()},
                answer_counts={str(k): int(v) for k, v in associations["answer_counts"].items()},
                pair_counts={(str(h), str(a)): int(c) for h, a, c in associations["pair_counts"]},
                answer_hints={str(k): [list(map(str, t)) for t in v] for k, v in associations["answer_hints"].items()},
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelError(f"{directory}: corrupt feature tables ({type(exc).__name__}: {exc})") from None
        extractor.reference_ = reference
        return extractor

    # -- transform ----------------------------------------------------------------------------
    def encoders(self) -> dict[str, Encoder]:
        return {"base": self.base_encoder, "ft": self.finetuned_encoder or self.base_encoder}

    def transform(self, queries: Sequence[Query]) -> pd.DataFrame:
        """One row per (query, option), in query order then option order."""
        if self.reference_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; call fit() or load() first")
        texts = {s for q in queries for s in (*q.hints, *q.options, joined_text(q.hints), seed_text(q.hints))}
        for encoder in self.encoders().values():
            encoder.encode(sorted(texts))
        # Features come from many small matrix products (a clue against the train reference):
        # waking a BLAS thread pool for each costs more than the work, 15x more on a busy machine.
        with _one_blas_thread():
            self._warm_hubness({o for q in queries for o in q.options})
            blocks = [self._query_block(q) for q in queries]
        names = feature_names()
        matrix = np.vstack([np.column_stack([b[n] for n in names]) for b in blocks]) if blocks else np.zeros((0, len(names)))
        return pd.DataFrame(matrix.astype(np.float32), columns=names)

    def _warm_hubness(self, options: set[str]) -> None:
        """Hubness of every new option in one matrix product; options recur, so it is memoised."""
        assert self.reference_ is not None
        cache = self.__dict__.setdefault("_hub_cache", {})
        missing = sorted(o for o in options if o not in cache)
        if not missing:
            return
        option_clue = self.base_encoder.encode(missing) @ self.reference_.clue_vectors["base"].T
        for i, option in enumerate(missing):
            option_clue[i, self.reference_.rows_of(option)] = -1.0  # not its own clue
        h = min(self.hub_k, option_clue.shape[1])
        cache.update(zip(missing, np.partition(option_clue, -h, axis=1)[:, -h:].mean(axis=1).tolist()))

    def _query_block(self, q: Query) -> dict[str, np.ndarray]:
        n_opt = len(q.options)
        cols: dict[str, np.ndarray] = {}
        for prefix, encoder in self.encoders().items():
            cols.update(self._cosine_columns(prefix, encoder, q))
        cols.update(self._lexical_columns(q))
        cols["q_hints"] = np.full(n_opt, float(len(q.hints)))
        cols["q_options"] = np.full(n_opt, float(n_opt))
        cols.update(self._association_columns(q))
        if list(cols) != feature_names():  # a programming error, caught by the tests
            raise AssertionError("FeatureExtractor columns out of sync with feature_names()")
        return cols

    def _cosine_columns(self, prefix: str, encoder: Encoder, q: Query) -> dict[str, np.ndarray]:
        options = encoder.encode(list(q.options))
        hints = encoder.encode(list(q.hints))
        hint_cos = options @ hints.T  # options x hints
        weights = self.position_weights_.get(position_bucket(len(q.hints)), [1.0])
        scores = {
            "joined": options @ encoder.encode([joined_text(q.hints)])[0],
            "mean": _pooled_cosines(hint_cos, hints @ hints.T, np.ones(len(q.hints))),
            "learned": _pooled_cosines(hint_cos, hints @ hints.T, expand_weights(weights, len(q.hints))),
            "seed": options @ encoder.encode([seed_text(q.hints)])[0],
        }
        cols = {f"{prefix}_cos_{name}": s for name, s in scores.items()}
        cols[f"{prefix}_hint_first"] = hint_cos[:, 0]
        cols[f"{prefix}_hint_last"] = hint_cos[:, -1]
        cols[f"{prefix}_hint_max"] = hint_cos.max(axis=1)
        cols[f"{prefix}_hint_min"] = hint_cos.min(axis=1)
        cols[f"{prefix}_hint_mean"] = hint_cos.mean(axis=1)
        cols[f"{prefix}_hint_spread"] = hint_cos.max(axis=1) - hint_cos.min(axis=1)
        for name in SCORE_COLUMNS:
            s = scores[name]
            cols[f"{prefix}_rank_{name}"] = np.argsort(np.argsort(-s, kind="stable"), kind="stable").astype(np.float64)
            cols[f"{prefix}_gap_{name}"] = s - s.max()
            cols[f"{prefix}_z_{name}"] = (s - s.mean()) / (s.std() + 1e-6)
        return cols

    def _lexical_columns(self, q: Query) -> dict[str, np.ndarray]:
        hint_tokens = [set(tokens(h)) for h in q.hints]
        all_tokens = set().union(*hint_tokens)
        hint_syns = [synonyms(h) for h in q.hints]
        flat_syns = [s for syns in hint_syns for s in syns]
        cols = {f"lex_{n}": np.zeros(len(q.options)) for n in LEXICAL}
        for i, option in enumerate(q.options):
            lower = option.lower()
            opt_tokens = set(tokens(option))
            shared = opt_tokens & all_tokens
            cols["lex_shared"][i] = len(shared)
            cols["lex_shared_frac"][i] = len(shared) / max(1, len(opt_tokens))
            inside = [any(len(t) >= 3 and t in lower for t in ts) for ts in hint_tokens]
            cols["lex_substr_hints"][i] = sum(inside) / len(inside)
            cols["lex_substr_first"][i] = float(inside[0])
            cols["lex_cover"][i] = _covered_fraction(lower, all_tokens)
            cols["lex_fuzz_max"][i] = max(fuzz.ratio(lower, s) for s in flat_syns) / 100 if flat_syns else 0.0
            cols["lex_fuzz_token_set"][i] = fuzz.token_set_ratio(lower, " ".join(flat_syns)) / 100
        return cols

    def _association_columns(self, q: Query) -> dict[str, np.ndarray]:
        assert self.reference_ is not None
        ref = self.reference_
        hint_tokens = {t for h in q.hints for t in tokens(h)}
        pmi = np.array([self.token_stats_.option_values(hint_tokens, o, self.min_pair_count) for o in q.options])
        # Train rows answered by one of the options are left out (see the class docs).
        excluded = np.zeros(len(ref.answers), dtype=bool)
        for option in q.options:
            excluded[ref.rows_of(option)] = True
        cols = {"assoc_pmi_max": pmi[:, 0], "assoc_pmi_sum": pmi[:, 1], "assoc_answer_token_seen": pmi[:, 2]}
        match = self._clue_match(q)
        option_answer: dict[str, np.ndarray] = {}
        for space, encoder in self.encoders().items():
            options, clue = encoder.encode(list(q.options)), encoder.encode([joined_text(q.hints)])[0]
            # Every column below reads these two products: option x train answer, clue x train clue.
            option_answer[space] = options @ ref.answer_vectors[space].T
            clue_clue = ref.clue_vectors[space] @ clue
            cols.update(self._neighbour_columns(space, q, option_answer[space], clue_clue, match, excluded))
        cols.update(self._pair_columns(q, option_answer["base"], excluded))
        # Hubness: options close to many clues win by default; CSLS subtracts that.
        joined = self.base_encoder.encode(list(q.options)) @ self.base_encoder.encode([joined_text(q.hints)])[0]
        hub = np.array([self._hub_cache[o] for o in q.options])
        cols["hub_option"] = hub
        cols["hub_csls"] = 2 * joined - hub
        return cols

    def _clue_match(self, q: Query) -> dict[str, np.ndarray]:
        """For every train clue, how it shares this clue's descriptions (matched by text): the
        share of them it uses, whether it uses the first, any later one, and the idf-weighted
        share (a rare description shared says more than 'person')."""
        assert self.reference_ is not None
        ref = self.reference_
        n = len(ref.answers)
        descriptions = list(dict.fromkeys(q.hints))
        idf = {h: max(0.0, math.log(n / (1 + len(ref.rows_with_hint(h))))) for h in descriptions}
        idf_total = sum(idf.values()) or 1.0
        shared, weighted, rest = np.zeros(n), np.zeros(n), np.zeros(n)
        for h in descriptions:
            rows = ref.rows_with_hint(h)  # distinct rows, so += counts each clue once
            shared[rows] += 1.0 / len(descriptions)
            weighted[rows] += idf[h] / idf_total
        for h in set(q.hints[1:]):
            rest[ref.rows_with_hint(h)] = 1.0
        first = np.zeros(n)
        first[ref.rows_with_hint(q.hints[0])] = 1.0
        return {"hints": shared, "first": first, "rest": rest, "idf": weighted}

    def _neighbour_columns(
        self, space: str, q: Query, option_answer: np.ndarray, clue_clue: np.ndarray,
        match: dict[str, np.ndarray], excluded: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """The ``assoc_<space>_*`` columns: what train clues and answers say about each option,
        measured with one encoder ('base' or 'ft')."""
        cols: dict[str, np.ndarray] = {}

        # Clue neighbours: train clues like this one vote for options resembling their answers.
        clue_sims = np.where(excluded, -1.0, clue_clue)
        nearest, weights = _soft_top(clue_sims[None, :], self.neighbours)
        answer_sims = option_answer[:, nearest[0]]  # options x k
        cols["knn_weighted"] = answer_sims @ weights[0]
        cols["knn_max"] = (answer_sims * clue_sims[nearest[0]][None, :]).max(axis=1)

        # What each pictogram has meant in train (see _hint_answer_columns).
        cols.update(self._hint_answer_columns(q, option_answer, self.reference_.answer_vectors[space], excluded))

        # Reverse neighbours: the train answers most like the option, and whether their clues
        # look like this one (sow ~ boar, piglet, whose clues use 'pig', as this one does).
        near, w = _soft_top(np.where(excluded[None, :], -1.0, option_answer), self.neighbours)
        cols["rev_clue"] = (w * clue_clue[near]).sum(axis=1)
        for name, values in match.items():
            cols[f"rev_{name}"] = (w * values[near]).sum(axis=1)
        return {f"assoc_{space}_{name}": values for name, values in cols.items()}

    def _hint_answer_columns(
        self, q: Query, option_answer: np.ndarray, answer_vectors: np.ndarray, excluded: np.ndarray
    ) -> dict[str, np.ndarray]:
        """The option's cosine to the centroid of the answers of train clues using each of this
        clue's descriptions, and to the nearest of those answers.

        'country' + 'field' -> Poland: train answers built with 'field' are farms and meadows,
        and the country nearest to them wins. The first hint is kept apart (in Bliss it is the
        classifier, shared by hundreds of answers); of the later ones the best counts, and their
        mean. Descriptions are matched by text, so one never seen in train (or an unseen
        vocabulary) gives the neutral 0.
        """
        assert self.reference_ is not None
        per_hint = [
            _centroid_and_nearest(option_answer, answer_vectors, _kept(self.reference_.rows_with_hint(h), excluded))
            for h in q.hints
        ]
        rest = per_hint[1:] or [(np.zeros(len(q.options)), np.zeros(len(q.options)))]
        return {
            "hint_first": per_hint[0][0],
            "hint_rest": np.max([c for c, _ in rest], axis=0),
            "hint_rest_mean": np.mean([c for c, _ in rest], axis=0),
            "hint_nn_first": per_hint[0][1],
            "hint_nn_rest": np.max([n for _, n in rest], axis=0),
        }

    def _pair_columns(self, q: Query, option_answer: np.ndarray, excluded: np.ndarray) -> dict[str, np.ndarray]:
        """Train clues sharing the first description and at least one later one with this clue
        (same classifier, same specifier): the option's cosine to their answers' centroid and to
        the nearest of them, and how many there are (0 = no such clue)."""
        assert self.reference_ is not None
        ref = self.reference_
        later = np.concatenate([ref.rows_with_hint(h) for h in q.hints[1:]] or [np.zeros(0, dtype=int)])
        rows = _kept(np.intersect1d(ref.rows_with_hint(q.hints[0]), later), excluded)
        centroid, nearest = _centroid_and_nearest(option_answer, ref.answer_vectors["base"], rows)
        return {
            "assoc_pair_centroid": centroid,
            "assoc_pair_nn": nearest,
            "assoc_pair_count": np.full(len(q.options), float(len(rows))),
        }


def _kept(rows: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    return rows[~excluded[rows]]


def _centroid_and_nearest(option_answer: np.ndarray, answer_vectors: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each option's cosine to the centroid of the train answers `rows`, and to the nearest of
    them, read from the option x answer cosines (cos to a centroid = summed dot products over
    the norm of the summed vectors); zeros when there are no rows."""
    if len(rows) == 0:
        zero = np.zeros(option_answer.shape[0])
        return zero, zero
    sims = option_answer[:, rows]
    norm = max(float(np.linalg.norm(answer_vectors[rows].sum(axis=0))), 1e-12)
    return sims.sum(axis=1) / norm, sims.max(axis=1)


_THREADPOOLS = None


def _one_blas_thread():
    """A context running numpy's BLAS on one thread (threadpoolctl; its inspection is done once)."""
    global _THREADPOOLS
    if _THREADPOOLS is None:
        from threadpoolctl import ThreadpoolController

        _THREADPOOLS = ThreadpoolController()
    return _THREADPOOLS.limit(limits=1, user_api="blas")


def _soft_top(sims: np.ndarray, k: int, temperature: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `sims`, the indices of its k largest values and softmax weights over them
    (a low temperature: the nearest neighbour dominates unless others are nearly as close)."""
    k = min(k, sims.shape[1])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(sims, top, axis=1)
    weights = np.exp((values - values.max(axis=1, keepdims=True)) / temperature)
    return top, weights / weights.sum(axis=1, keepdims=True)


def _covered_fraction(option: str, hint_tokens: set[str]) -> float:
    """Share of the option's letters spelled out by hint words (sunflower = sun + flower -> 1.0)."""
    letters = option.replace(" ", "")
    if not letters:
        return 0.0
    covered = np.zeros(len(letters), dtype=bool)
    for token in hint_tokens:
        if len(token) < 3:
            continue
        start = letters.find(token)
        while start != -1:
            covered[start : start + len(token)] = True
            start = letters.find(token, start + 1)
    return float(covered.mean())
