"""Every ranking method by name: the one list the CLI, the service and the benches read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pictorank.artifacts import check_versions
from pictorank.encoder import Encoder
from pictorank.errors import ModelError, UsageError
from pictorank.ranker.base import CONFIG_FILE, Ranker
from pictorank.ranker.learned import LearnedRanker
from pictorank.ranker.unlearned import CosineRanker, SeedRanker

UNLEARNED: dict[str, type[Ranker]] = {cls.method: cls for cls in (SeedRanker, CosineRanker)}
SAVED: dict[str, type[Ranker]] = {**UNLEARNED, LearnedRanker.method: LearnedRanker}
METHODS = tuple(UNLEARNED)  # methods that need no model directory
DEFAULT_METHOD = "cosine"


def make_ranker(method: str, encoder: Encoder | None = None) -> Ranker:
    """An unlearned ranker by method name, with its default parameters."""
    if method not in UNLEARNED:
        raise UsageError(f"unknown method {method!r}; choose one of {sorted(UNLEARNED)}")
    return UNLEARNED[method](encoder=encoder)


def load_ranker(directory: str | os.PathLike, encoder: Encoder | None = None) -> Ranker:
    """Load any saved ranker, checking its config before trusting it."""
    directory = Path(directory)
    config_path = directory / CONFIG_FILE
    if not config_path.is_file():
        raise ModelError(f"{directory}: not a pictorank model directory (no {CONFIG_FILE})")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{config_path}: corrupt model config ({exc})") from None
    if not isinstance(config, dict):
        raise ModelError(f"{config_path}: the model config must be a JSON object")
    check_versions(config.get("versions"), config_path)
    method = config.get("method")
    if method not in SAVED:
        raise ModelError(f"{config_path}: unknown method {method!r}")
    return SAVED[method].from_config(config, directory, encoder)
