"""Fixtures of the feature tests: a toy train set and a fast stand-in encoder (no model load)."""

from __future__ import annotations

import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder
from pictorank.query import Query


@pytest.fixture(scope="session")
def word_encoder() -> Encoder:
    """An Encoder (with its real caching) over WordHashModel."""
    return Encoder(model=WordHashModel(), model_id="word-hash-test")


@pytest.fixture
def toy_train() -> list[Query]:
    """Five answered clues; 'night flower' and 'water lily' share descriptions with others."""
    return [
        Query(("flower", "sun"), ("sunflower", "car", "bread", "boat"), "sunflower"),
        Query(("flower", "water, sea"), ("water lily", "car", "bread", "boat"), "water lily"),
        Query(("vehicle", "water, sea"), ("boat", "car", "bread", "water lily"), "boat"),
        Query(("vehicle", "road"), ("car", "boat", "bread", "sunflower"), "car"),
        Query(("flower", "night"), ("night flower", "car", "boat", "bread"), "night flower"),
    ]
