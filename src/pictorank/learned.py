"""The learned ranker: LambdaMART over cosine, lexical and association features.

A model directory holds everything needed to rank without the training data, and loading it
checks every part (versions, file hashes, the feature list against the code's) so a corrupt or
mismatched directory is refused with a ModelError instead of ranking with the wrong features:

    ranker.json        method, config, versions, feature names, sha256 of every file below
    model.txt          the LightGBM booster (text format)
    features.json      feature names in the order the booster expects
    pooling.json       learned position weights (by clue length)
    associations.json  token co-occurrence counts learned from train (PMI is computed from them)
    reference.npz      train answers, their clues' descriptions, and both encoders' embeddings of
                       them (neighbour, hint and hubness features)
    encoder/           the fine-tuned sentence-transformers model (absent when not fine-tuned)
    metadata.json      training files' hashes, parameters, seeds, val metrics, timings
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pictorank.encoder import Encoder, base_model_version, load_model_dir
from pictorank.features import FeatureExtractor, _Reference, _TokenStats
from pictorank.ranker import CONFIG_FILE, ModelError, Query, Ranker
from pictorank.versions import sha256_file

MODEL_FILE = "model.txt"
FEATURES_FILE = "features.json"
POOLING_FILE = "pooling.json"
ASSOCIATIONS_FILE = "associations.json"
REFERENCE_FILE = "reference.npz"
ENCODER_DIR = "encoder"
METADATA_FILE = "metadata.json"


SMALL_BATCH = 50  # LightGBM predicts fewer queries than this on one thread


def _hash_files(directory: Path) -> dict[str, str]:
    """sha256 of every file under `directory` except the config that stores them."""
    return {
        str(p.relative_to(directory)): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != CONFIG_FILE
    }


class LearnedRanker(Ranker):
    """LightGBM LambdaMART over the features of :mod:`pictorank.features`.

    Parameters
    ----------
    encoder : the base sentence encoder (its cache also serves the fine-tuned encoder's id).
    config : a :class:`pictorank.train.TrainConfig`; its `drop_groups` names the feature groups
        this model leaves out.

    `fit` runs the whole training procedure of :mod:`pictorank.train` (OOF features,
    fine-tuning, CV, early stopping); `pictorank train` is the command-line way to do it.
    """

    method = "learned"

    def __init__(self, encoder: Encoder | None = None, config: Any = None, drop_groups: Sequence[str] | None = None) -> None:
        from pictorank.train import TrainConfig

        self.encoder = encoder or Encoder()
        config = config if config is not None else TrainConfig()
        if isinstance(config, dict):
            config = TrainConfig.from_dict(config)
        if drop_groups is not None:
            from dataclasses import replace

            config = replace(config, drop_groups=tuple(drop_groups))
        self.config = config

    def get_params(self) -> dict[str, Any]:
        return {"config": self.config.to_dict()}

    # -- learning -----------------------------------------------------------------------------
    def fit(self, queries: Sequence[Query], val_queries: Sequence[Query] | None = None, log=None) -> "LearnedRanker":
        """Train on `queries`; early stopping uses `val_queries`, or a fifth of train held out by answer."""
        from pictorank.train import answer_folds, build_tables, fit_ranker_from_tables

        log = log or (lambda message: None)
        train = [q for q in queries if q.answer is not None]
        if val_queries is None:
            folds = answer_folds(train, 5, self.config.seed + 1)
            val_queries = [q for q, f in zip(train, folds) if f == 0]
            train = [q for q, f in zip(train, folds) if f != 0]
        tables = build_tables(train, val_queries, self.encoder, self.config, log)
        fitted = fit_ranker_from_tables(tables, self.config, log)
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
        return self

    def set_fitted(self, extractor: FeatureExtractor, booster: Any, finetuned_model: Any, training: dict[str, Any]) -> None:
        """Install what training produced (used by pictorank.train and by `load`)."""
        from pictorank.train import selected_features

        self.extractor_ = extractor
        self.booster_ = booster
        self.finetuned_model_ = finetuned_model
        self.feature_names_ = selected_features(self.config.drop_groups)
        self.training_ = training

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            raise RuntimeError("LearnedRanker is not fitted; call fit() or load a model directory")

    # -- using --------------------------------------------------------------------------------
    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        self._check_fitted()
        if not queries:
            return []
        table = self.extractor_.transform(queries)[self.feature_names_]
        # LightGBM gets its threads only for large batches: for a few rows they cost more than they save.
        threads = 1 if len(queries) < SMALL_BATCH else self.config.num_threads
        predictions = self.booster_.predict(table.to_numpy(), num_threads=threads)
        bounds = np.cumsum([0] + [len(q.options) for q in queries])
        return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(queries))]

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike, metadata: dict[str, Any] | None = None) -> None:
        """Write the model directory atomically: a half-written directory never replaces a good one."""
        from pictorank.versions import library_versions

        self._check_fitted()
        directory = Path(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; a model directory is meant to be shared
        try:
            self._write_parts(staging, metadata or {})
            config = {
                "method": self.method,
                "params": self.get_params(),
                "versions": library_versions(),
                "feature_names": self.feature_names_,
                "encoder": self._encoder_entry(),
                "files": _hash_files(staging),
            }
            (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")
            if directory.exists():
                old = directory.with_name(f".{directory.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                directory.rename(old)
                staging.rename(directory)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def _encoder_entry(self) -> dict[str, Any]:
        base = {"base_model": base_model_version()}
        if self.finetuned_model_ is None:
            return {**base, "finetuned": None}
        return {**base, "finetuned": {"dir": ENCODER_DIR, "model_id": self.extractor_.finetuned_encoder.model_id}}

    def _write_parts(self, staging: Path, metadata: dict[str, Any]) -> None:
        ex = self.extractor_
        self.booster_.save_model(str(staging / MODEL_FILE))
        (staging / FEATURES_FILE).write_text(json.dumps(self.feature_names_, indent=1), encoding="utf-8")
        pooling = {"position_weights": {str(k): v for k, v in ex.position_weights_.items()},
                   "note": "weight of each hint position, by clue length (key 4 = 4 or more hints)"}
        (staging / POOLING_FILE).write_text(json.dumps(pooling, indent=2), encoding="utf-8")
        associations = {
            "params": {"neighbours": ex.neighbours, "hub_k": ex.hub_k, "min_pair_count": ex.min_pair_count},
            "rows": ex.token_stats_.rows,
            "hint_counts": ex.token_stats_.hint_counts,
            "answer_counts": ex.token_stats_.answer_counts,
            "pair_counts": sorted([h, a, c] for (h, a), c in ex.token_stats_.pair_counts.items()),
            "answer_hints": ex.token_stats_.answer_hints,
        }
        (staging / ASSOCIATIONS_FILE).write_text(json.dumps(associations), encoding="utf-8")
        ref = ex.reference_
        vectors = {f"{space}_{kind}": table[space] for kind, table in
                   (("clue_vectors", ref.clue_vectors), ("answer_vectors", ref.answer_vectors)) for space in table}
        np.savez(staging / REFERENCE_FILE, answers=np.array(ref.answers, dtype=str),
                 clue_hints=np.array([json.dumps(h) for h in ref.clue_hints], dtype=str), **vectors)
        if self.finetuned_model_ is not None:
            self.finetuned_model_.save(str(staging / ENCODER_DIR))
        (staging / METADATA_FILE).write_text(json.dumps(metadata, indent=2, default=str), encoding="utf-8")

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path, encoder: Encoder | None) -> "LearnedRanker":
        """Load a model directory, refusing anything that does not match what was saved."""
        from pictorank.train import selected_features

        where = directory / CONFIG_FILE
        ranker = cls(encoder=encoder, config=config.get("params", {}).get("config", {}))
        _check_files(directory, config.get("files"), where)
        expected = selected_features(ranker.config.drop_groups)
        stored = _read_json(directory / FEATURES_FILE)
        if stored != expected or config.get("feature_names") != expected:
            raise ModelError(
                f"{directory}: feature list differs from this pictorank's ({len(stored)} stored, "
                f"{len(expected)} expected); retrain the model with `pictorank train`"
            )
        entry = config.get("encoder") or {}
        if entry.get("base_model") != base_model_version():
            raise ModelError(f"{where}: made with base encoder {entry.get('base_model')!r}, installed is {base_model_version()!r}")
        booster = _load_booster(directory / MODEL_FILE, expected)
        finetuned_model, finetuned = None, None
        if entry.get("finetuned"):
            path = directory / entry["finetuned"]["dir"]
            try:
                finetuned_model = load_model_dir(path)
            except Exception as exc:  # any failure to read the weights is a broken model dir
                raise ModelError(f"{path}: cannot load the fine-tuned encoder ({type(exc).__name__}: {exc})") from None
            finetuned = Encoder(model=finetuned_model, model_id=entry["finetuned"]["model_id"], cache_dir=ranker.encoder.cache_dir)
        extractor = _load_extractor(directory, ranker.encoder, finetuned)
        ranker.set_fitted(extractor, booster, finetuned_model, _read_json(directory / METADATA_FILE))
        return ranker


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: missing or corrupt ({exc})") from None


def _check_files(directory: Path, hashes: dict[str, str] | None, where: Path) -> None:
    """Every file the config lists must be there with the same sha256."""
    if not isinstance(hashes, dict) or not hashes:
        raise ModelError(f"{where}: no file hashes; not a model directory written by `pictorank train`")
    for name, digest in hashes.items():
        path = directory / name
        if not path.is_file():
            raise ModelError(f"{path}: missing from the model directory; retrain or restore it")
        if sha256_file(path) != digest:
            raise ModelError(f"{path}: corrupt (sha256 differs from the one recorded at training)")


def _load_booster(path: Path, expected: list[str]):
    import lightgbm as lgb

    try:
        booster = lgb.Booster(model_file=str(path))
    except (lgb.basic.LightGBMError, OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read the LightGBM model ({exc})") from None
    if booster.feature_name() != expected:
        raise ModelError(f"{path}: the booster's features differ from features.json")
    return booster


def _load_extractor(directory: Path, base: Encoder, finetuned: Encoder | None) -> FeatureExtractor:
    pooling = _read_json(directory / POOLING_FILE)
    associations = _read_json(directory / ASSOCIATIONS_FILE)
    try:
        with np.load(directory / REFERENCE_FILE, allow_pickle=False) as ref:
            spaces = ("base", "ft")
            reference = _Reference(
                answers=ref["answers"].tolist(),
                clue_hints=[tuple(json.loads(h)) for h in ref["clue_hints"].tolist()],
                clue_vectors={space: ref[f"{space}_clue_vectors"] for space in spaces},
                answer_vectors={space: ref[f"{space}_answer_vectors"] for space in spaces},
            )
        extractor = FeatureExtractor(base, finetuned, **associations["params"])
        extractor.position_weights_ = {int(k): [float(w) for w in v] for k, v in pooling["position_weights"].items()}
        extractor.token_stats_ = _TokenStats(
            rows=int(associations["rows"]),
            hint_counts={str(k): int(v) for k, v in associations["hint_counts"].items()},
            answer_counts={str(k): int(v) for k, v in associations["answer_counts"].items()},
            pair_counts={(str(h), str(a)): int(c) for h, a, c in associations["pair_counts"]},
            answer_hints={str(k): [list(map(str, t)) for t in v] for k, v in associations["answer_hints"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{directory}: corrupt feature tables ({type(exc).__name__}: {exc})") from None
    extractor.reference_ = reference
    extractor._hub_cache = {}
    return extractor
