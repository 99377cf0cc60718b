"""The learned ranker: LambdaMART over the feature columns of :mod:`pictorank.features`.

It is made by :mod:`pictorank.train` (or loaded from a model directory) and only ranks. A model
directory holds everything needed to rank without the training data, and loading it checks every
part (versions, file hashes, the feature list against the code's) so a corrupt or mismatched
directory is refused with a ModelError instead of ranking with the wrong features:

    ranker.json        method, parameters, versions, feature names, encoder, sha256 of every file
    model-<i>.txt      the LightGBM boosters whose mean is the score (ranker.bag; text format)
    pooling.json, associations.json, reference.npz
                       the feature extractor's learned tables (FeatureExtractor.save)
    encoder/           the fine-tuned sentence-transformers model (absent when not fine-tuned)
    metadata.json      training files' hashes, parameters, seeds, val metrics, timings
    calibration.json   P(first option is the answer) from a ranking's scores (ranker.calibration);
                       absent when training had nothing to fit it on (every held-out ranking
                       right, or every one wrong): confidence is then null
    onnx/, vocabulary.npz
                       both encoders exported to ONNX and the training vocabulary embedded by
                       them (ranker.shipped); absent when trained without quantization
                       (ranker.json's runtime is null): the model then runs on PyTorch

`pictorank train` then adds, each checked by its own loader: the lexicon's embeddings
(lexicon.npz and lexicon.json, pictorank.lexicon.store), open play's own ranker (open_play/,
pictorank.open_play) and the clue-giver's model (pictorank.suggest).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pictorank.artifacts import check_files, hash_files, inside, library_versions, read_json, replacing_dir, write_json
from pictorank.encoders import DEFAULT_QUANTIZATION, Encoder, Encoders, Quantization, base_model_version, load_model_dir
from pictorank.errors import ModelError
from pictorank.features import FeatureExtractor, feature_names
from pictorank.query import Query
from pictorank.ranker.bag import BOOSTER_FILE, BoosterBag
from pictorank.ranker.base import CONFIG_FILE, Ranker
from pictorank.ranker.calibration import CALIBRATION_FILE, Calibrator, shipped_calibrator
from pictorank.ranker.fallback import COSINE_COLUMN, KNOWN_COLUMN, blend_rows, blended_confidence, unseen_weight
from pictorank.ranker.explain import Explanation, hint_similarities, learned_explanation
from pictorank.ranker.ranking import Ranking
from pictorank.ranker.shipped import load_runtime_encoders, preload_vocabulary, write_runtime

if TYPE_CHECKING:  # lightgbm pulls in scikit-learn and scipy (slow); seed and cosine never need it
    import lightgbm as lgb
    import pandas as pd

ENCODER_DIR = "encoder"
METADATA_FILE = "metadata.json"
SMALL_BATCH = 50  # LightGBM predicts fewer queries than this on one thread


class LearnedRanker(Ranker):
    """LightGBM LambdaMART over named feature columns.

    Parameters
    ----------
    extractor : a fitted FeatureExtractor (it holds the base and fine-tuned encoders).
    booster : the fitted boosters (a BoosterBag, or one lightgbm Booster, which becomes a bag of
        one); their feature names must be `feature_names`.
    feature_names : the columns the booster reads, in order (all of the extractor's, or fewer
        for an ablation).
    finetuned_model : the fine-tuned SentenceTransformer behind the extractor's `ft` encoder,
        saved with the model directory (None when training skipped fine-tuning).
    num_threads : LightGBM threads for large batches.
    training : what training recorded (parameters, CV results, timings), saved as metadata.
    calibrator : turns a ranking's scores into the probability that its first option is right
        (fitted on out-of-fold scores by pictorank.train); None gives no confidence.
    fallback : blend each row's scores towards plain cosine by the share of the clue's
        descriptions train never saw (pictorank.ranker.fallback); False ranks with LightGBM alone.
    quantization : how `save` exports the encoders to ONNX (None: no export, the saved model runs
        on PyTorch). See pictorank.ranker.shipped.
    finetuned_id : the fine-tuned encoder's model id as saved (set when loading; by default the
        extractor's fine-tuned Encoder's id).
    """

    method = "learned"

    def __init__(
        self,
        extractor: FeatureExtractor,
        booster: "BoosterBag | lgb.Booster",
        feature_names: Sequence[str],
        finetuned_model: Any = None,
        num_threads: int = 2,
        training: dict[str, Any] | None = None,
        calibrator: Calibrator | None = None,
        fallback: bool = False,
        quantization: Quantization | None = DEFAULT_QUANTIZATION,
        finetuned_id: str | None = None,
    ) -> None:
        if list(booster.feature_name()) != list(feature_names):
            raise ModelError("the booster's features differ from feature_names")
        self.extractor = extractor
        self.booster = booster if isinstance(booster, BoosterBag) else BoosterBag([booster])
        self.feature_names = list(feature_names)
        self.finetuned_model = finetuned_model
        self.num_threads = num_threads
        self.training = dict(training or {})
        self.calibrator = calibrator
        self.fallback = fallback
        # Cosine's calibration, shipped with the package: half of a blended row's confidence.
        self.cosine_calibrator = shipped_calibrator("cosine") if fallback else None
        self.quantization = quantization
        self.finetuned_id = finetuned_id
        # What transform must compute: the booster's columns and the blend's (ranker.fallback).
        self.needed_columns = frozenset([*self.feature_names, COSINE_COLUMN, KNOWN_COLUMN])

    @property
    def encoder(self) -> Encoder:
        """The base encoder (its `base` space), as the unlearned rankers name theirs."""
        return self.extractor.base_encoder

    def encoders(self) -> list[Encoder]:
        return list(self.extractor.encoders().values())

    def prepare(self, options: Sequence[str]) -> None:
        """Embeddings of `options` in both spaces and their hubness (what a query over them reads)."""
        self.extractor.prepare(options)

    def get_params(self) -> dict[str, Any]:
        return {"feature_names": self.feature_names, "num_threads": self.num_threads, "fallback": self.fallback,
                "boosters": len(self.booster)}

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        if not queries:
            return []
        _, scores, _ = self._table_and_scores(queries)
        return scores

    def _features(self, queries: Sequence[Query]) -> "pd.DataFrame":
        """Every column the boosters and the blend read, one row per (query, option)."""
        return self.extractor.transform(queries, needed=self.needed_columns)

    def _table_and_scores(self, queries: Sequence[Query]) -> tuple[np.ndarray, list[np.ndarray], list[float | None]]:
        """The feature rows of every (query, option), each query's scores (explanations reuse the
        rows) and how sure each ranking is (`_confidences`)."""
        full = self._features(queries)
        table = full[self.feature_names].to_numpy()
        # LightGBM gets its threads only for large batches: for a few rows they cost more than they save.
        threads = 1 if len(queries) < SMALL_BATCH else self.num_threads
        predictions = self.booster.predict(table, num_threads=threads)
        bounds = np.cumsum([0] + [len(q.options) for q in queries])
        learned = [predictions[bounds[i] : bounds[i + 1]] for i in range(len(queries))]
        if not self.fallback:
            return table, learned, [self.confidence(sorted(row, reverse=True)) for row in learned]
        # clues from an unseen vocabulary lean on plain cosine too (ranker.fallback)
        cosine, known = full[COSINE_COLUMN].to_numpy(), full[KNOWN_COLUMN].to_numpy()
        scores = blend_rows(learned, cosine, known)
        return table, scores, self._confidences(learned, scores, cosine, known, bounds)

    def _confidences(self, learned: list[np.ndarray], scores: list[np.ndarray], cosine: np.ndarray,
                     known: np.ndarray, bounds: np.ndarray) -> list[float | None]:
        """P(first option right) per blended row: LightGBM's calibration for clues of the training
        vocabulary; for the others, mixed with cosine's by the blend weight (ranker.fallback)."""
        if self.calibrator is None:
            return [None] * len(scores)
        confidences: list[float | None] = []
        for i, (raw, final) in enumerate(zip(learned, scores)):
            row_known = float(known[bounds[i]]) if len(raw) else 1.0
            if len(raw) == 0 or unseen_weight(row_known) == 0.0:
                confidences.append(self.confidence(sorted(final, reverse=True)))
                continue
            confidences.append(blended_confidence(raw, cosine[bounds[i] : bounds[i + 1]], row_known,
                                                  int(np.argmax(final)), self.calibrator, self.cosine_calibrator))
        return confidences

    def rank(self, queries: Sequence[Query], explain: int = 0) -> list[Ranking]:
        """See Ranker.rank: here the features are built once for the scores, the confidences and
        the explanations, which are LightGBM's per-feature contributions (SHAP, `pred_contrib`)
        of each query's first `explain` options, grouped by pictorank.ranker.explain.

        Only the explained rows go through `pred_contrib`, so explaining 10 options costs a
        fraction of the ranking itself.
        """
        if not queries:
            return []
        table, scores, confidences = self._table_and_scores(queries)
        explained = self._explained(queries, table, scores, explain) if explain > 0 else [[] for _ in queries]
        results = []
        for query, query_scores, confidence, explanations in zip(queries, scores, confidences, explained):
            order = np.argsort(-query_scores, kind="stable")
            results.append(Ranking([query.options[i] for i in order], [float(query_scores[i]) for i in order],
                                   confidence, explanations))
        return results

    def _explained(self, queries: Sequence[Query], table: np.ndarray, scores: list[np.ndarray],
                   top_k: int) -> list[list[Explanation]]:
        """Explanations of each query's first `top_k` options from the rows already built."""
        encoder = self.extractor.encoders()["ft"]  # the space the ranker leans on most
        start, results = 0, []
        for query, query_scores in zip(queries, scores):
            shown = np.argsort(-query_scores, kind="stable")[:top_k]
            # SHAP walks every tree of every booster of the bag for each row (costly for a whole
            # bag): unlike a plain prediction of a few rows, that is worth the threads.
            contributions = self.booster.predict(table[start + shown], pred_contrib=True, num_threads=self.num_threads)
            options = [query.options[i] for i in shown]
            sims = hint_similarities(encoder.encode(options), encoder.encode(list(query.hints)))
            explanations = [learned_explanation(o, query.hints, self.feature_names, c, s)
                            for o, c, s in zip(options, contributions, sims)]
            if self.fallback:  # a blended row's score is no longer LightGBM's sum: say what the blend added
                own = self.booster.predict(table[start + shown], num_threads=1)
                explanations = [_with_blend(e, float(query_scores[i]), float(o))
                                for e, i, o in zip(explanations, shown, own)]
            results.append(explanations)
            start += len(query.options)
        return results

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike, metadata: dict[str, Any] | None = None, force: bool = False,
             vocabulary: tuple[Sequence[str], Sequence[str]] = ((), ())) -> None:
        """Write the model directory atomically: a half-written directory never replaces a good one,
        and a folder pictorank did not write is only replaced with `force`.

        `vocabulary`: (texts, options) to ship embedded with the ONNX export (pictorank.ranker.shipped),
        e.g. every hint description and the training files' options; the options also get their hubness.
        """
        with replacing_dir(directory, force, kind="model") as staging:
            self.booster.save(staging)
            self.extractor.save(staging)
            if isinstance(self.finetuned_model, Path):  # loaded with the ONNX runtime: copy its folder
                shutil.copytree(self.finetuned_model, staging / ENCODER_DIR)
            elif self.finetuned_model is not None:
                self.finetuned_model.save(str(staging / ENCODER_DIR))
            runtime = None
            if self.quantization is not None:
                encoders = {"base": self.extractor.base_encoder}
                if self.finetuned_model is not None and self.extractor.finetuned_encoder is not None:
                    encoders["ft"] = self.extractor.finetuned_encoder
                runtime = write_runtime(staging, encoders, self.quantization, *vocabulary, self.extractor)
            write_json(staging / METADATA_FILE, {**self.training, **(metadata or {})})
            if self.calibrator is not None:
                self.calibrator.save(staging / CALIBRATION_FILE)
            config = {
                "method": self.method,
                "params": self.get_params(),
                "versions": library_versions(),
                "encoder": self._encoder_entry(),
                "runtime": runtime,
                "files": hash_files(staging, skip=CONFIG_FILE),
            }
            write_json(staging / CONFIG_FILE, config)

    def _encoder_entry(self) -> dict[str, Any]:
        base = {"base_model": base_model_version()}
        finetuned = self.extractor.finetuned_encoder
        if self.finetuned_model is None or finetuned is None:
            return {**base, "finetuned": None}
        return {**base, "finetuned": {"dir": ENCODER_DIR, "model_id": self.finetuned_id or finetuned.model_id}}

    @classmethod
    def load_encoders(cls, config: dict[str, Any], directory: Path, base: Encoder | None = None,
                      runtime: str = "onnx", threads: int | None = None) -> Encoders:
        """The encoders a saved model reads: its ONNX exports (runtime `onnx`, when it ships them), or
        the base model and the fine-tuned weights on PyTorch. `base` lends its disk cache folder and
        memory bound (and on PyTorch is the base encoder itself)."""
        where = directory / CONFIG_FILE
        check_files(directory, config.get("files"), where, unread=unread_folders(config, runtime))
        entry = _encoder_entry(config, where)
        shipped = config.get("runtime")
        if shipped is not None and runtime == "onnx":  # no torch: the exported encoders
            finetuned_id = _finetuned_id(entry.get("finetuned"), where)
            exports = load_runtime_encoders(directory, shipped, base, finetuned_id, base_model_version(), where, threads)
            return Encoders(*exports, shipped=True)
        base = base or Encoder()
        return Encoders(base, _load_finetuned(directory, entry.get("finetuned"), base, where))

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path, encoders: Encoders) -> "LearnedRanker":
        """Load a model directory over `encoders` (what `load_encoders` made of it), refusing
        anything that does not match what was saved."""
        where = directory / CONFIG_FILE
        params = config.get("params")
        if not isinstance(params, dict):
            raise ModelError(f"{where}: 'params' must be a JSON object")
        names = _checked_feature_names(params.get("feature_names"), where)
        num_threads = params.get("num_threads", 2)
        if not isinstance(num_threads, int) or isinstance(num_threads, bool) or not 1 <= num_threads <= 64:
            raise ModelError(f"{where}: params.num_threads must be an integer from 1 to 64, found {num_threads!r}")
        fallback = _required(params, "fallback", where)
        if not isinstance(fallback, bool):
            raise ModelError(f"{where}: params.fallback must be true or false, found {fallback!r}")
        finetuned_entry = _encoder_entry(config, where).get("finetuned")
        finetuned_id = _finetuned_id(finetuned_entry, where)
        if (finetuned_id is None) != (encoders.finetuned is None):
            raise ModelError(f"{where}: the encoders given do not match the model's fine-tuned encoder")
        finetuned_model: Any = None
        if encoders.finetuned is not None:  # what `save` writes again: the weights' folder, or the model
            finetuned_model = inside(directory, finetuned_entry.get("dir"), where) if encoders.shipped \
                else encoders.finetuned.model
        count = _booster_count(_required(params, "boosters", where), where)
        _check_listed(config["files"], [BOOSTER_FILE.format(i) for i in range(count)], where)
        listed = {name for name in config["files"] if re.fullmatch(BOOSTER_FILE.format(r"\d+"), name)}
        if len(listed) != count:  # boosters left out would change every score, silently
            raise ModelError(f"{where}: params.boosters is {count}, the folder lists {len(listed)} booster files")
        booster = BoosterBag.load(directory, count)
        if booster.feature_name() != names:
            raise ModelError(f"{directory}: the boosters' features differ from {CONFIG_FILE}")
        _check_listed(config["files"], [METADATA_FILE, FeatureExtractor.POOLING_FILE, FeatureExtractor.ASSOCIATIONS_FILE,
                                        FeatureExtractor.REFERENCE_FILE], where)
        extractor = FeatureExtractor.load(directory, encoders.base, encoders.finetuned)
        runtime = config.get("runtime")
        if encoders.shipped and isinstance(runtime, dict):
            preload_vocabulary(inside(directory, runtime.get("vocabulary"), where), extractor)
        training = read_json(directory / METADATA_FILE)
        # Listed in the checked file hashes when training wrote one (it has nothing to fit one on
        # when every held-out ranking was right, or every one wrong).
        calibrator = Calibrator.load(directory / CALIBRATION_FILE) if CALIBRATION_FILE in config["files"] else None
        quantization = _quantization(runtime, where)
        return cls(extractor, booster, names, finetuned_model, num_threads,
                   training if isinstance(training, dict) else {}, calibrator, fallback, quantization, finetuned_id)


