"""Service settings, read from `PICTORANK_*` environment variables (pydantic-settings).

Every setting has a default that works from a source checkout or the Docker image, where the
package is installed in editable mode from the repository: the bundled Bliss data is then found
at `<repo>/data/bliss`, three directories above this file. An installation without the data
(e.g. a wheel) must set `PICTORANK_DATA_DIR` or the individual paths.

Examples::

    PICTORANK_MODEL_DIR=models/learned     # serve a saved model (any method load_ranker knows)
    PICTORANK_METHOD=seed                  # unlearned method when no model dir is given
    PICTORANK_HINTS=emoji_descriptions.csv # another pictogram vocabulary
    PICTORANK_HINT_ICONS=emoji_icons/      # its <hintID>.svg drawings (default: hint_icons/ beside the hints)
    PICTORANK_CORS_ORIGINS='["https://game.example"]'   # lists are JSON
    PICTORANK_CACHE_DIR=/var/cache/pictorank   # embedding cache, the same variable as the CLI's
    PICTORANK_SUGGEST_TRAIN=train.csv      # the clues POST /suggest learns from (default <data_dir>/train.csv)
    PICTORANK_SUGGEST_GUESSER=served       # /suggest's clues must convince the served ranker (default: seed)
    PICTORANK_GAME_KEY=<64 hex digits>     # picks the Clue mode's secret words; the same on every server
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from pictorank.ranker import DEFAULT_METHOD, METHODS
from pictorank.settings import CommonSettings, read_settings, repository_root, use_offline_environment


def bundled_data_dir() -> Path:
    """`data/bliss` of the repository this package was installed from (editable install)."""
    return repository_root() / "data" / "bliss"


class Settings(CommonSettings):
    """What the service serves and how, on top of the settings every entry point shares (cache,
    memory bound, encoder runtime, default model); see the module docstring for the variables."""

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
        "default <data_dir>/{train,val,test}.csv; `[]` and no word list: open-vocabulary mode off"
    )
    word_list: Path | None = Field(None, description="extra candidate words for open-vocabulary mode, one a line")
    hint_icons: Path | None = Field(
        None, description="folder of <hintID>.svg pictogram drawings served at /hints/{id}/icon; default "
        "hint_icons/ beside the hints file; a missing folder means text-only pictograms"
    )
    game_puzzles: Path | None = Field(None, description="puzzles with answers for the game page at /; default <data_dir>/val.csv")
    game_family_safe: bool = Field(
        True, description="the game's random rounds skip puzzles whose answer, options or pictograms touch a "
        "sensitive topic (sex, excretion, obscenities, slurs), decided from WordNet 3.0 (see docs/game.md); "
        "`false` deals every puzzle; /rank is never filtered"
    )
    suggest_train: Path | None = Field(
        None, description="puzzles with answers whose clues teach POST /suggest how people clue; default "
        "<data_dir>/train.csv; a missing file turns /suggest off (503), nothing else"
    )
    suggest_guesser: Literal["seed", "served"] = Field(
        "seed", description="the guesser a suggested clue must convince: `seed` (the task's baseline, what the "
        "clue-giver's figures are measured with) or `served` (the ranker /rank serves)"
    )
    game_key: SecretStr | None = Field(
        None, description="key that picks the secret words of the game's Clue mode, so that the page never "
        "holds them; servers behind one address need the same key (`pictorank serve --workers N` shares one "
        "with its workers); default: a random key per process", min_length=16,
    )
    open_vocab_candidates: int = Field(100, ge=1, le=1000, description="words the faiss search passes to the ranker")
    open_vocab_lexicon: str = Field(
        "auto", min_length=1, description="the words open-vocabulary mode guesses from, besides the data's: `auto` (the "
        "English lexicon the served model folder stores, lexicon.json; without one, only the data's words), "
        "`wordnet` (the bundled English lexicon, embedded at start-up when the model folder stores none), `none` "
        "(only the data's words), or the path of a word list (one word a line, optionally a tab and its Zipf frequency)"
    )

    # How to serve it.
    host: str = Field("127.0.0.1", description="interface to listen on (`pictorank serve --host`)")
    port: int = Field(8000, ge=0, le=65535, description="port to listen on (`pictorank serve --port`)")
    workers: int = Field(1, ge=1, le=64, description="uvicorn worker processes; ranking is CPU-bound")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed by CORS; empty = none")
    max_body_bytes: int = Field(1_000_000, ge=1024, description="larger request bodies get 413")
    # What one request may cost. Each distinct text may need an encoding (and, for a learned
    # model, its features): 64 puzzles x 1,000 new options held a learned worker for minutes.
    # 2,000 lets any single clue (at most 1,000 options + 20 hints) and any 64 task puzzles
    # (fewer distinct texts than that in train/val/test) through.
    max_texts_per_request: int = Field(
        2_000, ge=1, description="distinct option and hint texts one /rank or /rank/batch request may carry, an "
        "open-vocabulary clue counting as its open_vocab_candidates words; more get 413"
    )
    max_rows_per_request: int = Field(
        4_000, ge=1, description="(clue, option) rows one /rank or /rank/batch request may rank, an open-vocabulary "
        "clue counting as its open_vocab_candidates rows; more get 413 (one worker never holds a request longer)"
    )
    body_timeout: float = Field(
        20.0, gt=0, le=3600, description="seconds a client has to send the whole request body; slower gets 408 "
        "(uvicorn itself waits for a body forever)"
    )
    header_timeout: float = Field(
        10.0, gt=0, le=3600, description="seconds a client has to send a request's headers, from when it connects "
        "or starts its next request; slower gets 408 and is closed (uvicorn itself waits for headers forever)"
    )
    max_connections: int = Field(
        2048, ge=1, description="connections (and requests in progress) one worker process serves at once; a "
        "request beyond them gets a JSON 503 with Retry-After and is closed (uvicorn's limit_concurrency rule)"
    )
    keep_alive_timeout: int = Field(
        5, ge=1, le=3600, description="seconds an idle keep-alive connection stays open (uvicorn's timeout_keep_alive)"
    )

    @model_validator(mode="after")
    def _open_play_fits_a_request(self) -> "Settings":
        """A clue without options counts as its open_vocab_candidates words: a cap below that would
        turn every open-play request into a 413, so it is refused at start-up."""
        if self.max_rows_per_request < self.open_vocab_candidates:
            raise ValueError(f"max_rows_per_request ({self.max_rows_per_request}) must be at least "
                             f"open_vocab_candidates ({self.open_vocab_candidates}): an open-play clue ranks that many")
        if self.max_texts_per_request < self.open_vocab_candidates + 1:
            raise ValueError(f"max_texts_per_request ({self.max_texts_per_request}) must be at least "
                             f"open_vocab_candidates + 1 ({self.open_vocab_candidates + 1}): an open-play clue counts "
                             "as its candidate words and its hints")
        return self

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
        if self.hint_icons is None:
            self.hint_icons = self.hints.parent / "hint_icons"
        if self.vocabulary_files is None:
            # Those of the data folder's splits that are there: another data set may come without a
            # test.csv. Files named in PICTORANK_VOCABULARY_FILES must all exist.
            splits = [self.data_dir / f"{split}.csv" for split in ("train", "val", "test")]
            self.vocabulary_files = [path for path in splits if path.is_file()] or splits
        if self.game_puzzles is None:
            self.game_puzzles = self.data_dir / "val.csv"
        if self.suggest_train is None:
            self.suggest_train = self.data_dir / "train.csv"
        return self


# -- what `pictorank serve` hands its worker processes -----------------------------------------
# Each uvicorn worker builds its own app from the environment, so the serve command writes its
# choices there. These functions are the only places outside the settings objects that touch it.


def export_for_workers(overrides: dict[str, object], drop_model_dir: bool = False) -> Settings:
    """Write command-line `overrides` (setting name -> value; None: not given) into the
    environment as PICTORANK_<NAME>, so that every worker reads them, and read the settings back.
    `drop_model_dir`: an explicit method beats a model directory from the environment."""
    if drop_model_dir:
        os.environ.pop("PICTORANK_MODEL_DIR", None)
    for name, value in overrides.items():
        if value is not None:
            os.environ[f"PICTORANK_{name.upper()}"] = str(value)
    use_offline_environment()
    # A server's log has no progress bars (model loading draws one); its first line says what it serves.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return read_settings(Settings)


def share_game_key() -> None:
    """One PICTORANK_GAME_KEY for all workers (a random one unless set): a Clue-mode round drawn by
    one worker must be checked by whichever worker gets the guess."""
    if not os.environ.get("PICTORANK_GAME_KEY"):
        os.environ["PICTORANK_GAME_KEY"] = secrets.token_hex(32)


def metrics_dir() -> str | None:
    """PROMETHEUS_MULTIPROC_DIR: where worker processes' metrics meet (None: one process)."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def set_metrics_dir(directory: str) -> None:
    """Hand the workers their metrics folder (prometheus-client reads the variable)."""
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
