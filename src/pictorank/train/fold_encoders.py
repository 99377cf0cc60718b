"""The fold encoders: every encoder a training run fine-tunes, and where they are made.

A run fine-tunes one encoder per out-of-fold fold (`oof_split`), one per group of held-out
answer kinds (`kind_splits`: the unfamiliar rows) and the final one on all of train
(`encoder_trainings` lists them). Each is fine-tuned once: its weights are kept in the cache,
keyed by its clues and parameters (`finetuned_encoder`), and every stage that needs it (the
ranker's tables, open play, the clue-giver's benches) reads it back from there.

With a cache, a run fine-tunes them all first, in a process of its own (`finetune_ahead`):
fine-tuning's temporaries (activations, gradients, the optimiser's state, tokenised batches)
stay scattered in a process's heap where trimming cannot return them, and would add to every
later stage's peak. A process that ends returns everything; the stages then read the weights
and exports from the cache.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import os
import pickle
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pictorank.artifacts import library_versions
from pictorank.encoders import Encoder, base_model_version, load_base_model, load_model_dir
from pictorank.encoders.memo import remove_dead_writers
from pictorank.encoders.runtime import method_encoder, served_encoder
from pictorank.errors import PictorankError
from pictorank.evaluation.folds import answer_folds
from pictorank.memory import release_memory
from pictorank.query import Query
from pictorank.train.config import Log, TrainConfig
from pictorank.train.finetune import FinetuneParams, finetune, weights_digest


def query_folds(queries: Sequence[Query], n_folds: int, seed: int) -> np.ndarray:
    """A fold number per query, by answer (pictorank.evaluation.folds.answer_folds)."""
    return answer_folds([q.answer for q in queries], n_folds, seed)


def _finetune_key(queries: Sequence[Query], params: FinetuneParams) -> str:
    """Names a fine-tuning run by everything that determines its weights."""
    digest = hashlib.sha256()
    digest.update(json.dumps([asdict(params), base_model_version(), library_versions()], sort_keys=True).encode())
    for q in queries:
        digest.update(json.dumps([q.hints, q.options, q.answer]).encode())
    return digest.hexdigest()[:20]


def finetuned_encoder(
    queries: Sequence[Query], epochs: float, config: TrainConfig, cache_dir: Path | None, log: Log
) -> tuple[Any, Encoder, bool]:
    """A copy of the base model fine-tuned on `queries`, an Encoder over it as the saved model
    will run it (its ONNX export when there is one: pictorank.encoders.runtime), and whether the
    weights came from the cache (then no fine-tuning time was spent).

    Fine-tuning is the slow part of training (minutes on a CPU) and is deterministic, so the
    weights are kept under `cache_dir/finetuned/<key>`, the key hashing data, parameters and
    library versions: retraining LightGBM or running the ablations reuses them.
    """
    params = config.finetune_params(epochs)
    stored = Path(cache_dir) / "finetuned" / _finetune_key(queries, params) if cache_dir is not None else None
    started = time.perf_counter()
    reused = stored is not None and (stored / "config.json").is_file()
    if reused:
        model = load_model_dir(stored)
        log(f"  fine-tuned encoder reused from {stored}")
    else:
        model = load_base_model()
        finetune(model, queries, params, log=log)
        if stored is not None:
            _keep(model, stored, log)
    model_id = finetuned_model_id(model)
    log(f"  fine-tuned {epochs:g} epoch(s) on {len(queries)} clues in {time.perf_counter() - started:.0f} s ({model_id})")
    return model, served_encoder(model, model_id, "ft", config.quantization, cache_dir), reused


def _keep(model: Any, stored: Path, log: Log) -> None:
    """Save fine-tuned weights in the cache (atomically). A cache that cannot take them (a full
    disk, a read-only folder) costs only a later run its fine-tuning: logged, never the end of
    this run."""
    tmp = stored.with_name(stored.name + f".{os.getpid()}.tmp")
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        remove_dead_writers(stored.parent, stored.name, ".tmp")  # what a killed run left half-saved
        model.save(str(tmp))
        os.replace(tmp, stored)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        log(f"  the fine-tuned encoder is not kept in the cache ({exc.strerror or exc}); training goes on")


def finetuned_model_id(model: Any) -> str:
    """The fine-tuned encoder's id (its weights' digest), as the saved model names it."""
    return f"finetuned-{weights_digest(model)}"


def answer_kinds(queries: Sequence[Query], encoder: Encoder, n_kinds: int, seed: int) -> dict[str, int]:
    """Each distinct answer's kind: its k-means cluster (`n_kinds` clusters, seeded) in the base
    encoder's space, so that a kind held out is a region of meaning the fold never saw."""
    from sklearn.cluster import KMeans  # lazy: only training needs it (lightgbm imports it anyway)

    answers = sorted({q.answer for q in queries if q.answer is not None})
    k = max(1, min(n_kinds, len(answers)))
    labels = KMeans(n_clusters=k, random_state=seed, n_init=4).fit_predict(encoder.encode(answers))
    return dict(zip(answers, (int(label) for label in labels)))


