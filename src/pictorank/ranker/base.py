"""The interface every ranker follows, and the loop that ranks a whole file of puzzles.

Like a fitted scikit-learn estimator: constructor arguments are the parameters, `score`/`rank`
use it, and `save` writes a directory with a JSON config (`ranker.json`) that
:func:`pictorank.ranker.registry.load_ranker` reads back. Learning happens elsewhere
(:mod:`pictorank.train`), so a served ranker carries no training code.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np
from tqdm import tqdm

from pictorank.artifacts import library_versions, write_json
from pictorank.encoders import Encoder, Encoders
from pictorank.errors import ModelError
from pictorank.puzzles import HintVocabulary, Puzzle, to_queries
from pictorank.query import Query
from pictorank.ranker.calibration import Calibrator
from pictorank.ranker.explain import Explanation, hint_similarities, similarity_explanation
from pictorank.ranker.ranking import Ranking

CONFIG_FILE = "ranker.json"


class Ranker(ABC):
    """Common interface: score / rank / save (and `from_config`, used by load_ranker)."""

    method: ClassVar[str]
    calibrator: Calibrator | None = None  # P(first option is the answer); see ranker.calibration

    @abstractmethod
    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        """One score per option of each query; higher means more likely the answer."""

    def rank(self, queries: Sequence[Query], explain: int = 0) -> list[Ranking]:
        """Every option of each query, most likely first (ties keep the input order), with its
        score, the probability that the first is the answer (None without a calibration) and,
        for `explain` > 0, explanations of the first `explain` options.

        Here, for rankers that score by similarity to the whole clue, an explanation is each
        hint's cosine to the option, from the ranker's first encoder (its embeddings are cached by
        then); a ranker without an encoder has nothing to explain with: its explanations are
        empty. A ranker whose confidence or explanations need more than the final scores (the
        learned ranker's features and blend) overrides it."""
        encoders = self.encoders() if explain > 0 else []
        rankings = []
        for query, row in zip(queries, self.score(queries)):
            options, scores = _ordered(query, row)
            explanations: list[Explanation] = []
            if encoders:
                shown = options[:explain]
                sims = hint_similarities(encoders[0].encode(shown), encoders[0].encode(list(query.hints)))
                explanations = [similarity_explanation(o, query.hints, s, sc) for o, s, sc in zip(shown, sims, scores)]
            rankings.append(Ranking(options, scores, self.confidence(scores), explanations))
        return rankings

    def confidence(self, scores: Sequence[float]) -> float | None:
        """The calibrated probability that a ranking's first option is the answer (scores best
        first), or None when this ranker has no calibration."""
        return None if self.calibrator is None else self.calibrator.probability(scores)

    def prepare(self, options: Sequence[str]) -> None:
        """Compute now what ranking `options` will need (a server calls this at start-up with its
        vocabulary, so a request over known words encodes only its clue): here, their embeddings
        in every encoder of the ranker."""
        for encoder in self.encoders():
            encoder.encode(list(dict.fromkeys(options)))

    @abstractmethod
    def encoders(self) -> list[Encoder]:
        """The encoders this ranker reads embeddings from (a batch job flushes their disk caches)."""

    def get_params(self) -> dict[str, Any]:
        return {}

    @classmethod
    def load_encoders(cls, config: dict[str, Any], directory: Path, base: Encoder | None = None,
                      runtime: str = "onnx", threads: int | None = None) -> Encoders:
        """The encoders a saved ranker of this class reads: here the base model's, `base` when given."""
        return Encoders(base or Encoder())

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path, encoders: Encoders) -> "Ranker":
        """The ranker a saved `ranker.json` describes; rankers without parameters accept none."""
        params = config.get("params", {})
        if params:
            raise ModelError(f"{directory / CONFIG_FILE}: {cls.method!r} takes no parameters, found {_named(params)}")
        return cls(encoder=encoders.base)  # type: ignore[call-arg]

    def save(self, directory: str | os.PathLike) -> None:
        """Write the ranker's config (method, parameters, versions) to `directory`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        config = {"method": self.method, "params": self.get_params(), "versions": library_versions()}
        write_json(directory / CONFIG_FILE, config)


def rank_puzzles(
    ranker: Ranker, puzzles: Sequence[Puzzle], vocab: HintVocabulary, progress: bool = False, chunk: int = 256
) -> list[list[str]]:
    """Full rankings of `puzzles`, in chunks so a progress bar can follow long runs.

    A chunk's strings are encoded together, then read back query by query: a chunk also stops
    short of half the smallest encoder memo, so that none is forgotten (and encoded again) in
    between, whatever the rows' number of options."""
    queries = to_queries(puzzles, vocab)
    budget = min((e.max_cached for e in ranker.encoders()), default=None)
    rankings: list[list[str]] = []
    with tqdm(total=len(queries), desc=f"ranking ({ranker.method})", unit="row", disable=not progress) as bar:
        for part in chunks(queries, chunk, None if budget is None else max(1, budget // 2)):
            rankings.extend(r.options for r in ranker.rank(part))
            bar.update(len(part))
    return rankings


def chunks(queries: Sequence[Query], rows: int, texts: int | None = None) -> list[Sequence[Query]]:
    """`queries` cut into consecutive runs of at most `rows` queries and at most `texts` strings
    (a query's options and hints, plus its two clue texts); a query larger than `texts` runs alone."""
    parts: list[Sequence[Query]] = []
    start, count = 0, 0
    for end, query in enumerate(queries):
        size = len(query.options) + len(query.hints) + 2
        if end > start and (end - start >= rows or (texts is not None and count + size > texts)):
            parts.append(queries[start:end])
            start, count = end, 0
        count += size
    if start < len(queries):
        parts.append(queries[start:])
    return parts


def _ordered(query: Query, scores: Sequence[float]) -> tuple[list[str], list[float]]:
    """`query`'s options and their scores, highest first (a stable sort: ties keep the input order)."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    return [query.options[i] for i in order], [float(scores[i]) for i in order]


def _named(params: Any) -> str:
    """A few of the names found, not their values: a line of error, not a dump of a learned model's
    feature list."""
    if not isinstance(params, dict):
        return f"a {type(params).__name__}"
    names = [repr(str(name)[:40]) for name in list(params)[:3]]
    more = f" and {len(params) - 3} more" if len(params) > 3 else ""
    return ", ".join(names) + more
