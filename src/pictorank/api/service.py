"""The ranking service behind the HTTP routes: a ranker, the hint vocabulary, and the
open-vocabulary index, with no HTTP in sight (so it can be tested and benchmarked directly).

Open-vocabulary mode answers a clue that comes without options: open play's index
(pictorank.open_play) finds the words nearest to the clue, and open play's own ranker (fitted on
such candidates) orders them; a model folder without one orders them as it orders given options. The words are an
English lexicon (pictorank.lexicon: ~75,000 WordNet lemmas, with the data's answers and the word
list) when the served model folder stores its embeddings or PICTORANK_OPEN_VOCAB_LEXICON names
one, else only the data's words. Either way hint words are never offered back and a word is
offered once whatever its case or qualifier (pictorank.lexicon.guesses); with a lexicon, common
words are preferred (open play's ranker reads the frequencies; otherwise a frequency prior).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Sequence

from pictorank.api.settings import Settings
from pictorank.encoders import Encoder, Encoders
from pictorank.lexicon import DEFAULT_PRIOR_WEIGHT, guess_key, with_prior
from pictorank.memory import release_memory
from pictorank.open_play import OpenPlayRanker, VocabularyIndex, data_index, lexicon_index, vocabulary_words
from pictorank.puzzles import HintVocabulary, load_hints
from pictorank.query import Query
from pictorank.ranker import LearnedRanker, Ranker, Ranking, load_ranker, make_ranker
from pictorank.ranker.absence import AbsenceModel, clue_similarities
from pictorank.ranker.registry import serving_encoders

log = logging.getLogger(__name__)

# Candidate rows (options, summed over the clues of one ranking) from which a ranking is followed
# by a release: a 64-clue open-vocabulary batch holds 6,400; a single clue at most 1,000.
RELEASE_AFTER_ROWS = 1_000


@dataclass(frozen=True)
class Clue:
    """What the service ranks: hint texts (main idea first) and the candidate options.

    `options` None means open-vocabulary mode: the candidates come from the vocabulary index.
    Hint *texts*, not ids, so free-text hints and any pictogram vocabulary take the same path.
    `exclude`: words never to rank (already guessed wrong). `explain`: how many of the best
    options to explain (0: none, and no extra cost).
    """

    hints: tuple[str, ...]
    options: tuple[str, ...] | None = None
    exclude: frozenset[str] = frozenset()
    explain: int = 0


class RankingService:
    """Ranks clues given as hint texts, with or without options.

    Parameters
    ----------
    ranker : the fitted ranker to serve.
    vocab : the pictogram vocabulary, to turn hint ids into descriptions.
    index : answer words for open-vocabulary mode (None disables that mode).
    encoders : the served model's encoders, built once at start-up: the index was built with
        the base one, which embeds clues for its search; the clue-giver uses them too.
    model_name : how responses name the model.
    open_vocab_candidates : words taken from the index before ranking.
    model_dir : the folder the ranker was loaded from (None for an unlearned method): where the
        clue-giver looks first for its fitted model (pictorank.api.clues).
    open_ranker : the model's own ranker for open play (pictorank.open_play), which
        ranks a clue's lexicon candidates instead of `ranker` and the frequency prior; None when
        the model folder has none.
    """

    def __init__(
        self,
        ranker: Ranker,
        vocab: HintVocabulary,
        index: VocabularyIndex | None,
        encoders: Encoders,
        model_name: str,
        open_vocab_candidates: int = 100,
        model_dir: Path | None = None,
        open_ranker: Ranker | None = None,
    ) -> None:
        self.ranker = ranker
        self.open_ranker = open_ranker
        self.vocab = vocab
        self.index = index
        self.encoders = encoders
        self.model_name = model_name
        self.open_vocab_candidates = open_vocab_candidates
        self.model_dir = model_dir
        self.absence = AbsenceModel.load()  # shipped with the package: the same for every method
        self.prior_weight = DEFAULT_PRIOR_WEIGHT  # of the frequency prior, with a lexicon
        # The encoder's memo and runtime are shared by the worker threads; one ranking at a time per
        # process keeps them consistent, and worker processes provide the parallelism. Requests
        # that arrive while a ranking runs wait in `_pending` and are ranked together next
        # (dynamic batching): one encoder call for all their new strings.
        self._lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[_Job] = []
        self.ready = False
        self.warnings: list[str] = []  # what the log says once the service has said what it serves

    @property
    def lock(self) -> threading.Lock:
        """Held while the encoder and ranker work; other users of them (the clue-giver) take it too."""
        return self._lock

    def unknown_hints(self, hint_ids: Sequence[int]) -> list[int]:
        return [h for h in hint_ids if h not in self.vocab]

    def describe(self, hint_ids: Sequence[int]) -> list[str]:
        return self.vocab.describe(hint_ids)

    def rank(self, clues: Sequence[Clue]) -> list[Ranking]:
        """Rank each clue's options, or for a clue without options the vocabulary's nearest words.

        Dynamic batching: the calls waiting while a ranking runs are ranked together in the next
        one, so the encoders see all their new strings in one batch and LightGBM one table (a
        request alone on the server is ranked at once, never held back to wait for company).
        """
        job = _Job(list(clues))
        with self._pending_lock:
            self._pending.append(job)
        with self._lock:
            if not job.done:
                with self._pending_lock:
                    jobs, self._pending = self._pending, []
                self._rank_jobs(jobs)
        if job.error is not None:
            raise job.error
        return job.results

    def _rank_jobs(self, jobs: list["_Job"]) -> None:
        """Rank the waiting calls in one batch; if it fails, each alone, so one call's error is its own."""
        if len(jobs) > 1:
            try:
                results = self._rank_now([clue for job in jobs for clue in job.clues])
            except Exception:  # noqa: BLE001 - retried one by one below, where the error belongs to its call
                pass
            else:
                start = 0
                for job in jobs:
                    job.finish(results[start : start + len(job.clues)], None)
                    start += len(job.clues)
                return
        for job in jobs:
            try:
                job.finish(self._rank_now(job.clues), None)
            except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread
                job.finish([], exc)

    def _rank_now(self, clues: Sequence[Clue]) -> list[Ranking]:
        """Each distinct clue ranked once (a batch may repeat one: its copies share the ranking)."""
        distinct = list(dict.fromkeys(clues))
        if len(distinct) == len(clues):
            return self._rank_distinct(clues)
        ranked = dict(zip(distinct, self._rank_distinct(distinct)))
        return [ranked[clue] for clue in clues]

    def _rank_distinct(self, clues: Sequence[Clue]) -> list[Ranking]:
        """One call ranks the whole batch, so the ranker encodes its distinct strings together;
        clues that ask for explanations are ranked apart (one call per `explain` size).
        The caller holds the lock.

        A ranking of at least RELEASE_AFTER_ROWS candidate rows is followed by `release_memory`:
        its temporaries are freed by then, and without it the process kept their peak for good.
        """
        queries = self._queries(clues)
        # Only an open-vocabulary clue whose every word is excluded has no candidates left.
        results: dict[int, Ranking] = {i: Ranking([], []) for i, q in enumerate(queries) if not q.options}
        for explain, ranker in sorted({(clue.explain, self._ranker_of(clue)) for clue in clues}, key=lambda k: k[0]):
            rows = [i for i, clue in enumerate(clues)
                    if clue.explain == explain and self._ranker_of(clue) is ranker and i not in results]
            for i, ranking in zip(rows, ranker.rank([queries[i] for i in rows], explain)):
                results[i] = self._with_confidence(clues[i], ranking)
        rows = [i for i, clue in enumerate(clues) if clue.options is not None and queries[i].options]
        for i, probability in zip(rows, self._none_of_these([queries[i] for i in rows])):
            results[i] = replace(results[i], none_of_these=probability)
        if sum(len(query.options) for query in queries) >= RELEASE_AFTER_ROWS:
            release_memory()
        return [results[i] for i in range(len(clues))]

    def _none_of_these(self, queries: Sequence[Query]) -> list[float | None]:
        """For given options only: the chance that the word is none of them (pictorank.ranker.absence),
        from the base encoder's similarities (None when the service has no encoders)."""
        if not queries or self.encoders is None:
            return [None] * len(queries)
        return [self.absence.probability(s) for s in clue_similarities(self.encoders.base, queries)]

    def _ranker_of(self, clue: Clue) -> Ranker:
        """Open play's own ranker for a clue without options, when the model has one."""
        return self.open_ranker if clue.options is None and self.open_ranker is not None else self.ranker

    def _with_confidence(self, clue: Clue, ranking: Ranking) -> Ranking:
        """Confidence only for given options: the calibration was fitted on such rankings, and an
        open-vocabulary ranking may not hold the answer at all. An open-vocabulary ranking by the
        options' ranker also gets the lexicon's frequency prior (open play's own ranker learned
        its own use of the frequencies)."""
        if clue.options is None:
            if self.open_ranker is None and self.index is not None and self.index.zipf is not None:
                options, scores = with_prior(ranking.options, ranking.scores, self.index.zipf, self.prior_weight)
                return replace(ranking, options=options, scores=scores, confidence=None)
            return replace(ranking, confidence=None)
        return ranking

    @property
    def lexicon_size(self) -> int:
        """How many words open-vocabulary mode guesses from (0 when it is off)."""
        return 0 if self.index is None else len(self.index.words)

    def _queries(self, clues: Sequence[Clue]) -> list[Query]:
        """The ranker's queries without excluded words: open-vocabulary clues get the index's words
        as their options."""
        open_rows = [i for i, clue in enumerate(clues) if clue.options is None]
        extra = max((len(clues[i].exclude) for i in open_rows), default=0)
        candidates = self.candidates([clues[i].hints for i in open_rows], extra) if open_rows else []
        found = dict(zip(open_rows, candidates))
        queries = []
        for i, clue in enumerate(clues):
            options = clue.options if clue.options is not None else found[i]
            # as guesses are told apart: case, qualifier and, in open play, spelling
            spellings = self.index.spellings if clue.options is None and self.index is not None else {}
            excluded = {guess_key(spellings.get(word, word)) for word in clue.exclude}
            kept = tuple(o for o in options if guess_key(spellings.get(o, o)) not in excluded)
            queries.append(Query(clue.hints, kept if clue.options is not None else kept[: self.open_vocab_candidates]))
        return queries

    def candidates(self, hint_lists: Sequence[Sequence[str]], extra: int = 0) -> list[list[str]]:
        """Open-vocabulary mode's candidates for each clue: the words nearest to its joined hints
        that a player would take as guesses (no hint word, one form of each word), `extra` more
        to make up for excluded words."""
        if self.index is None:
            raise RuntimeError("open-vocabulary mode is disabled: the service has no vocabulary index")
        return self.index.candidates(hint_lists, self.open_vocab_candidates + extra, self.encoders.base)

    def self_test(self) -> None:
        """Rank one clue from the vocabulary, with and without options, then report ready."""
        first = next(iter(self.vocab.descriptions.values()))
        # With a warm disk cache every string above can be cached and the model would load with
        # the first request (a slow one); an option no cache holds (requests never write the disk
        # cache) loads and runs it now.
        self.rank([Clue((first,), ("dog", "house", "water", "pictorank self-test"))])
        if self.index is not None:
            self.rank([Clue((first,))])
        self.ready = True


