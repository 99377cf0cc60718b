"""Vectors an encoder made ahead of time for a large fixed set of strings, kept small.

A model folder stores its lexicon's embeddings (~75,000 words) so that a service neither encodes
them at start-up nor when a request's candidates are lexicon words. Each vector is kept as int8
codes with its own scale (its largest component maps to 127): a quarter of float32's memory, and
far closer to the float vector than one scale for all would be, since a unit vector's components
are small.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_LEVELS = 127.0
_LOOKUP_ROWS = 4096  # rows `lookup` turns into floats at a time


class StoredVectors:
    """Unit vectors of `texts`, quantised per row; `get` gives one back as float32, unit length.

    Parameters
    ----------
    texts : the strings, in row order.
    codes : int8 array (len(texts), dimension).
    scales : float32 array (len(texts),): a row's float vector is codes * scale.
    """

    def __init__(self, texts: Sequence[str], codes: np.ndarray, scales: np.ndarray) -> None:
        if codes.dtype != np.int8 or codes.ndim != 2 or len(codes) != len(texts) or scales.shape != (len(texts),):
            raise ValueError(f"{len(texts)} texts need int8 codes of {len(texts)} rows and as many scales, "
                             f"not {codes.dtype} {codes.shape} and {scales.shape}")
        self.texts = tuple(texts)
        self.codes = codes
        self.scales = scales.astype(np.float32)
        self._rows = {text: row for row, text in enumerate(self.texts)}

    @classmethod
    def quantize(cls, texts: Sequence[str], vectors: np.ndarray) -> "StoredVectors":
        vectors = np.asarray(vectors, dtype=np.float32)
        scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / _LEVELS
        codes = np.clip(np.round(vectors / scales[:, None]), -_LEVELS, _LEVELS).astype(np.int8)
        return cls(texts, codes, scales.astype(np.float32))

    def __len__(self) -> int:
        return len(self.texts)

    def __contains__(self, text: object) -> bool:
        return text in self._rows

    def get(self, text: str) -> np.ndarray | None:
        """The text's unit vector, or None when it is not stored."""
        row = self._rows.get(text)
        return None if row is None else _unit(self.codes[row : row + 1].astype(np.float32) * self.scales[row])[0]

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The unit vectors of `texts` as float32 rows (zeros for a text not stored), and which
        texts are stored."""
        rows = np.array([self._rows.get(text, -1) for text in texts], dtype=np.int64)
        found = rows >= 0
        vectors = np.zeros((len(texts), self.codes.shape[1]), np.float32)
        at = np.flatnonzero(found)
        for start in range(0, len(at), _LOOKUP_ROWS):  # a chunk's float temporaries at a time, not a lexicon's
            part = rows[at[start : start + _LOOKUP_ROWS]]
            vectors[at[start : start + _LOOKUP_ROWS]] = _unit(self.codes[part].astype(np.float32) * self.scales[part, None])
        return vectors, found

    def all(self) -> np.ndarray:
        """Every row as float32 unit vectors (for an index over them)."""
        return _unit(self.codes.astype(np.float32) * self.scales[:, None])


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
