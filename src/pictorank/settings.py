"""Process-wide settings shared by the command line and the service, read from `PICTORANK_*`
environment variables by one pydantic-settings object.

The environment is read here and in the service's settings, which extend these
(pictorank.api.settings.Settings); nothing below the entry points reads it. The command line and
the service read the settings once and pass what a lower floor needs (a cache folder, a memory
bound, the encoder runtime) down as arguments, so a library call does what its arguments say.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from pictorank.errors import SettingsError

DEFAULT_MAX_CACHED_STRINGS = 20_000
ENCODER_RUNTIMES = ("onnx", "torch")


def repository_root() -> Path:
    """The repository this package runs from: the source checkout of an editable install, else
    (`pip install .` puts the package in site-packages, far from the checkout) the working
    directory, from where a user of such an install runs the commands."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def bundled_model_dir() -> Path:
    """`models/default` of the repository: what `make demo` trains and `pictorank serve` prefers."""
    return repository_root() / "models" / "default"


def home_cache_dir() -> Path:
    """~/.cache/pictorank."""
    return Path.home() / ".cache" / "pictorank"


def cache_dir_problem(path: Path) -> str | None:
    """Why `path` cannot hold the on-disk caches, or None. Checked when a command or the service
    starts: found only when the cache is first saved, it would end a run after all its work."""
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is None:
        return None
    return "is a file, not a folder" if blocking == path else f"cannot be created: {blocking} is a file"


class CommonSettings(BaseSettings):
    """What every entry point needs: where caches live, how many embeddings stay in memory, which
    runtime a model's encoders run on, and which model is the default."""

    model_config = SettingsConfigDict(env_prefix="PICTORANK_", protected_namespaces=(), extra="ignore",
                                      env_ignore_empty=True)

    cache_dir: Path = Field(
        default_factory=home_cache_dir,
        description="on-disk embedding, lexicon vector and fine-tuned encoder cache, shared by the command line and "
        "the service (default ~/.cache/pictorank): restarts, further workers and retraining skip encoding the "
        "vocabulary and the lexicon",
    )
    max_cached_strings: int = Field(
        DEFAULT_MAX_CACHED_STRINGS, ge=1, lt=10**18,
        description="embeddings each encoder keeps in memory (least recently used forgotten first), so a server "
        "that meets new strings forever stays bounded",
    )
    encoder_runtime: Literal["onnx", "torch"] = Field(
        "onnx", description="what a learned model's encoders run on: `onnx` (the exports its folder holds, no "
        "torch) or `torch` (the sentence-transformers models; benches compare the two)",
    )
    onnx_threads: int | None = Field(
        None, ge=1, le=256, description="batches each encoder runs at once, each on one onnxruntime thread (default: the machine's cores, at most 4); it changes speed, never a vector",
    )
    default_model_dir: Path = Field(
        default_factory=bundled_model_dir,
        description="the model `pictorank serve` serves, and `pictorank suggest` reads with, when none is named, "
        "if it loads (otherwise the default method); default <repo>/models/default",
    )

    @field_validator("cache_dir")
    @classmethod
    def _usable_cache_dir(cls, path: Path) -> Path:
        """A file here would end a run in a traceback when the first vectors are saved."""
        problem = cache_dir_problem(path)
        if problem:
            raise ValueError(f"{path} {problem}")
        return path


SettingsType = TypeVar("SettingsType", bound=BaseSettings)


def read_settings(cls: type[SettingsType] = CommonSettings, **overrides: object) -> SettingsType:  # type: ignore[assignment]
    """`cls` from the environment (and `overrides`); a bad value is a SettingsError naming its
    variable, which the entry points turn into one line."""
    try:
        return cls(**overrides)
    except ValidationError as exc:
        error = exc.errors()[0]
        variable = "PICTORANK_" + "_".join(str(part) for part in error["loc"][:1]).upper()
        raise SettingsError(variable, error["msg"]) from None
    except ValueError as exc:  # pydantic-settings' own parsing (a list that is not JSON)
        raise _parsing_error(exc) from None


def _parsing_error(exc: ValueError) -> SettingsError:
    """pydantic-settings' "error parsing value for field "cors_origins" ..." as a SettingsError
    that names the variable and says what was wrong with its value (the cause it chains)."""
    message = str(exc).splitlines()[0]
    field = re.search(r'for field "(\w+)"', message)
    if field is None:
        return SettingsError("PICTORANK_*", message)
    cause = exc.__cause__
    problem = f"not valid JSON ({cause})" if isinstance(cause, json.JSONDecodeError) else message
    return SettingsError(f"PICTORANK_{field.group(1).upper()}", problem)


def use_offline_environment(quiet: bool = False) -> None:
    """Never let a library try a model hub: this machine and our users' have no internet.

    Also let torch's OpenMP threads sleep rather than spin while they wait: on a shared CPU,
    spinning threads made small encodings many times slower. Only effective before torch is
    imported, so every entry point calls this first; values the user set are kept. `quiet`
    also silences transformers' "Loading weights" bar (read by huggingface_hub when
    transformers is first imported), which ignores our own progress flag.
    """
    if quiet:
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
