"""`pictorank train` end to end: one pipeline from the data files to a model folder a service
serves, in named stages (`train_model`):

    ranker      fold encoders (`fold_encoders`: fine-tuned first, in a process of their own on
                one thread, while this process embeds the later stages' lexicon ahead on the
                other core: `embed_ahead`), out-of-fold feature tables (`oof`), CV and the
                LambdaMART bag (`lambdamart`), its calibration: the model folder itself
    open play   open play's own ranker, on train's clues against the English lexicon (`open_play`),
                while the lexicon's words are embedded by the model's fine-tuned encoder on the
                core its fold passes leave free (`embedding_behind`)
    lexicon     that lexicon embedded by the model's encoders (open play searches it), stored,
                then open play's ranker beside it
    clue-giver  the clue model a service of the folder reads (pictorank.suggest)

Each stage logs its time, and the folder's stages.json keeps them. The later three add to a
folder that already serves: one that fails is logged and the model stands without it.

The one rule that shapes this module: anything fitted on train (the fine-tuned encoder, the
position weights, the association tables) must not have seen the rows the ranker learns from.
An encoder that was taught "sun; flower -> sunflower" gives that row a cosine no test row will
ever get, and LightGBM would learn to trust it. So train is split into folds grouped by answer;
each fold's features come from an encoder and tables fitted on the other folds (out-of-fold),
while val and test get the encoder and tables fitted on all of train.

LightGBM's LambdaMART (query groups = rows) then learns from the OOF table; a small grid of
parameters and the number of trees are chosen by grouped k-fold CV on train, and a bag of
boosters with that setting (one per seed, each tree on a random share of the columns:
pictorank.ranker.bag) is fitted on all of train. The same CV gives the recipe's train-CV estimate
(pictorank.train.estimate). Val makes no choice: when given, it is scored once, at the end, and
stored as the held-out report. Seeds and thread counts are fixed, so two runs give the same model.
"""

from __future__ import annotations

import contextlib
import gc
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from pictorank.artifacts import check_replaceable, library_versions, sha256_file, write_json
from pictorank.encoders import Encoder
from pictorank.encoders.runtime import exported_encoder
from pictorank.errors import DataError, PictorankError, UsageError
from pictorank.evaluation import evaluate_rankings
from pictorank.evaluation.calibration import expected_calibration_error
from pictorank.features import selected_features
from pictorank.lexicon import DEFAULT_SOURCE, Lexicon, load_lexicon
from pictorank.lexicon import store as lexicon_store
from pictorank.lexicon.store import DEFAULT_SPACE
from pictorank.memory import peak_rss_mb, release_memory
from pictorank.open_play import OpenPlayRanker, lexicon_with_data, store_lexicon, stored_words
from pictorank.puzzles import HintVocabulary, Puzzle, load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import LearnedRanker, Ranking
from pictorank.ranker.calibration import Calibrator
from pictorank.ranker.registry import load_encoders
from pictorank.settings import CommonSettings
from pictorank.suggest.assembly import fit_for_serving
from pictorank.train.config import Log, TrainConfig
from pictorank.train.calibrate import first_is_right, fit_calibrator
from pictorank.train.estimate import answer_ranks, blended, cv_estimate, format_estimate
from pictorank.train.lambdamart import column_share, cv_select, fit_bag, held_out_scores
from pictorank.train.fold_encoders import Exported, finetuned_model_id
from pictorank.train.oof import TrainingTables, build_tables, check_trainable
from pictorank.train.open_play import fit_for_lexicon

STAGES_FILE = "stages.json"  # each stage's seconds and peak memory; informational, outside the checked files


def fit_ranker_from_tables(tables: TrainingTables, config: TrainConfig, log: Log = print) -> LearnedRanker:
    """CV-select parameters and trees, fit the LambdaMART bag on the OOF table, and wrap it all in
    a LearnedRanker whose `training` holds the CV results and the train-CV estimate."""
    config = tables.sized(config)  # a small training set: fewer CV folds, smaller leaves (TrainConfig.sized_for)
    columns = selected_features(config.drop_groups)
    started = time.perf_counter()
    X = tables.X_train[columns]
    params, trees, cv_results = cv_select(X, tables.y_train, tables.sizes_train, tables.folds, config, log)
    bag = fit_bag(X, tables.y_train, tables.sizes_train, params, trees, config)
    log(f"LambdaMART {params}: {len(bag)} boosters of {trees} trees (the median of the CV folds' early stopping), "
        f"{column_share(config, X.shape[1]):.0%} of the columns a tree")
    scores = held_out_scores(X, tables.y_train, tables.sizes_train, tables.folds, params, trees, config)
    estimate = _train_cv(tables, scores, config)
    log(format_estimate(estimate))
    calibrator = _calibrate(tables, scores, config)
    if calibrator is None:
        log("no confidence calibration: the held-out rankings' first options were all right or all wrong")
    else:
        log(f"confidence calibrated on {calibrator.rows} out-of-fold rankings (first right in {calibrator.accuracy:.1%})")
    training = {"lgbm_params": params, "cv": cv_results, "trees": [trees] * len(bag), "train_cv": estimate,
                "lgbm_seconds": time.perf_counter() - started}
    # The fine-tuned encoder may be its ONNX export (pictorank.encoders.runtime): the saved model names
    # the weights it came from, as the PyTorch runtime loads them.
    finetuned_id = finetuned_model_id(tables.finetuned_model) if tables.finetuned_model is not None else None
    return LearnedRanker(tables.extractor, bag, columns, tables.finetuned_model, config.num_threads,
                         training, calibrator, fallback=config.fallback, quantization=config.quantization,
                         finetuned_id=finetuned_id)


