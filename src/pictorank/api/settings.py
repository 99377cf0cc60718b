"""Service settings, read from `PICTORANK_*` environment variables (pydantic-settings).

Every setting has a default that works from a source checkout or the Docker image, where the
package is installed in editable mode from the repository: the bundled Bliss data is then found
at `<repo>/data/bliss`, three directories above this file. An installation without the data
(e.g. a wheel) must set `PICTORANK_DATA_DIR` or the individual paths.

Examples::

    PICTORANK_MODEL_DIR=models/learned     # serve a saved model (any method load_ranker knows)
    PICTORANK_METHOD=seed                  # unlearned method when no model dir is given
    PICTORANK_HINTS=emoji_descriptions.csv # another pictogram vocabulary
    PICTORANK_CORS_ORIGINS='["https://game.example"]'   # lists are JSON
    PICTORANK_CACHE_DIR=/var/cache/pictorank   # embedding cache, the same variable as the CLI's
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from pictorank.config import default_cache_dir
from pictorank.ranker import DEFAULT_METHOD, METHODS


def bundled_data_dir() -> Path:
    """`data/bliss` of the repository this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[3] / "data" / "bliss"


class Settings(BaseSettings):
    """What the service serves and how; see the module docstring for the environment variables."""

    model_config = SettingsConfigDict(env_prefix="PICTORANK_", protected_namespaces=(), extra="ignore")

    # What to serve.
    model_dir: Path | None = Field(None, description="saved model directory; None serves `method`")
    method: str = Field(
        DEFAULT_METHOD,
        description=f"unlearned method when no model_dir: one of {', '.join(METHODS)}",
        json_schema_extra={"enum": list(METHODS)},
    )
    data_dir: Path = Field(default_factory=bundled_data_dir, description="the bundled Bliss data")
    hints: Path | None = Field(None, description="hint_descriptions.csv; default <data_dir>/hint_descriptions.csv")
    vocabulary_files: list[Path] | None = Field(
        None, description="puzzle CSVs whose options and answers form the open-vocabulary candidates; "
        "default <data_dir>/{train,val,test}.csv"
    )
    word_list: Path | None = Field(None, description="extra candidate words for open-vocabulary mode, one a line")
    game_puzzles: Path | None = Field(None, description="puzzles with answers for the game page at /; default <data_dir>/val.csv")
    open_vocab_candidates: int = Field(100, ge=1, le=1000, description="words the faiss search passes to the ranker")
    cache_dir: Path = Field(
        default_factory=default_cache_dir,
        description="on-disk embedding cache, shared with the CLI (default ~/.cache/pictorank): restarts and "
        "further workers skip encoding the vocabulary",
    )

    # How to serve it.
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64, description="uvicorn worker processes; ranking is CPU-bound")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed by CORS; empty = none")
    max_body_bytes: int = Field(1_000_000, ge=1024, description="larger request bodies get 413")

    @field_validator("method")
    @classmethod
    def _known_method(cls, method: str) -> str:
        """The methods are the ranker registry's (one list for the CLI, the service, the benches)."""
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
        return method

    @model_validator(mode="after")
    def _fill_data_paths(self) -> "Settings":
        """Paths left unset point into `data_dir`, so one variable relocates all of them."""
        if self.hints is None:
            self.hints = self.data_dir / "hint_descriptions.csv"
        if self.vocabulary_files is None:
            self.vocabulary_files = [self.data_dir / f"{split}.csv" for split in ("train", "val", "test")]
        if self.game_puzzles is None:
            self.game_puzzles = self.data_dir / "val.csv"
        return self
