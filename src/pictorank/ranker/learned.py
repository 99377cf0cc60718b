"""The learned ranker: LambdaMART over the feature columns of :mod:`pictorank.features`.

It is made by :mod:`pictorank.train` (or loaded from a model directory) and only ranks. A model
directory holds everything needed to rank without the training data, and loading it checks every
part (versions, file hashes, the feature list against the code's) so a corrupt or mismatched
directory is refused with a ModelError instead of ranking with the wrong features:

    ranker.json        method, parameters, versions, feature names, encoder, sha256 of every file
    model.txt          the LightGBM booster (text format)
    pooling.json, associations.json, reference.npz
                       the feature extractor's learned tables (FeatureExtractor.save)
    encoder/           the fine-tuned sentence-transformers model (absent when not fine-tuned)
    metadata.json      training files' hashes, parameters, seeds, val metrics, timings
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pictorank.artifacts import check_files, hash_files, inside, library_versions, read_json, replacing_dir, write_json
from pictorank.encoder import Encoder, base_model_version, load_model_dir
from pictorank.errors import ModelError
from pictorank.features import FeatureExtractor, feature_names
from pictorank.query import Query
from pictorank.ranker.base import CONFIG_FILE, Ranker

if TYPE_CHECKING:  # lightgbm pulls in scikit-learn and scipy (~0.9 s); seed and cosine never need it
    import lightgbm as lgb

MODEL_FILE = "model.txt"
ENCODER_DIR = "encoder"
METADATA_FILE = "metadata.json"
SMALL_BATCH = 50  # LightGBM predicts fewer queries than this on one thread


class LearnedRanker(Ranker):
    """LightGBM LambdaMART over named feature columns.

    Parameters
    ----------
    extractor : a fitted FeatureExtractor (it holds the base and fine-tuned encoders).
    booster : the fitted lightgbm Booster; its feature names must be `feature_names`.
    feature_names : the columns the booster reads, in order (all of the extractor's, or fewer
        for an ablation).
    finetuned_model : the fine-tuned SentenceTransformer behind the extractor's `ft` encoder,
        saved with the model directory (None when training skipped fine-tuning).
    num_threads : LightGBM threads for large batches.
    training : what training recorded (parameters, CV results, timings), saved as metadata.
    """

    method = "learned"

    def __init__(
        self,
        extractor: FeatureExtractor,
        booster: "lgb.Booster",
        feature_names: Sequence[str],
        finetuned_model: Any = None,
        num_threads: int = 2,
        training: dict[str, Any] | None = None,
    ) -> None:
        if list(booster.feature_name()) != list(feature_names):
            raise ModelError("the booster's features differ from feature_names")
        self.extractor = extractor
        self.booster = booster
        self.feature_names = list(feature_names)
        self.finetuned_model = finetuned_model
        self.num_threads = num_threads
        self.training = dict(training or {})

    @property
    def encoder(self) -> Encoder:
        """The base encoder (shared with the service for open-vocabulary search)."""
        return self.extractor.base_encoder

    def encoders(self) -> list[Encoder]:
        return list(self.extractor.encoders().values())

    def get_params(self) -> dict[str, Any]:
        return {"feature_names": self.feature_names, "num_threads": self.num_threads}

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        if not queries:
            return []
        table = self.extractor.transform(queries)[self.feature_names]
        # LightGBM gets its threads only for large batches: for a few rows they cost more than they save.
        threads = 1 if len(queries) < SMALL_BATCH else self.num_threads
        predictions = self.booster.predict(table.to_numpy(), num_threads=threads)
        bounds = np.cumsum([0] + [len(q.options) for q in queries])
        return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(queries))]

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike, metadata: dict[str, Any] | None = None, force: bool = False) -> None:
        """Write the model directory atomically: a half-written directory never replaces a good one,
        and a folder pictorank did not write is only replaced with `force`."""
        with replacing_dir(directory, force) as staging:
            self.booster.save_model(str(staging / MODEL_FILE))
            self.extractor.save(staging)
            if self.finetuned_model is not None:
                self.finetuned_model.save(str(staging / ENCODER_DIR))
            write_json(staging / METADATA_FILE, {**self.training, **(metadata or {})})
            config = {
                "method": self.method,
                "params": self.get_params(),
                "versions": library_versions(),
                "encoder": self._encoder_entry(),
                "files": hash_files(staging, skip=CONFIG_FILE),
            }
            write_json(staging / CONFIG_FILE, config)

    def _encoder_entry(self) -> dict[str, Any]:
        base = {"base_model": base_model_version()}
        finetuned = self.extractor.finetuned_encoder
        if self.finetuned_model is None or finetuned is None:
            return {**base, "finetuned": None}
        return {**base, "finetuned": {"dir": ENCODER_DIR, "model_id": finetuned.model_id}}

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path, encoder: Encoder | None) -> "LearnedRanker":
        """Load a model directory, refusing anything that does not match what was saved."""
        where = directory / CONFIG_FILE
        check_files(directory, config.get("files"), where)
        params = config.get("params")
        if not isinstance(params, dict):
            raise ModelError(f"{where}: 'params' must be a JSON object")
        names = _checked_feature_names(params.get("feature_names"), where)
        num_threads = params.get("num_threads", 2)
        if not isinstance(num_threads, int) or isinstance(num_threads, bool) or not 1 <= num_threads <= 64:
            raise ModelError(f"{where}: params.num_threads must be an integer from 1 to 64, found {num_threads!r}")
        entry = config.get("encoder")
        if not isinstance(entry, dict) or entry.get("base_model") != base_model_version():
            found = entry.get("base_model") if isinstance(entry, dict) else entry
            raise ModelError(f"{where}: made with base encoder {found!r}, installed is {base_model_version()!r}")
        base = encoder or Encoder()
        finetuned_model, finetuned = _load_finetuned(directory, entry.get("finetuned"), base, where)
        booster = _load_booster(directory / MODEL_FILE)
        if booster.feature_name() != names:
            raise ModelError(f"{directory / MODEL_FILE}: the booster's features differ from {CONFIG_FILE}")
        extractor = FeatureExtractor.load(directory, base, finetuned)
        training = read_json(directory / METADATA_FILE)
        return cls(extractor, booster, names, finetuned_model, num_threads, training if isinstance(training, dict) else {})


def _checked_feature_names(names: Any, where: Path) -> list[str]:
    """The stored feature list must be columns this pictorank makes, in its order."""
    known = feature_names()
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModelError(f"{where}: params.feature_names must be a non-empty list of strings")
    if names != [n for n in known if n in set(names)]:
        raise ModelError(
            f"{where}: feature list differs from this pictorank's ({len(names)} stored, {len(known)} known); "
            "retrain the model with `pictorank train`"
        )
    return names


def _load_finetuned(directory: Path, entry: Any, base: Encoder, where: Path) -> tuple[Any, Encoder | None]:
    """The fine-tuned model and its Encoder (sharing the base encoder's disk cache), or (None, None)."""
    if entry is None:
        return None, None
    if not isinstance(entry, dict) or not isinstance(entry.get("model_id"), str):
        raise ModelError(f"{where}: encoder.finetuned must be null or an object with 'dir' and 'model_id'")
    path = inside(directory, entry.get("dir"), where)
    try:
        model = load_model_dir(path)
    except Exception as exc:  # any failure to read the weights is a broken model dir
        raise ModelError(f"{path}: cannot load the fine-tuned encoder ({type(exc).__name__}: {exc})") from None
    return model, Encoder(model=model, model_id=entry["model_id"], cache_dir=base.cache_dir)


def _load_booster(path: Path) -> "lgb.Booster":
    import lightgbm as lgb  # lazy: see TYPE_CHECKING above

    try:
        return lgb.Booster(model_file=str(path))
    except (lgb.basic.LightGBMError, OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read the LightGBM model ({exc})") from None
