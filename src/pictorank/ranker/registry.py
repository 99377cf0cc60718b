"""Every ranking method by name, and every way to load a saved one: the one list the CLI, the
service and the benches read, and the one place that decides which model is the default."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pictorank.artifacts import check_files, check_versions
from pictorank.encoders import Encoder, Encoders, method_encoder
from pictorank.errors import ModelError, UsageError
from pictorank.lexicon import store as lexicon_store
from pictorank.ranker.base import CONFIG_FILE, Ranker
from pictorank.ranker.learned import LearnedRanker, unread_folders
from pictorank.ranker.unlearned import CosineRanker, SeedRanker
from pictorank.settings import CommonSettings

UNLEARNED: dict[str, type[Ranker]] = {cls.method: cls for cls in (SeedRanker, CosineRanker)}
SAVED: dict[str, type[Ranker]] = {**UNLEARNED, LearnedRanker.method: LearnedRanker}
METHODS = tuple(UNLEARNED)  # methods that need no model directory
DEFAULT_METHOD = "cosine"


def make_ranker(method: str, encoder: Encoder | None = None) -> Ranker:
    """An unlearned ranker by method name, with its default parameters."""
    if method not in UNLEARNED:
        raise UsageError(f"unknown method {method!r}; choose one of {sorted(UNLEARNED)}")
    return UNLEARNED[method](encoder=encoder)


def read_config(directory: str | os.PathLike) -> dict[str, Any]:
    """A model directory's ranker.json, checked before anything in the folder is trusted: it is a
    JSON object, made by compatible library versions, of a method this pictorank knows."""
    config_path = Path(directory) / CONFIG_FILE
    if not config_path.is_file():
        raise ModelError(f"{directory}: not a pictorank model directory (no {CONFIG_FILE})")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelError(f"{config_path}: corrupt model config ({exc})") from None
    if not isinstance(config, dict):
        raise ModelError(f"{config_path}: the model config must be a JSON object")
    check_versions(config.get("versions"), config_path)
    method = config.get("method")
    if method is not None and not isinstance(method, str):  # a list is unhashable, a deep one too deep to repr
        raise ModelError(f"{config_path}: unknown method (a {type(method).__name__}, not a name)")
    if method == "open_play":  # saved inside a learned model's folder, which it needs
        raise ModelError(f"{config_path}: open play's ranker is part of the model in {Path(directory).parent}; "
                         "pass that folder (its service uses it for clues without options)")
    if method not in SAVED:
        raise ModelError(f"{config_path}: unknown method {method if method is None else method[:100]!r}")
    return config


def check_model_dir(directory: Path, runtime: str = "onnx") -> None:
    """The checks loading on `runtime` makes before any weights are read: config, versions, file
    hashes (of the files that runtime reads)."""
    config = read_config(directory)
    if "files" in config:
        check_files(directory, config["files"], directory / CONFIG_FILE, unread=unread_folders(config, runtime))


def load_encoders(directory: str | os.PathLike, base: Encoder | None = None, runtime: str = "onnx",
                  threads: int | None = None) -> Encoders:
    """The encoders the model saved in `directory` reads, on `runtime` ('onnx' runs the exports
    a learned model ships; 'torch' the sentence-transformers models). `base` lends its disk cache
    and memory bound, and is the base encoder where the model runs on PyTorch."""
    config = read_config(directory)
    return SAVED[config["method"]].load_encoders(config, Path(directory), base, runtime, threads)


def load_ranker(directory: str | os.PathLike, encoder: Encoder | None = None, encoders: Encoders | None = None,
                runtime: str = "onnx", threads: int | None = None) -> Ranker:
    """Load any saved ranker, checking its config before trusting it. `encoders`: what
    `load_encoders` made of this folder, when the caller hands them to others too; else they are
    made here (over `encoder`, see `load_encoders`)."""
    directory = Path(directory)
    config = read_config(directory)
    cls = SAVED[config["method"]]
    if encoders is None:
        encoders = cls.load_encoders(config, directory, encoder, runtime, threads)
    return cls.from_config(config, directory, encoders)


def serving_encoders(model_dir: Path | None, settings: CommonSettings, base: Encoder | None = None) -> Encoders:
    """The encoders a model is served with, built once: the model folder's (its ONNX exports
    unless `settings.encoder_runtime` is torch, knowing the folder's lexicon vectors), or for an
    unlearned method the base model's fp32 export (pictorank.encoders.method_encoder). Every
    command that ranks or suggests (`predict`, `evaluate`, `compare`, `suggest`, the service)
    starts here, so one model folder gives a string one vector in all of them.
    `base`: the base encoder to build on (a test's stub); by default a new one over the settings'
    cache."""
    base = base or Encoder(cache_dir=settings.cache_dir, max_cached=settings.max_cached_strings)
    if model_dir is None:
        return Encoders(method_encoder(base, settings.encoder_runtime, settings.onnx_threads))
    encoders = load_encoders(model_dir, base, settings.encoder_runtime, settings.onnx_threads)
    lexicon_store.know_stored(Path(model_dir), {"base": encoders.base, "ft": encoders.finetuned})
    return encoders


def default_model(settings: CommonSettings) -> tuple[Path | None, str]:
    """The default model folder when it exists and checks out (config, versions, file hashes),
    with the phrase that names it; else None, with why not (for the log or stderr)."""
    directory = settings.default_model_dir
    if not (directory / CONFIG_FILE).is_file():
        return None, f"the default model did not load (no model at {directory})"
    try:
        check_model_dir(directory, settings.encoder_runtime)
    except ModelError as exc:
        return None, f"the default model did not load ({exc})"
    return directory, f"{directory} (the default model)"
