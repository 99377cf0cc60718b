"""Process-wide settings shared by the CLI and the service: where caches live, and offline mode.

Read from the environment here and nowhere else, so both entry points agree.
"""

from __future__ import annotations

import os
from pathlib import Path

from pictorank.errors import SettingsError


def default_cache_dir() -> Path:
    """Embeddings and fine-tuned encoders cached on disk: `PICTORANK_CACHE_DIR` or ~/.cache/pictorank."""
    env = os.environ.get("PICTORANK_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "pictorank"


def cache_dir_problem(path: Path) -> str | None:
    """Why `path` cannot hold the on-disk caches, or None. Checked when a command or the service
    starts: found only when the cache is first saved, it would end a run after all its work."""
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is None:
        return None
    return "is a file, not a folder" if blocking == path else f"cannot be created: {blocking} is a file"


DEFAULT_MAX_CACHED_STRINGS = 50_000


def max_cached_strings() -> int:
    """How many embeddings each encoder keeps in memory: `PICTORANK_MAX_CACHED_STRINGS`.

    The default keeps a served learned model's embeddings (two encoders, a 384-d vector and its
    key per string) small beside torch and the weights: the process stays under 1 GB.
    """
    raw = os.environ.get("PICTORANK_MAX_CACHED_STRINGS")
    if raw is None or not raw.strip():
        return DEFAULT_MAX_CACHED_STRINGS
    digits = raw.strip()
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 18 or int(digits) < 1:
        raise SettingsError("PICTORANK_MAX_CACHED_STRINGS",
                            f"must be a whole number of at least 1 (at most 18 digits), not {raw[:40]!r}")
    return int(digits)


ENCODER_RUNTIMES = ("onnx", "torch")


def encoder_runtime() -> str:
    """Which runtime a learned model's encoders run on: `PICTORANK_ENCODER_RUNTIME`.

    `onnx` (default) uses the ONNX export a model directory holds (pictorank.onnx_encoder), when
    it holds one; `torch` ignores the export and runs the sentence-transformers models, as
    models trained before the export existed do (benches compare the two with it).
    """
    raw = (os.environ.get("PICTORANK_ENCODER_RUNTIME") or "onnx").strip()
    if raw not in ENCODER_RUNTIMES:
        raise SettingsError("PICTORANK_ENCODER_RUNTIME", f"must be one of {', '.join(ENCODER_RUNTIMES)}, not {raw[:40]!r}")
    return raw


def use_offline_environment() -> None:
    """Never let a library try a model hub: this machine and our users' have no internet.

    Also let torch's OpenMP threads sleep rather than spin while they wait: on a shared CPU
    (other processes busy), spinning threads made one-row encoding many times slower
    (docs/experiments/speed.md). Only effective before torch is imported,
    so every entry point calls this first; values the user set are kept.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