def _labels(tables: TrainingTables) -> list[np.ndarray]:
    bounds = np.cumsum([0, *tables.sizes_train])
    return [tables.y_train[bounds[i] : bounds[i + 1]] for i in range(len(tables.sizes_train))]


def _train_cv(tables: TrainingTables, scores: list[np.ndarray], config: TrainConfig) -> dict[str, Any]:
    """The recipe's train-CV estimate: the held-out CV scores ranked as the saved model ranks
    (blended towards cosine when it blends), over the train clues as they are (not the unfamiliar
    rows), by CV fold."""
    ranked = blended(scores, tables.X_train) if config.fallback else scores
    familiar = tables.familiar if tables.familiar is not None else np.ones(len(scores), dtype=bool)
    return cv_estimate(answer_ranks(ranked, _labels(tables)), tables.folds % config.cv_folds, familiar)


def _calibrate(tables: TrainingTables, scores: list[np.ndarray], config: TrainConfig) -> Calibrator | None:
    """Confidence calibration from held-out CV scores of the OOF train table (never the final
    booster's scores of its own training rows, which are overconfident)."""
    sorted_scores, correct = first_is_right(scores, _labels(tables))
    if len(set(correct)) < 2:  # a tiny training set may rank every held-out row right: nothing to calibrate
        return None
    return fit_calibrator(sorted_scores, correct, f"out-of-fold {config.cv_folds}-fold CV scores of the train rows")


def fit_learned_ranker(
    train: Sequence[Query], encoder: Encoder, config: TrainConfig, log: Log = print,
    meanwhile: Callable[[Exported], None] | None = None,
) -> tuple[LearnedRanker, TrainingTables]:
    """The whole training procedure on queries with answers: OOF tables, then LambdaMART. It sees
    train only; `pictorank train` and the benches both come through here. `meanwhile`: work for
    the core fine-tuning leaves free (pictorank.train.fold_encoders.finetune_ahead)."""
    tables = build_tables(train, encoder, config, log, meanwhile)
    return fit_ranker_from_tables(tables, config, log), tables


@dataclass(frozen=True)
class TrainingFiles:
    """What a model is made from: training puzzles, the optional held-out puzzles (scored once,
    at the end, for the report), and the hint descriptions."""

    train: Path
    val: Path | None
    hints: Path