def _encoder_entry(config: dict[str, Any], where: Path) -> dict[str, Any]:
    """ranker.json's "encoder" entry, checked against the installed base model."""
    entry = config.get("encoder")
    if not isinstance(entry, dict) or entry.get("base_model") != base_model_version():
        found = entry.get("base_model") if isinstance(entry, dict) else entry
        raise ModelError(f"{where}: made with base encoder {found!r}, installed is {base_model_version()!r}")
    return entry


def _quantization(runtime: Any, where: Path) -> Quantization | None:
    """The shipped exports' quantisation (None: the model runs on PyTorch)."""
    if not isinstance(runtime, dict):
        return None
    try:
        return Quantization.parse(str(runtime.get("quantization")))
    except ValueError as exc:
        raise ModelError(f"{where}: runtime.quantization: {exc}") from None


def _with_blend(explanation: Explanation, score: float, own: float) -> Explanation:
    """The explanation of a row blended towards cosine (ranker.fallback), with the difference
    between its final score and LightGBM's `own` as the extra group `unseen_vocabulary`, so the
    groups still add up to the score. Clues whose descriptions train knows are not blended (their
    score is LightGBM's own, exactly) and get no such group; the groups' sum is not the test, it
    differs from the score by float rounding (a group of -0.0 on every Bliss clue)."""
    if score == own:
        return explanation
    blend = score - sum(explanation.groups.values())
    return replace(explanation, groups={**explanation.groups, "unseen_vocabulary": blend})


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


