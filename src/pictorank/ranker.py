"""Rankers: the task's `seed` baseline and the `cosine` ranker, behind one interface.

Every ranker works on :class:`Query` objects (hint *texts*, not ids), so the same code serves
any pictogram vocabulary and free-text hints alike. The interface follows scikit-learn:
constructor arguments are the parameters, `fit` learns (a no-op for unlearned rankers),
`score`/`rank` use, and `save`/`load` round-trip a directory holding a JSON config.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from pictorank.data import HintVocabulary, Puzzle
from pictorank.encoder import Encoder

CONFIG_FILE = "ranker.json"


class ModelError(ValueError):
    """A model directory is missing, corrupt or made by incompatible versions."""


@dataclass(frozen=True)
class Query:
    """What a ranker sees: hint descriptions in clue order, candidate options, maybe the answer."""

    hints: tuple[str, ...]
    options: tuple[str, ...]
    answer: str | None = None


def to_queries(puzzles: Sequence[Puzzle], vocab: HintVocabulary) -> list[Query]:
    """Replace hint ids by their descriptions."""
    return [Query(tuple(vocab.describe(p.hints)), p.options, p.answer) for p in puzzles]


def seed_text(hints: Sequence[str]) -> str:
    """The task statement's baseline template: all hints in one tagged sentence, main idea first."""
    lines = ["The following hints at our target word:", f"<HINT_PRIMARY>{hints[0]}</HINT_PRIMARY>"]
    lines += [f"<HINT>{hint}</HINT>" for hint in hints[1:]]
    return "\n".join(lines)


def joined_text(hints: Sequence[str]) -> str:
    """All hint descriptions in order as one plain string."""
    return "; ".join(hints)


def pool(vectors: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Position-weighted mean of per-hint unit vectors, renormalised to unit length.

    `weights[i]` weighs the i-th hint; hints past the end of `weights` take its last value.
    """
    n = len(vectors)
    w = np.array([weights[min(i, len(weights) - 1)] for i in range(n)], dtype=np.float32)
    pooled = (w[:, None] * vectors).sum(axis=0)
    norm = np.linalg.norm(pooled)
    return pooled / norm if norm > 0 else pooled


class Ranker(ABC):
    """Common interface: fit / score / rank / save / load."""

    method: ClassVar[str]

    @abstractmethod
    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        """One score per option of each query; higher means more likely the answer."""

    def fit(self, queries: Sequence[Query]) -> "Ranker":
        """Unlearned rankers have nothing to learn."""
        return self

    def rank(self, queries: Sequence[Query]) -> list[list[str]]:
        """Every option of each query, most likely first (ties keep the input order)."""
        return [ranked for ranked, _ in self.rank_with_scores(queries)]

    def rank_with_scores(self, queries: Sequence[Query]) -> list[tuple[list[str], list[float]]]:
        results = []
        for query, scores in zip(queries, self.score(queries)):
            order = np.argsort(-np.asarray(scores), kind="stable")
            results.append(([query.options[i] for i in order], [float(scores[i]) for i in order]))
        return results

    def get_params(self) -> dict[str, Any]:
        return {}

    def save(self, directory: str | os.PathLike) -> None:
        """Write the ranker's config (method, parameters, versions) to `directory`."""
        from pictorank.versions import library_versions

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        config = {"method": self.method, "params": self.get_params(), "versions": library_versions()}
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path, encoder: Encoder | None) -> "Ranker":
        return cls(encoder=encoder, **config.get("params", {}))


class SeedRanker(Ranker):
    """The task statement's baseline, reproduced as the reference.

    One row at a time, as the task's script does: the hints wrapped in a tagged template are
    encoded as one sentence and the options are ranked by cosine similarity to it.
    """

    method = "seed"

    def __init__(self, encoder: Encoder | None = None) -> None:
        self.encoder = encoder or Encoder()

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        scores = []
        for query in queries:
            clue = self.encoder.encode([seed_text(query.hints)])[0]
            scores.append(self.encoder.encode(list(query.options)) @ clue)
        self.encoder.flush()  # persist the last rows' strings too
        return scores