def oof_split(queries: Sequence[Query], folds: np.ndarray, k: int) -> tuple[list[Query], list[int]]:
    """Fold `k`'s split: the clues its encoder and tables are fitted on (every other fold's), and
    the indices of the clues they score (its own)."""
    inside = [q for q, f in zip(queries, folds) if f != k]
    return inside, [i for i, f in enumerate(folds) if f == k]


def kind_splits(queries: Sequence[Query], kinds: dict[str, int], groups: int
                ) -> Iterator[tuple[int, list[Query], list[int]]]:
    """Each group of answer kinds (`answer_kinds` dealt into `groups`): the group, the clues of the
    other groups (what its encoder is fitted on) and the indices of its own clues. A group that
    cannot be held out (fewer than two answers to redraw options from, or nothing left to fit on)
    comes with no clues inside."""
    for g in range(groups):
        held = [i for i, q in enumerate(queries) if kinds[q.answer] % groups == g]
        inside = [q for q in queries if kinds[q.answer] % groups != g]
        if len({queries[i].answer for i in held}) < 2:
            inside = []
        yield g, inside, held


def encoder_trainings(train: Sequence[Query], config: TrainConfig, kinds_encoder: Encoder
                      ) -> list[tuple[list[Query], float]]:
    """Every fine-tune a run of `config` (sized for `train`) makes, as (clues, epochs): the
    out-of-fold folds', the unfamiliar groups' and the final one. `kinds_encoder`: the exact base
    encoder the answer kinds are clustered in (pictorank.train.oof.unfamiliar_features)."""
    if not config.finetune:
        return []
    folds = query_folds(train, config.folds, config.seed)
    runs = [(oof_split(train, folds, k)[0], config.oof_epochs) for k in range(config.folds)]
    if config.unfamiliar_groups > 0:
        kinds = answer_kinds(train, kinds_encoder, config.answer_kinds, config.seed)
        runs += [(inside, config.oof_epochs) for _, inside, _ in kind_splits(train, kinds, config.unfamiliar_groups)
                 if inside]
    return [*runs, (list(train), config.final_epochs)]


@dataclass(frozen=True)
class Exported:
    """An encoder the fine-tuning process has exported into the cache, announced so that the
    caller can embed with it meanwhile (`finetune_ahead`'s `meanwhile`): `role` "base" (the base
    model's export) or "fold" (an out-of-fold fold's encoder), `model_id` the model's id and
    `folder` its export (pictorank.encoders.runtime.exported_encoder reads it)."""

    role: str
    model_id: str
    folder: Path


