"""The ``wn_*`` columns: how a candidate word's WordNet entry meets the clue, for open play's
ranker (pictorank.open_play).

A Bliss clue names its answer's kind first (animal + stripes + horse: a zebra is an animal) and
what sets it apart after, which is how a dictionary defines a word. So a candidate filed under a
hint's word (one of its hypernyms) or defined with it (its gloss) is more likely the answer than
one merely near the clue in an embedding space; how many senses the word has in each part of
speech tells what kind of word it is (the game's answers are mostly nouns). The facts come from
pictorank.lexicon.facts; a word WordNet lacks gets NaN (missing, for LightGBM).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pictorank.lexicon.facts import WordFacts, facts_of, stems_of
from pictorank.query import Query

WORDNET_COLUMNS = ("wn_nouns", "wn_verbs", "wn_adjectives", "wn_adverbs",
                   "wn_kind_hints", "wn_kind_first", "wn_gloss_hints", "wn_gloss_first")


def wordnet_columns(hints: Sequence[frozenset[str]], senses: Sequence[tuple[int, ...] | None],
                    kinds: Sequence[frozenset[str]], defined_by: Sequence[frozenset[str]]) -> dict[str, np.ndarray]:
    """Each candidate's sense counts, and the share of the hints (`hints`: each hint's word
    stems) and whether the first hint shares a stem with its hypernyms' words (`kinds`) or its
    gloss's (`defined_by`); NaN where `senses` is None (a word WordNet lacks)."""
    known = np.array([s is not None for s in senses], dtype=bool)
    counts = np.array([s if s is not None else (0, 0, 0, 0) for s in senses], dtype=np.float64).reshape(-1, 4)
    columns = {name: counts[:, i].copy() for i, name in enumerate(WORDNET_COLUMNS[:4])}
    for name, words in (("kind", kinds), ("gloss", defined_by)):
        met = np.array([[bool(h & w) for h in hints] for w in words], dtype=np.float64).reshape(len(words), len(hints))
        columns[f"wn_{name}_hints"] = met.mean(axis=1) if len(hints) else np.zeros(len(words))
        columns[f"wn_{name}_first"] = met[:, 0] if len(hints) else np.zeros(len(words))
    for values in columns.values():
        values[~known] = np.nan
    return columns


def queries_wordnet_columns(queries: Sequence[Query], facts: Mapping[str, WordFacts]) -> dict[str, np.ndarray]:
    """WORDNET_COLUMNS of every query's options, concatenated in order, from `facts`
    (pictorank.lexicon.facts.default_facts(), or a smaller table in tests)."""
    columns = []
    for q in queries:
        found = [facts_of(o, facts) for o in q.options]
        columns.append(wordnet_columns([stems_of(h) for h in q.hints], [f.senses if f else None for f in found],
                                       [f.kinds if f else frozenset() for f in found],
                                       [f.defined_by if f else frozenset() for f in found]))
    return {name: np.concatenate([c[name] for c in columns]) if columns else np.zeros(0) for name in WORDNET_COLUMNS}