class Stages:
    """The named stages of one run: each logs one line with its time as it ends (its own steps
    log what they do meanwhile); `seconds` keeps the times for the model folder, `peak_mb` the
    process's highest resident memory so far as each stage ends (it only grows: the stage where
    it jumps is the one that set it).

    A stage's leftovers (its tables, encoder runs and sessions) are collected and their pages
    handed back to the system as it ends: left in the allocator's arenas, they added to the next
    stage's peak, and the run's peak is what decides the machine it needs."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.seconds: dict[str, float] = {}
        self.peak_mb: dict[str, int | None] = {}

    @contextlib.contextmanager
    def stage(self, name: str, optional: bool = False) -> Iterator[None]:
        """Time the stage `name`. An `optional` stage that fails on the data or the disk is only
        logged: it adds to a model folder that serves without it."""
        started = time.perf_counter()
        try:
            yield
        except (PictorankError, ValueError, OSError) as exc:
            if not optional:
                raise
            self.log(f"== {name}: not prepared for this model: {exc}")
            return
        finally:
            self.seconds[name] = round(time.perf_counter() - started, 1)
            self.peak_mb[name] = peak_rss_mb()
            gc.collect()
            release_memory()
        peak = f" (the run's peak memory so far {self.peak_mb[name]} MB)" if self.peak_mb[name] is not None else ""
        self.log(f"== {name}: done in {self.seconds[name]:.0f} s{peak}")


def train_model(files: TrainingFiles, out_dir: Path, config: TrainConfig, encoder: Encoder, settings: CommonSettings,
                log: Log = print, force: bool = False, lexicon: bool = True) -> dict[str, Any]:
    """`pictorank train`: every stage from the files to a served model folder (see the module's
    docstring); the ranker's metadata with each stage's seconds. `encoder`: the base model on
    PyTorch over the run's cache; `settings`: the cache and encoder runtime the later stages
    read the saved folder with, as a service would. Without `lexicon` the folder has no
    lexicon and no open play of its own (open play then guesses the data's words)."""
    stages = Stages(log)
    outcome: dict[str, Any] = {}
    ahead = embed_ahead(DEFAULT_SOURCE, [p for p in (files.train, files.val) if p], settings.cache_dir, log
                        ) if lexicon else None
    with stages.stage("ranker"):
        outcome = train_command(files.train, files.val, files.hints, out_dir, config, encoder, log, force, ahead)
    ranker, train = outcome.pop("ranker"), outcome.pop("train")
    del ahead  # the lexicons it read
    if lexicon:
        vocabulary_files = [p for p in (files.train, files.val) if p]
        space = DEFAULT_SPACE if config.finetune else "base"
        play: OpenPlayRanker | None = None
        with stages.stage("open play", optional=True):
            words = lexicon_with_data(DEFAULT_SOURCE, vocabulary_files)
            with embedding_behind(out_dir, settings, words, space, log):
                play = fit_for_lexicon(words, ranker, train, load_lexicon(DEFAULT_SOURCE), encoder, config, log)
            del words
        with stages.stage("lexicon", optional=True):
            vectors = store_lexicon(out_dir, settings, DEFAULT_SOURCE, space, vocabulary_files)
            log(f"lexicon of {stored_words(vectors)} in the {vectors.space} space")
            del vectors
            if play is not None:
                play.save(out_dir)  # it serves from the stored lexicon: saved once that is there
        del play
    # The clue-giver reads the saved folder: the fitted ranker (its encoders, sessions and tables) goes
    # first, so that the run's peak, which the clue-giver's fit sets, does not include it.
    del ranker, train
    gc.collect()
    release_memory()
    with stages.stage("clue-giver", optional=True):
        fit_for_serving(out_dir, files.train, files.hints, settings)
    write_json(out_dir / STAGES_FILE, {"seconds": stages.seconds, "peak_mb": stages.peak_mb})
    return {**outcome, "stages": stages.seconds}


def embed_ahead(lexicon_name: str, vocabulary_files: Sequence[Path], cache_dir: Path | None, log: Log
                ) -> Callable[[Exported], None]:
    """The later stages' embedding, done on the core fine-tuning leaves free (`finetune_ahead`'s
    `meanwhile`) into the cache they read from (pictorank.lexicon.store.embedded): with the base
    model's export, the lexicon stage's words and glosses; with each fold encoder's, the words
    open play's folds search. One thread: the fine-tuning holds the other core. Embedding ahead
    only saves time, so a lexicon that cannot be read is logged and left to its stage."""
    words: list[Lexicon] = []  # the lexicon stage's and open play's, read once, when first needed

    def embed(exported: Exported) -> None:
        started = time.perf_counter()
        try:
            if not words:
                words.extend([lexicon_with_data(lexicon_name, vocabulary_files), load_lexicon(lexicon_name)])
            encoder = exported_encoder(exported.folder, exported.model_id, cache_dir, None, threads=1)
            if exported.role == "base":
                lexicon_store.embedded(encoder, words[0].words)
                lexicon_store.embed_glosses(words[0], encoder)
            else:
                lexicon_store.embedded(encoder, words[1].words)
        except (PictorankError, OSError, ValueError) as exc:
            log(f"embedding ahead with {exported.model_id}: not done ({exc})")
            return
        log(f"embedded the lexicon ahead with {encoder.model_id} in {time.perf_counter() - started:.0f} s")

    return embed


@contextlib.contextmanager
def embedding_behind(model_dir: Path, settings: CommonSettings, words: Lexicon, space: str, log: Log
                     ) -> Iterator[None]:
    """The lexicon stage's slow part, `words`' vectors in the searched `space` by the model's
    fine-tuned encoder, embedded into the cache (pictorank.lexicon.store.embedded) on one
    onnxruntime thread while the body runs (open play's fold passes: Python, one core), and
    waited for as it ends; the lexicon stage then reads them back. Nothing to do in the base
    space (its vectors were embedded ahead, or open play embeds them) or without a cache to
    leave them in. Like embedding ahead it only saves time: a failure is logged and left to the
    lexicon stage."""
    if space == "base" or settings.cache_dir is None:
        yield
        return

    def embed() -> None:
        started = time.perf_counter()
        try:
            encoder = load_encoders(model_dir, Encoder(cache_dir=settings.cache_dir), settings.encoder_runtime,
                                    threads=1).finetuned
            if encoder is None:
                return
            lexicon_store.embedded(encoder, words.words)
        except (PictorankError, OSError, ValueError) as exc:
            log(f"embedding the lexicon behind open play: not done ({exc})")
            return
        log(f"embedded the lexicon with {encoder.model_id} beside open play in {time.perf_counter() - started:.0f} s")

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pictorank-behind") as behind:
        behind.submit(embed)
        yield


def train_command(
    train_path: str | Path, val_path: str | Path | None, hints_path: str | Path, out_dir: str | Path,
    config: TrainConfig, encoder: Encoder, log: Log = print, force: bool = False,
    meanwhile: Callable[[Exported], None] | None = None,
) -> dict[str, Any]:
    """The ranker stage: load the files, train on train alone, save the model directory. With
    `val_path`, val is scored once, after every choice is made, and stored as `held_out_report`.
    Returns the metadata, with the fitted `ranker` and the `train` queries for the later stages.
    `meanwhile`: work for the core fine-tuning leaves free (`embed_ahead`).

    The destination and both files are checked first (`check_replaceable`, answers in every row):
    minutes of training must not end in a refusal.
    """
    paths = {"train": train_path, **({"val": val_path} if val_path is not None else {}), "hints": hints_path}
    check_replaceable(out_dir, force, kind="model", inputs=tuple(paths.values()))
    started = time.perf_counter()
    vocab = load_hints(hints_path)
    train_puzzles = _answered(train_path, vocab)
    val_puzzles = _answered(val_path, vocab) if val_path is not None else None
    train = to_queries(train_puzzles, vocab)
    try:
        check_trainable(train)  # before any work: fine-tuning would take minutes
    except UsageError as exc:
        raise DataError(train_path, None, "answer", str(exc)) from None
    ranker, tables = fit_learned_ranker(train, encoder, config, log, meanwhile)
    config = tables.sized(config)  # what was really run, for the metadata
    train_seconds = time.perf_counter() - started
    val = to_queries(val_puzzles, vocab) if val_puzzles is not None else []
    metadata = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": library_versions(),
        "training_files": {role: {"path": str(path), "sha256": sha256_file(path)} for role, path in paths.items()},
        "config": config.to_dict(),
        "seeds": {"seed": config.seed, "torch": config.seed, "numpy": config.seed, "lightgbm": config.seed},
        "position_weights": {str(k): v for k, v in ranker.extractor.position_weights_.items()},
        "train_cv": ranker.training["train_cv"],
        "held_out_report": held_out_report(ranker, val_puzzles, val) if val_puzzles is not None else None,
        "seconds": {**tables.seconds, "total_training": train_seconds},
    }
    # Shipped embedded with the model (ranker.shipped): every description and the training files'
    # options, so a server's start-up and the clues it meets re-encode only what is new.
    options = sorted({o for q in (*train, *val) for o in q.options})
    started = time.perf_counter()
    ranker.save(out_dir, metadata=metadata, force=force, vocabulary=(sorted(vocab.descriptions.values()), options))
    if config.quantization is not None:
        log(f"saved {out_dir} with its ONNX encoders ({config.quantization}) and {len(options)} options' "
            f"embeddings in {time.perf_counter() - started:.1f} s")
    return {**ranker.training, **metadata, "ranker": ranker, "train": train}