def finetune_ahead(train: Sequence[Query], config: TrainConfig, base_encoder: Encoder, log: Log,
                   meanwhile: Callable[[Exported], None] | None = None) -> bool:
    """Fine-tune every encoder of `encoder_trainings` into the cache, in a process of its own (see
    the module's docstring), logging what it says; False, with nothing done, where that cannot
    help: without fine-tuning, without a cache to hand the weights over, or over another encoder
    than the package's base model (the process could not rebuild it). Encoders already in the
    cache are only read. A process that fails or dies is a PictorankError with its last words.

    Fine-tuning runs on one thread (pictorank.train.finetune), so the machine's other core is
    free: with `meanwhile` and exported encoders, the process exports the base model first and
    announces each export a later stage embeds with (the base model's, each fold encoder's), and
    `meanwhile` is called with each, in this process, while the fine-tuning goes on. Announced
    after the process has ended, it is not called: the later stages embed with every core.

    The process is a fresh interpreter started on `run_process` (not multiprocessing's spawn,
    which imports the caller's main script again: a bench run as a script would run twice)."""
    if not config.finetune or base_encoder.cache_dir is None or base_encoder.model_id != base_model_version():
        return False
    announce = meanwhile is not None and config.quantization is not None
    with tempfile.TemporaryDirectory(prefix="pictorank-finetune-") as scratch:
        job = Path(scratch) / "job.pkl"
        job.write_bytes(pickle.dumps((list(train), config, base_encoder.cache_dir, announce)))
        command = [sys.executable, "-c", f"from {__name__} import run_process; run_process()", str(job)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1) as process:
            assert process.stdout is not None
            exported: queue.Queue[Exported | None] = queue.Queue()
            last: list[str] = []
            reader = threading.Thread(target=_relay, args=(process.stdout, log, exported, last), daemon=True)
            reader.start()
            while (item := exported.get()) is not None:
                if meanwhile is not None and process.poll() is None:
                    meanwhile(item)
            reader.join()
        if process.returncode != 0:
            said = last[0].removeprefix(FAILED) if last else f"it ended with exit code {process.returncode}"
            raise PictorankError(f"fine-tuning failed: {said}")
    return True


FAILED = "fine-tuning failed: "  # how the process's last line says what it raised
EXPORTED = "exported for embedding ahead: "  # how the process announces an export (then JSON)


def _relay(lines: Iterator[str], log: Log, exported: "queue.Queue[Exported | None]", last: list[str]) -> None:
    """The process's output, line by line: announced exports to `exported`, a failure kept in
    `last`, the rest logged; None once it has ended, or once reading it failed (the caller
    waits for it)."""
    try:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith(EXPORTED):
                fields = json.loads(line.removeprefix(EXPORTED))
                exported.put(Exported(fields["role"], fields["model_id"], Path(fields["folder"])))
            elif line.startswith(FAILED):
                last[:] = [line]
            else:
                log(line)
    finally:
        exported.put(None)


def run_process() -> None:
    """The fine-tuning process (`finetune_ahead`): every encoder of `encoder_trainings` fine-tuned
    (or read back) and exported into the cache, each log line on stdout; with `announce`, the base
    model exported first and each export a later stage embeds with announced (EXPORTED). On an
    error, one last line saying what was raised, and exit code 1."""
    train, config, cache_dir, announce = pickle.loads(Path(sys.argv[1]).read_bytes())
    say = functools.partial(print, flush=True)
    try:
        if announce:
            _export_base(config, cache_dir, say)
        trainings = encoder_trainings(train, config, Encoder(cache_dir=cache_dir))
        gc.collect()
        release_memory()  # the base models exported and clustered with are not kept through the fine-tunes
        for i, (inside, epochs) in enumerate(trainings):
            model, served, _ = finetuned_encoder(inside, epochs, config, cache_dir, say)
            if announce and i < config.folds:  # the out-of-fold folds' encoders come first
                _announce("fold", finetuned_model_id(model), served, say)
            del model, served
            gc.collect()
            release_memory()  # one fine-tune's leftovers are not the next one's peak
    except Exception as exc:
        say(f"{FAILED}{type(exc).__name__}: {exc}")
        sys.exit(1)


def _export_base(config: TrainConfig, cache_dir: Path, say: Log) -> None:
    """Export the base model into the cache and announce it (the lexicon stage embeds with it);
    then its fp32 export, which the unlearned methods (seed, cosine) are served on
    (pictorank.encoders.runtime.method_encoder): made here, where PyTorch and the base model are
    loaded anyway, and while the caller embeds, so that the first command to rank with them after
    training (make demo's report) neither imports torch nor exports."""
    base = served_encoder(load_base_model(), base_model_version(), "base", config.quantization, cache_dir)
    _announce("base", base_model_version(), base, say)
    method_encoder(Encoder(cache_dir=cache_dir))


def _announce(role: str, model_id: str, served: Encoder, say: Log) -> None:
    say(EXPORTED + json.dumps({"role": role, "model_id": model_id, "folder": str(served.model.directory)}))