@dataclass
class _Job:
    """One `RankingService.rank` call waiting for its turn, or for a batch that took it along."""

    clues: list[Clue]
    results: list[Ranking] = field(default_factory=list)
    error: Exception | None = None
    done: bool = False

    def finish(self, results: list[Ranking], error: Exception | None) -> None:
        self.results, self.error, self.done = results, error, True


def model_name(ranker: Ranker, model_dir: Path | None, encoder: Encoder) -> str:
    """`method[:dir] (pictorank X, encoder id)`: enough to tell two deployed models apart."""
    served = ranker.method if model_dir is None else f"{ranker.method}:{Path(model_dir).name}"
    return f"{served} (pictorank {version('pictorank')}, {encoder.model_id})"


def what_open_play_lacks(settings: Settings, index: VocabularyIndex | None, open_ranker: Ranker | None) -> list[str]:
    """A learned model folder without its lexicon or open play's ranker still serves, with less:
    what to tell the log (after the line that says what is served), and how to add what is
    missing, rather than falling back in silence."""
    assert settings.model_dir is not None
    if index is None or not index.zipf:
        if settings.open_vocab_lexicon != "auto":
            return []
        return [f"{settings.model_dir} stores no lexicon: clues without options are guessed from the data's words "
                f"only (`pictorank lexicon --model {settings.model_dir}` stores one)"]
    if open_ranker is None:
        return [f"{settings.model_dir} has no open-play ranker (open_play/): clues without options are ranked by the "
                "learned ranker and a frequency prior (retrain with `pictorank train` to fit one)"]
    return []