def _required(params: dict[str, Any], name: str, where: Path) -> Any:
    """params[name], which every model `pictorank train` writes holds; a missing one is a ModelError."""
    if name not in params:
        raise ModelError(f"{where}: params.{name} is missing; retrain the model with `pictorank train`")
    return params[name]


def _check_listed(files: dict[str, str], names: Sequence[str], where: Path) -> None:
    """The files loading reads by fixed name must be among the hash-checked ones: a config that
    drops one from its list would otherwise have it read unchecked."""
    missing = [name for name in names if name not in files]
    if missing:
        raise ModelError(f"{where}: {missing[0]!r} is read but has no file hash; retrain the model")


def _booster_count(count: Any, where: Path) -> int:
    """How many boosters the directory holds."""
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1000:
        raise ModelError(f"{where}: params.boosters must be an integer from 1 to 1000, found {count!r}")
    return count


def _finetuned_id(entry: Any, where: Path) -> str | None:
    """The saved fine-tuned encoder's model id, or None when the model has none."""
    if entry is None:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("model_id"), str):
        raise ModelError(f"{where}: encoder.finetuned must be null or an object with 'dir' and 'model_id'")
    return entry["model_id"]


def unread_folders(config: dict[str, Any], runtime: str) -> tuple[str, ...]:
    """The folders of a saved model that loading on `runtime` does not read: on onnx, with the
    exports the model ships, the fine-tuned encoder's PyTorch weights. A serving install (no
    torch) can do without them, so an image may leave them out."""
    return (ENCODER_DIR,) if runtime == "onnx" and config.get("runtime") is not None else ()


def _load_finetuned(directory: Path, entry: Any, base: Encoder, where: Path) -> Encoder | None:
    """The fine-tuned model's Encoder on PyTorch (sharing the base encoder's disk cache), or None."""
    if entry is None:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("model_id"), str):
        raise ModelError(f"{where}: encoder.finetuned must be null or an object with 'dir' and 'model_id'")
    path = inside(directory, entry.get("dir"), where)
    try:
        model = load_model_dir(path)
    except Exception as exc:  # any failure to read the weights is a broken model dir
        raise ModelError(f"{path}: cannot load the fine-tuned encoder ({type(exc).__name__}: {exc})") from None
    return Encoder(model=model, model_id=entry["model_id"], cache_dir=base.cache_dir, max_cached=base.max_cached)
