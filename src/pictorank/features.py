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
- ``assoc_*``: associations learned from the training clues (token PMI, nearest train clues);
- ``hub_*``: hubness of the option (how close it is to every clue, CSLS-style).

`FeatureExtractor.fit` learns the position weights, the association tables and the reference
sets from training queries; `transform` only looks things up, so one 30-option query costs a few
milliseconds once its embeddings are cached.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from typing import Sequence

import numpy as np
import pandas as pd
from rapidfuzz import fuzz

from pictorank.encoder import Encoder
from pictorank.ranker import Query, joined_text, seed_text

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
ASSOCIATIONS = ("assoc_pmi_max", "assoc_pmi_sum", "assoc_answer_token_seen", "assoc_knn_weighted", "assoc_knn_max")


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
    encoder.warm(s for q in queries for s in (*q.hints, *q.options))
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
    """Training clues and answers embedded once, for the neighbour and hubness features."""

    clue_vectors: np.ndarray
    answer_vectors: np.ndarray
    answers: list[str]

    def rows_of(self, answer: str) -> list[int]:
        """Reference rows whose answer is `answer` (memoised index)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {}
            for i, a in enumerate(self.answers):
                index.setdefault(a, []).append(i)
            self._index = index
        return index.get(answer, [])


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
        clues = self.base_encoder.encode([joined_text(q.hints) for q in train])
        answers = self.base_encoder.encode([q.answer for q in train])
        self.reference_ = _Reference(clues, answers, [q.answer for q in train])
        self._hub_cache = {}
        return self

    # -- transform ----------------------------------------------------------------------------
    def _encoders(self) -> dict[str, Encoder]:
        return {"base": self.base_encoder, "ft": self.finetuned_encoder or self.base_encoder}

    def transform(self, queries: Sequence[Query]) -> pd.DataFrame:
        """One row per (query, option), in query order then option order."""
        if self.reference_ is None:
            raise RuntimeError("FeatureExtractor is not fitted; call fit() first")
        texts = {s for q in queries for s in (*q.hints, *q.options, joined_text(q.hints), seed_text(q.hints))}
        for encoder in self._encoders().values():
            encoder.warm(sorted(texts))
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
        option_clue = self.base_encoder.encode(missing) @ self.reference_.clue_vectors.T
        for i, option in enumerate(missing):
            option_clue[i, self.reference_.rows_of(option)] = -1.0  # not its own clue
        h = min(self.hub_k, option_clue.shape[1])
        cache.update(zip(missing, np.partition(option_clue, -h, axis=1)[:, -h:].mean(axis=1).tolist()))

    def _query_block(self, q: Query) -> dict[str, np.ndarray]:
        n_opt = len(q.options)
        cols: dict[str, np.ndarray] = {}
        for prefix, encoder in self._encoders().items():
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
        pmi_max = np.zeros(len(q.options))
        pmi_sum = np.zeros(len(q.options))
        seen = np.zeros(len(q.options))
        for i, option in enumerate(q.options):
            pmi_max[i], pmi_sum[i], seen[i] = self.token_stats_.option_values(hint_tokens, option, self.min_pair_count)
        options = self.base_encoder.encode(list(q.options))
        clue = self.base_encoder.encode([joined_text(q.hints)])[0]
        # Train clues that look like this one vote for options resembling their answers
        # (clues answered by one of the options are left out, see the class docs).
        clue_sims = ref.clue_vectors @ clue
        for option in q.options:
            clue_sims[ref.rows_of(option)] = -1.0
        k = min(self.neighbours, len(clue_sims))
        nearest = np.argpartition(-clue_sims, k - 1)[:k]
        weights = np.exp((clue_sims[nearest] - clue_sims[nearest].max()) / 0.05)
        weights /= weights.sum()
        answer_sims = options @ ref.answer_vectors[nearest].T  # options x k
        # Hubness: options close to many clues win by default; CSLS subtracts that.
        hub = np.array([self._hub_cache[o] for o in q.options])
        joined = options @ clue
        return {
            "assoc_pmi_max": pmi_max,
            "assoc_pmi_sum": pmi_sum,
            "assoc_answer_token_seen": seen,
            "assoc_knn_weighted": answer_sims @ weights,
            "assoc_knn_max": (answer_sims * clue_sims[nearest][None, :]).max(axis=1),
            "hub_option": hub,
            "hub_csls": 2 * joined - hub,
        }


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
