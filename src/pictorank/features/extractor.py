"""`FeatureExtractor`: the feature table of queries, composed from one module per feature group.

Everything here works on hint *texts*, never on ids, so a model trained on Bliss pictograms
can rank clues from any other vocabulary. Column names carry their group as a prefix, which is
what the ablations of bench/quality.py drop; each group's module declares the names of the
columns it makes next to the code that makes them:

- ``base_*`` / ``ft_*`` (cosine.py): cosine similarities from the base and the fine-tuned
  encoder (several poolings, per-hint statistics, rank and gap to the row's best);
- ``lex_*`` (lexical.py): surface links between the option and the descriptions;
- ``q_*`` (query_size.py): size of the query;
- ``assoc_*`` (associations.py): associations learned from the training clues;
- ``hub_*`` (hubness.py): hubness of the option (how close it is to every clue, CSLS-style),
  in both spaces;
- ``fam_*`` (familiarity.py): how far the clue and its options lie from the training data, so
  the ranker can tell an unseen vocabulary from home.

The columns of the last two groups came after the others and are appended at the end:
a model trained before them reads the first 85 columns and still loads.

`FeatureExtractor.fit` learns the position weights (pooling.py), the association tables and the
reference sets from training queries; `transform` only looks things up, so one 30-option query
costs a few milliseconds once its embeddings are cached.
"""

from __future__ import annotations

import functools
import json
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Sequence

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from pictorank.artifacts import read_json, write_json
from pictorank.encoders import Encoder
from pictorank.errors import ModelError, NotFittedError
from pictorank.features import associations, cosine, familiarity, hubness, lexical, query_size
from pictorank.features.associations import Reference, TokenStats
from pictorank.features.hubness import HubnessMemo
from pictorank.features.pooling import fit_position_weights
from pictorank.features.products import row_by_row
from pictorank.query import Query, joined_text, seed_text

SPACES = ("base", "ft")  # the encoders' names, as in `FeatureExtractor.encoders()`


def feature_names() -> list[str]:
    """The columns of `FeatureExtractor.transform`, in order: a saved model must match them."""
    return [
        *(name for space in SPACES for name in cosine.names(space)),
        *lexical.NAMES,
        *query_size.NAMES,
        *associations.names(SPACES),
        *hubness.NAMES,
        *(name for space in SPACES[1:] for name in hubness.names(space)),
        *familiarity.NAMES,
    ]


def selected_features(drop_groups: Sequence[str]) -> list[str]:
    """The feature columns a model with these ablations uses, in the code's order."""
    return [n for n in feature_names() if not any(n.startswith(g) for g in drop_groups)]


