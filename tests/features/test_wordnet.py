from __future__ import annotations

import numpy as np

from pictorank.features.wordnet import WORDNET_COLUMNS, queries_wordnet_columns, wordnet_columns
from pictorank.lexicon.facts import WordFacts
from pictorank.query import Query

FACTS = {
    "zebra": WordFacts((1, 0, 0, 0), "equine odd-toed ungulate mammal animal", "African wild horse with stripes"),
    "donkey": WordFacts((2, 0, 0, 0), "equine mammal animal", "domestic beast of burden"),
    "stripy": WordFacts((0, 0, 1, 0), "", "marked with stripes"),
}


def test_a_word_filed_under_the_first_hint_and_defined_by_the_others_meets_them_all():
    columns = queries_wordnet_columns([Query(("animal", "stripes", "horse"), ("zebra", "donkey", "stripy", "okapi"))], FACTS)
    assert set(columns) == set(WORDNET_COLUMNS)
    assert columns["wn_kind_first"].tolist()[:3] == [1.0, 1.0, 0.0]
    assert columns["wn_gloss_hints"][0] == 2 / 3  # "stripes" and "horse" in its gloss
    assert columns["wn_gloss_hints"][2] == 1 / 3  # "stripes" only, by stem
    assert columns["wn_gloss_first"][0] == 0.0
    assert columns["wn_nouns"].tolist()[:3] == [1.0, 2.0, 0.0] and columns["wn_adjectives"][2] == 1.0
    assert all(np.isnan(columns[name][3]) for name in WORDNET_COLUMNS)  # WordNet lacks it: missing, not zero


def test_the_columns_follow_the_options_of_many_queries_in_order_and_read_a_word_in_lower_case():
    queries = [Query(("horse",), ("Zebra",)), Query(("burden",), ("donkey", "zebra"))]
    columns = queries_wordnet_columns(queries, FACTS)
    assert columns["wn_gloss_first"].tolist() == [1.0, 1.0, 0.0]
    assert all(len(v) == 0 for v in queries_wordnet_columns([], FACTS).values())


def test_columns_of_no_candidates_are_empty():
    columns = wordnet_columns([frozenset({"horse"})], [], [], [])
    assert all(len(v) == 0 for v in columns.values())
