"""Hubness columns: an option's closeness to every train clue (not its own), memoised."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features import hubness
from pictorank.features.associations import Reference
from pictorank.features.hubness import HubnessMemo
from pictorank.query import Query, joined_text


def test_hubness_is_the_nearest_train_clues_but_the_options_own(toy_train, word_encoder):
    reference = Reference.embed(toy_train, {"base": word_encoder, "ft": word_encoder})
    memo = HubnessMemo(reference, k=2)
    sims = reference.clue_vectors["base"] @ word_encoder.encode(["boat"])[0]
    others = np.delete(sims, reference.rows_of("boat"))  # boat answered row 2
    assert memo.of(word_encoder, ["boat"])[0] == pytest.approx(np.sort(others)[-2:].mean())


def test_hubness_is_computed_once_per_option(toy_train, word_encoder):
    memo = HubnessMemo(Reference.embed(toy_train, {"base": word_encoder}), k=2)
    memo.warm(word_encoder, ["boat", "ship"])
    memo.values["boat"] = 7.0
    assert memo.of(word_encoder, ["boat", "ship"])[0] == 7.0


def test_csls_subtracts_hubness_from_twice_the_clue_cosine(toy_train, word_encoder):
    memo = HubnessMemo(Reference.embed(toy_train, {"base": word_encoder}), k=2)
    q = Query(("vehicle", "water, sea"), ("ship", "lorry"))
    cols = hubness.columns(q, word_encoder, memo)
    joined = word_encoder.encode(list(q.options)) @ word_encoder.encode([joined_text(q.hints)])[0]
    assert cols["hub_csls"] == pytest.approx(2 * joined - cols["hub_option"])


def test_memo_is_bounded_and_still_right_after_forgetting(toy_train, word_encoder):
    """A server meets new options forever: the memo forgets the least recently used ones."""
    reference = Reference.embed(toy_train, {"base": word_encoder})
    options = ["boat", "ship", "lorry", "car", "bread", "sunflower"]
    full = HubnessMemo(reference, k=2).of(word_encoder, options)
    small = HubnessMemo(reference, k=2, max_size=3)
    np.testing.assert_allclose(small.of(word_encoder, options), full)
    assert len(small.values) == 3
    np.testing.assert_allclose(small.of(word_encoder, options[:2]), full[:2], rtol=1e-6)
    assert len(small.values) == 3