@dataclass
class FeatureExtractor:
    """Builds the feature table of queries.

    Parameters
    ----------
    base_encoder : the untouched sentence encoder.
    finetuned_encoder : the contrastively fine-tuned encoder; None repeats the base encoder's
        values in the ``ft_*`` columns so the column list never changes.
    neighbours : train clues consulted by the nearest-clue association features.
    hub_k : nearest train clues averaged for an option's hubness.
    min_pair_count : a (description token, answer token) pair must co-occur this often in
        train to get a PMI; rarer pairs are noise.

    Train rows whose answer is the option being scored are left out of every association
    feature of that option, and of its hubness (why: see pictorank.features.associations).
    """

    base_encoder: Encoder
    finetuned_encoder: Encoder | None = None
    neighbours: int = 10
    hub_k: int = 10
    min_pair_count: int = 2
    position_weights_: dict[int, list[float]] = field(default_factory=dict)
    token_stats_: TokenStats = field(default_factory=TokenStats)
    reference_: Reference | None = None
    hubness_: dict[str, HubnessMemo] | None = field(default=None, repr=False)  # one memo per space

    POOLING_FILE = "pooling.json"
    ASSOCIATIONS_FILE = "associations.json"
    REFERENCE_FILE = "reference.npz"

    def encoders(self) -> dict[str, Encoder]:
        """The encoder of each space of SPACES; without a fine-tuned one, 'ft' is the base."""
        return {"base": self.base_encoder, "ft": self.finetuned_encoder or self.base_encoder}

    # -- fit ----------------------------------------------------------------------------------
    def fit(self, queries: Sequence[Query], position_weights: dict[int, list[float]] | None = None) -> "FeatureExtractor":
        """Learn position weights, token associations and the reference clue set from `queries`."""
        train = [q for q in queries if q.answer is not None]
        if not train:
            raise ValueError("FeatureExtractor.fit needs queries with answers")
        self.position_weights_ = position_weights or fit_position_weights(train, self.base_encoder)
        self.token_stats_ = TokenStats.count(train)
        self._set_reference(Reference.embed(train, self.encoders()))
        return self

    def forgetting(self, descriptions: Collection[str]) -> "FeatureExtractor":
        """A copy whose train tables have never seen `descriptions` (matched by text): their
        description lookups miss, as they do for a pictogram of another vocabulary. The encoders,
        position weights and token counts are shared with this extractor."""
        if self.reference_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; call fit() or load() first")
        copy = FeatureExtractor(self.base_encoder, self.finetuned_encoder, self.neighbours, self.hub_k, self.min_pair_count)
        copy.position_weights_ = self.position_weights_
        copy.token_stats_ = self.token_stats_
        copy._set_reference(self.reference_.forgetting(descriptions))
        return copy

    def _set_reference(self, reference: Reference) -> None:
        """Use `reference`, with a fresh hubness memo (the memo is only valid for its reference)."""
        self.reference_ = reference
        self.hubness_ = {space: HubnessMemo(reference, self.hub_k, max_size=self.base_encoder.max_cached, space=space)
                        for space in SPACES}

    def prepare(self, options: Collection[str]) -> None:
        """Encode `options` with both encoders and memoise their hubness (a server's vocabulary)."""
        if self.hubness_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; call fit() or load() first")
        distinct = sorted(set(options))
        for space, encoder in self.encoders().items():
            encoder.encode(distinct)
            self.hubness_[space].warm(encoder, distinct)

    # -- transform ----------------------------------------------------------------------------
    def transform(self, queries: Sequence[Query], needed: Collection[str] | None = None) -> pd.DataFrame:
        """One row per (query, option), in query order then option order.

        `needed`: the columns the caller reads (default all). When none of the seed template's
        columns is among them, the template is never encoded (the clue's costliest string) and
        those columns hold zeros.
        """
        if self.reference_ is None or self.hubness_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; call fit() or load() first")
        with_seed = needed is None or any(n in set(needed) for space in SPACES for n in cosine.seed_names(space))
        texts = {s for q in queries for s in (*q.hints, *q.options, joined_text(q.hints))}
        if with_seed:
            texts |= {seed_text(q.hints) for q in queries}
        encode_side_by_side(self.encoders().values(), sorted(texts))
        # Features come from many small matrix products (a clue against the train reference):
        # waking a BLAS thread pool for each costs more than the work, far more on a busy machine.
        options = sorted({o for q in queries for o in q.options})
        with _one_blas_thread():
            # One product per space for the whole batch, on one BLAS thread too: for one request's
            # 30 options, waking the pool cost far more than the product on a busy machine.
            products = _OptionAnswers(options, self.encoders(), self.reference_)
            for space, encoder in self.encoders().items():
                self.hubness_[space].warm(encoder, options)
            blocks = [self._query_block(q, self.reference_, self.hubness_, with_seed, products) for q in queries]
        names = feature_names()
        matrix = np.vstack([np.column_stack([b[n] for n in names]) for b in blocks]) if blocks else np.zeros((0, len(names)))
        return pd.DataFrame(matrix.astype(np.float32), columns=names)

    def _query_block(self, q: Query, reference: Reference, memos: dict[str, HubnessMemo],
                     with_seed: bool = True, products: "_OptionAnswers | None" = None) -> dict[str, np.ndarray]:
        """Every group's columns of one query (one value per option)."""
        encoders = self.encoders()
        option_answer = products.of(q.options) if products is not None else None
        cols: dict[str, np.ndarray] = {}
        for space, encoder in encoders.items():
            cols.update(cosine.columns(space, encoder, q, self.position_weights_, with_seed))
        cols.update(lexical.columns(q))
        cols.update(query_size.columns(q))
        cols.update(associations.columns(q, encoders, reference, self.token_stats_, self.neighbours, self.min_pair_count,
                                         option_answer))
        for space, encoder in encoders.items():
            cols.update(hubness.columns(q, encoder, memos[space]))
        cols.update(familiarity.columns(q, self.base_encoder, reference, option_answer["base"] if option_answer else None))
        return cols

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write what `fit` learned into `directory` (three files; the encoders are saved by their owner).

        pooling.json       learned position weights (by clue length)
        associations.json  token co-occurrence counts learned from train (PMI is computed from them)
        reference.npz      train answers, their clues' descriptions, and both encoders' embeddings
        """
        if self.reference_ is None:
            raise NotFittedError("FeatureExtractor is not fitted; nothing to save")
        pooling = {"position_weights": {str(k): v for k, v in self.position_weights_.items()},
                   "note": "weight of each hint position, by clue length (key 4 = 4 or more hints)"}
        write_json(directory / self.POOLING_FILE, pooling)
        params = {"neighbours": self.neighbours, "hub_k": self.hub_k, "min_pair_count": self.min_pair_count}
        write_json(directory / self.ASSOCIATIONS_FILE, {"params": params, **_stats_to_json(self.token_stats_)}, indent=None)
        _save_reference(directory / self.REFERENCE_FILE, self.reference_)

    @classmethod
    def load(cls, directory: Path, base_encoder: Encoder, finetuned_encoder: Encoder | None) -> "FeatureExtractor":
        """The extractor `save` wrote into `directory`; a damaged file is a ModelError naming it."""
        pooling = read_json(directory / cls.POOLING_FILE)
        tables = read_json(directory / cls.ASSOCIATIONS_FILE)
        try:
            reference = _load_reference(directory / cls.REFERENCE_FILE)
            params = tables["params"]
            extractor = cls(base_encoder, finetuned_encoder, neighbours=int(params["neighbours"]),
                            hub_k=int(params["hub_k"]), min_pair_count=int(params["min_pair_count"]))
            extractor.position_weights_ = {
                int(k): [float(w) for w in v] for k, v in pooling["position_weights"].items()
            }
            extractor.token_stats_ = _stats_from_json(tables)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelError(f"{directory}: corrupt feature tables ({type(exc).__name__}: {exc})") from None
        extractor._set_reference(reference)
        return extractor


# -- file formats -----------------------------------------------------------------------------


def _stats_to_json(stats: TokenStats) -> dict[str, Any]:
    """The token counts as JSON (pairs as sorted [hint, answer, count] lists: JSON keys are strings)."""
    return {
        "rows": stats.rows,
        "hint_counts": stats.hint_counts,
        "answer_counts": stats.answer_counts,
        "pair_counts": sorted([h, a, c] for (h, a), c in stats.pair_counts.items()),
        "answer_hints": stats.answer_hints,
    }


def _stats_from_json(tables: dict[str, Any]) -> TokenStats:
    """The counts `_stats_to_json` wrote, with their types checked by conversion."""
    return TokenStats(
        rows=int(tables["rows"]),
        hint_counts={str(k): int(v) for k, v in tables["hint_counts"].items()},
        answer_counts={str(k): int(v) for k, v in tables["answer_counts"].items()},
        pair_counts={(str(h), str(a)): int(c) for h, a, c in tables["pair_counts"]},
        answer_hints={str(k): [list(map(str, t)) for t in v] for k, v in tables["answer_hints"].items()},
    )


def _save_reference(path: Path, ref: Reference) -> None:
    """One array per space and kind (``base_clue_vectors``...); each clue's descriptions as JSON text."""
    vectors = {f"{space}_{kind}": table[space] for kind, table in
               (("clue_vectors", ref.clue_vectors), ("answer_vectors", ref.answer_vectors)) for space in table}
    np.savez(path, answers=np.array(ref.answers, dtype=str),
             clue_hints=np.array([json.dumps(h) for h in ref.clue_hints], dtype=str), **vectors)


