"""Fixtures of the feature tests: a toy train set and a fast stand-in encoder (no model load)."""

from __future__ import annotations

import re
import zlib
from typing import Any, Sequence

import numpy as np
import pytest

from pictorank.encoders import Encoder
from pictorank.query import Query


class WordHashModel:
    """Stands in for a SentenceTransformer: a text's vector is the normalised sum of fixed random
    vectors of its words, so texts sharing words are close and the real model need not load."""

    dimension = 32

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        return np.stack([self._vector(text) for text in texts])

    def _vector(self, text: str) -> np.ndarray:
        words = re.findall(r"[a-z0-9]+", text.lower()) or [""]
        v = sum(np.random.default_rng(zlib.crc32(w.encode())).normal(size=self.dimension) for w in words)
        return v / np.linalg.norm(v)


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