def _answered(path: str | Path, vocab: HintVocabulary) -> list[Puzzle]:
    """The puzzles of `path`, every one with its answer (training and the held-out report need them)."""
    puzzles = load_puzzles(path, vocab)
    if any(p.answer is None for p in puzzles):
        raise DataError(path, None, "answer", "training needs an answer in every row (train/val files)")
    return puzzles


def held_out_report(ranker: LearnedRanker, puzzles: Sequence[Puzzle], queries: Sequence[Query]) -> dict[str, Any]:
    """Val scored once by the finished model: its metrics and how well its confidence matches
    val's outcomes. Nothing in training reads it back."""
    ranked = ranker.rank(queries)
    result = evaluate_rankings(puzzles, [r.options for r in ranked])
    return {"rows": len(queries), "overall": result["overall"], "by_subtask": result["by_subtask"],
            "calibration": _calibration(ranker, queries, ranked)}


def _calibration(ranker: LearnedRanker, val: Sequence[Query], ranked: list[Ranking]) -> dict[str, Any] | None:
    """How well the confidence matches val's outcomes; `ranked` as `rank` returns it. None for a
    model without a confidence (its held-out train rankings were all right or all wrong: nothing
    to calibrate on)."""
    confidences = [r.confidence for r in ranked]
    if ranker.calibrator is None or any(c is None for c in confidences):
        return None
    correct = [r.options[0] == query.answer for query, r in zip(val, ranked)]
    return {"ece": expected_calibration_error(confidences, correct), "mean_confidence": float(np.mean(confidences)),
            "hits@1": float(np.mean(correct)), "rows": len(val)}
