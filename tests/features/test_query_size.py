"""Query-size columns: the same value for every option of a query."""

from __future__ import annotations

from pictorank.features import query_size
from pictorank.query import Query


def test_query_size_is_repeated_for_every_option():
    cols = query_size.columns(Query(("a", "b", "c"), ("x", "y")))
    assert cols["q_hints"].tolist() == [3.0, 3.0]
    assert cols["q_options"].tolist() == [2.0, 2.0]
