"""An encoder shared between threads: a long job (the clue model's fit) encodes through it while
short requests use the same encoder between its chunks."""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from pictorank.encoders.memo import Encoder


class Cancelled(Exception):
    """The `stop` event of a LockedEncoder was set: its user is shutting down."""


class LockedEncoder:
    """`encoder`, used under `lock` one chunk of strings at a time.

    The encoder's memo is not thread-safe, so every user holds the lock; a fit encodes thousands
    of strings, and a request must never wait for more than one chunk of them.
    """

    CHUNK = 32  # strings per lock hold: one encoder batch

    def __init__(self, encoder: Encoder, lock: threading.Lock, stop: threading.Event | None = None) -> None:
        self.encoder = encoder
        self.lock = lock
        self.stop = stop  # set when the owner shuts down: the job gives up at the next chunk

    @property
    def model_id(self) -> str:
        return self.encoder.model_id

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = list(texts)
        parts = []
        for start in range(0, len(texts), self.CHUNK):
            if self.stop is not None and self.stop.is_set():
                raise Cancelled("shutting down")
            with self.lock:
                parts.append(self.encoder.encode(texts[start : start + self.CHUNK]))
        if not parts:
            with self.lock:
                return self.encoder.encode(texts)
        return np.concatenate(parts)
