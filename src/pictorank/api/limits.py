"""What one request may cost: at most `Settings.max_texts_per_request` distinct texts, and at
most `Settings.max_rows_per_request` ranked rows.

The body-size limit does not bound the work: 64 puzzles x 1,000 new options fit well within it,
and held a learned worker for minutes while a game guess waited behind it. The work grows with the
texts the ranker has never seen (each is encoded, and for a learned model gets its features),
so the limit counts distinct texts: the options and hints of every clue of the request, hints
given by id included. All of them, not only the ones the caches lack: a client gets the same
answer whatever the server happened to see before, and the default (2,000) still lets through
any single clue (1,000 options + 20 hints) and any batch of 64 task puzzles (fewer than that).

An open-vocabulary clue carries no options, but ranks the served vocabulary's nearest
`open_vocab_candidates` words as if it did: it counts as that many texts (once per distinct clue,
as repeated texts do), so a batch of them is capped by its work as a batch with options is.
Uncapped, 64 such clues of 20 new hint texts each took a gigabyte in one request. One clue alone
is never refused by the default (20 hints + at most 1,000 candidates). `exclude` lists are not
counted (never encoded).

Texts bound the encoding, not the rest: 64 copies of one puzzle of 980 options are 1,002
distinct texts but were 62,720 rows, each with its features and its trees, and held the only
worker for 12 s while a small /rank waited. The service now ranks a repeated clue once, and the
rows a request ranks are counted too (each distinct clue's options, or an open-vocabulary clue's
candidates): a request over the budget gets 413 at once, before any work, so the worker never
holds a request longer than the budget's worth.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from pictorank.api.errors import api_error
from pictorank.api.service import Clue


def distinct_texts(clues: Iterable[Clue]) -> int:
    """How many different hint and option texts `clues` hold together."""
    texts: set[str] = set()
    for clue in clues:
        texts.update(clue.hints)
        texts.update(clue.options or ())
    return len(texts)


def open_vocabulary_clues(clues: Iterable[Clue]) -> int:
    """How many different open-vocabulary clues (no options) `clues` hold."""
    return len({(clue.hints, clue.exclude) for clue in clues if clue.options is None})


def check_texts_per_request(clues: Sequence[Clue], limit: int, candidates: int) -> None:
    """Refuse (413, before any ranking) a request whose clues hold more than `limit` distinct texts,
    each open-vocabulary clue counting as its `candidates` words."""
    open_clues = open_vocabulary_clues(clues)
    count = distinct_texts(clues) + open_clues * candidates
    if count > limit:
        counted = f" (an open-vocabulary clue counts as its {candidates} candidate words)" if open_clues else ""
        msg = (f"the request holds {count} distinct option and hint texts{counted}; the limit is {limit} per "
               "request (send fewer puzzles per batch)")
        raise api_error(413, ["body"], msg, "too_many_texts")


def ranked_rows(clues: Iterable[Clue], candidates: int) -> int:
    """How many (clue, option) rows ranking `clues` costs: each distinct clue's options, or an
    open-vocabulary clue's `candidates` (the service ranks a repeated clue once)."""
    return sum(len(clue.options) if clue.options is not None else candidates for clue in dict.fromkeys(clues))


def check_request_cost(clues: Sequence[Clue], max_texts: int, max_rows: int, candidates: int) -> None:
    """Refuse (413, before any ranking) a request over either budget: distinct texts
    (`check_texts_per_request`) or ranked rows."""
    check_texts_per_request(clues, max_texts, candidates)
    rows = ranked_rows(clues, candidates)
    if rows > max_rows:
        msg = (f"the request ranks {rows} (clue, option) rows; the limit is {max_rows} per request "
               "(send fewer puzzles or options per request)")
        raise api_error(413, ["body"], msg, "too_many_rows")
