"""The ``assoc_*`` columns: associations learned from the training clues, in both encoders' spaces.

Token PMI; nearest train clues and their answers; what each description has meant in train (the
centroid of the answers of clues using it, matched by text); reverse neighbours (the train
answers nearest to the option, and whether their clues use this clue's descriptions); clues
sharing both the first and a later description. Together they raise val Hits@1 clearly.

Train rows whose answer is the option being scored are left out of every association feature of
that option (and of its hubness). Why: options are drawn from the answers of the same split, so
on out-of-fold train rows the wrong options are answers of the fitted folds (their own clue is
in the tables), while the right one never is; on val/test no option is a train answer. Without
this, LightGBM learns "seen in train = wrong", which is false at prediction time.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import product
from typing import Collection, Sequence

import numpy as np

from pictorank.encoders import Encoder
from pictorank.features.products import row_by_row
from pictorank.features.text import tokens
from pictorank.query import Query, joined_text

PMI = ("assoc_pmi_max", "assoc_pmi_sum", "assoc_answer_token_seen")
NEIGHBOURS = ("knn_weighted", "knn_max", "hint_first", "hint_rest", "hint_rest_mean", "hint_nn_first", "hint_nn_rest",
              "rev_clue", "rev_hints", "rev_first", "rev_rest", "rev_idf")  # one set per encoder space
PAIR = ("assoc_pair_centroid", "assoc_pair_nn", "assoc_pair_count")


def names(spaces: Sequence[str]) -> list[str]:
    """The columns `columns` makes for encoders named `spaces`, in order."""
    return [*PMI, *(f"assoc_{space}_{name}" for space in spaces for name in NEIGHBOURS), *PAIR]


# -- the tables learned from train ------------------------------------------------------------


@dataclass
class Reference:
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

    @classmethod
    def embed(cls, train: Sequence[Query], encoders: dict[str, Encoder]) -> "Reference":
        """The answered queries `train`, their joined clue texts and answers embedded by every encoder."""
        clue_texts, answers = [joined_text(q.hints) for q in train], [q.answer for q in train]
        return cls(
            answers=answers,
            clue_hints=[tuple(q.hints) for q in train],
            clue_vectors={space: enc.encode(clue_texts) for space, enc in encoders.items()},
            answer_vectors={space: enc.encode(answers) for space, enc in encoders.items()},
        )

    def rows_of(self, answer: str) -> list[int]:
        """Reference rows whose answer is `answer`."""
        return self._by_answer.get(answer, [])

    def rows_with_hint(self, description: str) -> np.ndarray:
        """Reference rows whose clue uses a pictogram with this description."""
        return self._by_hint.get(description, np.zeros(0, dtype=int))

    def forgetting(self, descriptions: Collection[str]) -> "Reference":
        """This reference as if `descriptions` had never been used by a train clue (the same
        clues, answers and vectors; only the lookups by description text miss them). Training
        builds rows this way to show the ranker what an unseen pictogram looks like."""
        forget = set(descriptions)
        return Reference(
            answers=self.answers,
            clue_hints=[tuple(h for h in hints if h not in forget) for hints in self.clue_hints],
            clue_vectors=self.clue_vectors,
            answer_vectors=self.answer_vectors,
        )


@dataclass
class TokenStats:
    """Co-occurrence counts of description tokens and answer tokens over train clues.

    `answer_hints` keeps each answer's clue tokens so that the rows answering an option can be
    taken out of the counts when that option is scored (see the module docs).
    """

    rows: int = 0
    hint_counts: dict[str, int] = field(default_factory=dict)
    answer_counts: dict[str, int] = field(default_factory=dict)
    pair_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    answer_hints: dict[str, list[list[str]]] = field(default_factory=dict)

    @classmethod
    def count(cls, train: Sequence[Query]) -> "TokenStats":
        hint_counts: Counter[str] = Counter()
        answer_counts: Counter[str] = Counter()
        pair_counts: Counter[tuple[str, str]] = Counter()
        answer_hints: dict[str, list[list[str]]] = {}
        for q in train:
            hint_tokens = sorted({t for h in q.hints for t in tokens(h)})
            answer_tokens = sorted(set(tokens(q.answer)))  # sorted: the saved counts are byte-reproducible
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


# -- the columns ------------------------------------------------------------------------------


def columns(
    q: Query, encoders: dict[str, Encoder], reference: Reference, token_stats: TokenStats,
    neighbours: int, min_pair_count: int, products: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The association columns of `q`'s options; `neighbours` train clues (or answers) are
    consulted by the nearest-neighbour columns, and rarer token pairs than `min_pair_count` get
    no PMI. `products`: each space's option x train answer cosines of `q`'s options, when the
    caller computed them for a whole batch (FeatureExtractor.transform does)."""
    cols = _pmi_columns(q, token_stats, min_pair_count)
    excluded = excluded_rows(q, reference)
    match = _clue_match(q, reference)
    option_answer: dict[str, np.ndarray] = {}
    for space, encoder in encoders.items():
        clue = encoder.encode([joined_text(q.hints)])[0]
        # Every column below reads these two products: option x train answer, clue x train clue.
        if products is not None:
            option_answer[space] = products[space]
        else:
            option_answer[space] = row_by_row(encoder.encode(list(q.options)), reference.answer_vectors[space])
        clue_clue = reference.clue_vectors[space] @ clue
        # The NEIGHBOURS columns: what train clues and answers say about each option in this space.
        space_cols = {
            **_clue_neighbour_columns(option_answer[space], clue_clue, excluded, neighbours),
            **_hint_answer_columns(q, reference, option_answer[space], reference.answer_vectors[space], excluded),
            **_reverse_neighbour_columns(option_answer[space], clue_clue, match, excluded, neighbours),
        }
        cols.update({f"assoc_{space}_{name}": values for name, values in space_cols.items()})
    cols.update(_pair_columns(q, reference, option_answer["base"], excluded))
    return cols