def build_service(settings: Settings, encoders: Encoders | None = None, ranker: Ranker | None = None,
                  base: Encoder | None = None) -> RankingService:
    """Load everything the settings name; `encoders`/`ranker` may be injected (tests, benchmarks),
    or `base`, the base encoder the served encoders are built on (an already loaded model).

    The encoders are built once, here (pictorank.ranker.registry.serving_encoders), and handed to
    the ranker and the vocabulary index; the clue-giver takes them from the service. The cheap
    checks come first (hint file, model config), so a bad setting fails in a second, not after
    the model has loaded and the vocabulary has been encoded.
    """
    vocab = load_hints(settings.hints)
    words = vocabulary_words(settings.vocabulary_files, settings.word_list)
    if encoders is None:
        encoders = serving_encoders(settings.model_dir, settings, base)
    if ranker is None:
        if settings.model_dir is not None:
            ranker = load_ranker(settings.model_dir, encoders=encoders)
        else:
            ranker = make_ranker(settings.method, encoder=encoders.base)
    # Start-up writes the vocabulary's vectors to the disk cache (restarts and further workers
    # read them back); requests never write it (Encoder.encode does not). Every encoder of the
    # ranker embeds the vocabulary now, so a clue over known words encodes only the clue.
    with_glosses = settings.model_dir is not None and OpenPlayRanker.reads_glosses(settings.model_dir)
    index = (lexicon_index(settings.model_dir, settings.open_vocab_lexicon, encoders, words, with_glosses)
             or data_index(words, encoders.base))
    ranker.prepare(words)
    name = model_name(ranker, settings.model_dir, encoders.base)
    open_ranker = None
    if settings.model_dir is not None and isinstance(ranker, LearnedRanker):
        if index is not None and index.zipf:
            open_ranker = OpenPlayRanker.load_beside(settings.model_dir, ranker, index.zipf, index.glosses)
    service = RankingService(ranker, vocab, index, encoders, name, settings.open_vocab_candidates, settings.model_dir,
                             open_ranker)
    if settings.model_dir is not None and isinstance(ranker, LearnedRanker):
        service.warnings = what_open_play_lacks(settings, index, open_ranker)
    release_memory()  # start-up's encoder runs and index building, freed, go back to the system
    return service