class CosineRanker(Ranker):
    """Options ranked by cosine similarity to a pooled embedding of the clue.

    Parameters
    ----------
    pooling : "joined" encodes all descriptions as one string (the best unlearned setting on
              train, see bench/batch.py); "weighted" pools per-hint embeddings with
              `position_weights`.
    position_weights : weight of the hint at each position (main idea first); the last value
              covers later positions. The classifier pictogram is often generic ('animal'),
              so equal weights are a better default than favouring it (see bench/batch.py).
    """

    method = "cosine"

    def __init__(
        self,
        encoder: Encoder | None = None,
        pooling: str = "joined",
        position_weights: Sequence[float] = (1.0,),
    ) -> None:
        if pooling not in ("weighted", "joined"):
            raise ValueError(f"pooling must be 'weighted' or 'joined', not {pooling!r}")
        if not position_weights or any(w < 0 for w in position_weights):
            raise ValueError("position_weights must be a non-empty list of non-negative numbers")
        self.encoder = encoder or Encoder()
        self.pooling = pooling
        self.position_weights = tuple(float(w) for w in position_weights)

    def get_params(self) -> dict[str, Any]:
        return {"pooling": self.pooling, "position_weights": list(self.position_weights)}

    def clue_texts(self, query: Query) -> list[str]:
        return [joined_text(query.hints)] if self.pooling == "joined" else list(query.hints)

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        # Encode every distinct string of the whole batch at once, then rank with numpy.
        self.encoder.warm(s for q in queries for s in (*self.clue_texts(q), *q.options))
        scores = []
        for query in queries:
            clue = pool(self.encoder.encode(self.clue_texts(query)), self.position_weights)
            scores.append(self.encoder.encode(list(query.options)) @ clue)
        return scores


UNLEARNED = {cls.method: cls for cls in (SeedRanker, CosineRanker)}


def rank_puzzles(
    ranker: Ranker, puzzles: Sequence[Puzzle], vocab: HintVocabulary, progress: bool = False, chunk: int = 256
) -> list[list[str]]:
    """Full rankings of `puzzles`, in chunks so a progress bar can follow long runs."""
    from tqdm import tqdm

    queries = to_queries(puzzles, vocab)
    rankings: list[list[str]] = []
    with tqdm(total=len(queries), desc=f"ranking ({ranker.method})", unit="row", disable=not progress) as bar:
        for start in range(0, len(queries), chunk):
            rankings.extend(ranker.rank(queries[start : start + chunk]))
            bar.update(len(queries[start : start + chunk]))
    return rankings


def make_ranker(method: str, encoder: Encoder | None = None) -> Ranker:
    """A ranker by method name, with its default parameters."""
    if method not in UNLEARNED:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(UNLEARNED)}")
    return UNLEARNED[method](encoder=encoder)


def load_ranker(directory: str | os.PathLike, encoder: Encoder | None = None) -> Ranker:
    """Load any saved ranker, checking its config before trusting it."""
    from pictorank.versions import check_versions

    directory = Path(directory)
    config_path = directory / CONFIG_FILE
    if not config_path.is_file():
        raise ModelError(f"{directory}: not a pictorank model directory (no {CONFIG_FILE})")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
        method = config["method"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise ModelError(f"{config_path}: corrupt model config ({exc})") from None
    check_versions(config.get("versions", {}), config_path)
    from pictorank.learned import LearnedRanker

    registry = {**UNLEARNED, LearnedRanker.method: LearnedRanker}
    if method not in registry:
        raise ModelError(f"{config_path}: unknown method {method!r}")
    try:
        return registry[method].from_config(config, directory, encoder)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"{config_path}: invalid parameters ({exc})") from None