def excluded_rows(q: Query, reference: Reference) -> np.ndarray:
    """Mask of the train rows answered by one of `q`'s options (left out: see the module docs)."""
    excluded = np.zeros(len(reference.answers), dtype=bool)
    for option in q.options:
        excluded[reference.rows_of(option)] = True
    return excluded


def _pmi_columns(q: Query, token_stats: TokenStats, min_pair_count: int) -> dict[str, np.ndarray]:
    hint_tokens = {t for h in q.hints for t in tokens(h)}
    pmi = np.array([token_stats.option_values(hint_tokens, o, min_pair_count) for o in q.options])
    return {name: pmi[:, i] for i, name in enumerate(PMI)}


def _clue_match(q: Query, reference: Reference) -> dict[str, np.ndarray]:
    """For every train clue, how it shares this clue's descriptions (matched by text): the
    share of them it uses, whether it uses the first, any later one, and the idf-weighted
    share (a rare description shared says more than 'person')."""
    n = len(reference.answers)
    descriptions = list(dict.fromkeys(q.hints))
    idf = {h: max(0.0, math.log(n / (1 + len(reference.rows_with_hint(h))))) for h in descriptions}
    idf_total = sum(idf.values()) or 1.0
    shared, weighted, rest = np.zeros(n), np.zeros(n), np.zeros(n)
    for h in descriptions:
        rows = reference.rows_with_hint(h)  # distinct rows, so += counts each clue once
        shared[rows] += 1.0 / len(descriptions)
        weighted[rows] += idf[h] / idf_total
    for h in set(q.hints[1:]):
        rest[reference.rows_with_hint(h)] = 1.0
    first = np.zeros(n)
    first[reference.rows_with_hint(q.hints[0])] = 1.0
    return {"hints": shared, "first": first, "rest": rest, "idf": weighted}


def _clue_neighbour_columns(option_answer: np.ndarray, clue_clue: np.ndarray, excluded: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Clue neighbours: train clues like this one vote for options resembling their answers."""
    clue_sims = np.where(excluded, -1.0, clue_clue)
    nearest, weights = _soft_top(clue_sims[None, :], k)
    answer_sims = option_answer[:, nearest[0]]  # options x k
    return {
        "knn_weighted": answer_sims @ weights[0],
        "knn_max": (answer_sims * clue_sims[nearest[0]][None, :]).max(axis=1),
    }


def _hint_answer_columns(
    q: Query, reference: Reference, option_answer: np.ndarray, answer_vectors: np.ndarray, excluded: np.ndarray
) -> dict[str, np.ndarray]:
    """The option's cosine to the centroid of the answers of train clues using each of this
    clue's descriptions, and to the nearest of those answers.

    'country' + 'field' -> Poland: train answers built with 'field' are farms and meadows,
    and the country nearest to them wins. The first hint is kept apart (in Bliss it is the
    classifier, shared by hundreds of answers); of the later ones the best counts, and their
    mean. Descriptions are matched by text, so one never seen in train (or an unseen
    vocabulary) gives the neutral 0.
    """
    per_hint = [
        _centroid_and_nearest(option_answer, answer_vectors, _kept(reference.rows_with_hint(h), excluded))
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


def _reverse_neighbour_columns(
    option_answer: np.ndarray, clue_clue: np.ndarray, match: dict[str, np.ndarray], excluded: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    """Reverse neighbours: the train answers most like the option, and whether their clues
    look like this one (sow ~ boar, piglet, whose clues use 'pig', as this one does)."""
    near, w = _soft_top(np.where(excluded[None, :], -1.0, option_answer), k)
    cols = {"rev_clue": (w * clue_clue[near]).sum(axis=1)}
    for name, values in match.items():
        cols[f"rev_{name}"] = (w * values[near]).sum(axis=1)
    return cols


def _pair_columns(q: Query, reference: Reference, option_answer: np.ndarray, excluded: np.ndarray) -> dict[str, np.ndarray]:
    """Train clues sharing the first description and at least one later one with this clue
    (same classifier, same specifier): the option's cosine to their answers' centroid and to
    the nearest of them, and how many there are (0 = no such clue). Base space only."""
    later = np.concatenate([reference.rows_with_hint(h) for h in q.hints[1:]] or [np.zeros(0, dtype=int)])
    rows = _kept(np.intersect1d(reference.rows_with_hint(q.hints[0]), later), excluded)
    centroid, nearest = _centroid_and_nearest(option_answer, reference.answer_vectors["base"], rows)
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


def _soft_top(sims: np.ndarray, k: int, temperature: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `sims`, the indices of its k largest values and softmax weights over them
    (a low temperature: the nearest neighbour dominates unless others are nearly as close)."""
    k = min(k, sims.shape[1])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(sims, top, axis=1)
    weights = np.exp((values - values.max(axis=1, keepdims=True)) / temperature)
    return top, weights / weights.sum(axis=1, keepdims=True)