def _load_reference(path: Path) -> Reference:
    """The reference `_save_reference` wrote; no pickles, so a crafted file cannot run code."""
    with np.load(path, allow_pickle=False) as ref:
        return Reference(
            answers=ref["answers"].tolist(),
            clue_hints=[tuple(json.loads(h)) for h in ref["clue_hints"].tolist()],
            clue_vectors={space: ref[f"{space}_clue_vectors"] for space in SPACES},
            answer_vectors={space: ref[f"{space}_answer_vectors"] for space in SPACES},
        )


class _OptionAnswers:
    """The cosines of a batch's distinct options to every train answer, in each space, once per
    distinct option: options recur across queries (test.csv's option slots hold far fewer
    distinct options). Row by row (`row_by_row`), so an option's cosines do not depend on the
    batch it came in."""

    def __init__(self, options: Sequence[str], encoders: dict[str, Encoder], reference: Reference) -> None:
        self.row = {option: i for i, option in enumerate(options)}
        self.matrices = {space: row_by_row(encoder.encode(list(options)), reference.answer_vectors[space])
                         for space, encoder in encoders.items()} if options else {}

    def of(self, options: Sequence[str]) -> dict[str, np.ndarray]:
        rows = [self.row[o] for o in options]
        return {space: matrix[rows] for space, matrix in self.matrices.items()}


def encode_side_by_side(encoders: Collection[Encoder], texts: Sequence[str]) -> None:
    """Encode `texts` with every distinct encoder, each in its own thread.

    Why: a request's strings are few and short, and one encoder call on them keeps two cores
    only partly busy (onnxruntime and torch release the GIL while they run). The base and
    fine-tuned encoders side by side overlap their idle time, so the request waits for the slower
    of the two rather than for both. Each encoder has its own memo, so no state is shared.
    """
    distinct = list({id(e): e for e in encoders}.values())
    if len(distinct) < 2 or not texts:
        for encoder in distinct:
            encoder.encode(texts)
        return
    errors: list[BaseException] = []

    def run(encoder: Encoder) -> None:
        try:
            encoder.encode(texts)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    others = [threading.Thread(target=run, args=(e,), name="pictorank-encode") for e in distinct[1:]]
    for thread in others:
        thread.start()
    run(distinct[0])
    for thread in others:
        thread.join()
    if errors:
        raise errors[0]


@functools.cache
def _threadpools() -> ThreadpoolController:
    """threadpoolctl's inspection of the loaded BLAS libraries, done once."""
    return ThreadpoolController()


def _one_blas_thread() -> AbstractContextManager[object]:
    """A context running numpy's BLAS on one thread."""
    return _threadpools().limit(limits=1, user_api="blas")
