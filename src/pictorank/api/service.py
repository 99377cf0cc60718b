"""The ranking service behind the HTTP routes: a ranker, the hint vocabulary, and the
open-vocabulary index, with no HTTP in sight (so it can be tested and benchmarked directly).

Open-vocabulary mode answers a clue that comes without options: a faiss inner-product index over
the unit embeddings of every word the service knows finds the words nearest to the clue, and
open play's own ranker (pictorank.ranker.open_play, fitted on such candidates) orders them; a
model folder without one orders them as it orders given options. The words are an
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
from typing import Iterable, Sequence

import faiss
import numpy as np

from pictorank.api.memory import RELEASE_AFTER_ROWS, release_memory
from pictorank.api.settings import Settings
from pictorank.encoders import Encoder, Encoders, StoredVectors
from pictorank.errors import DataError
from pictorank.lexicon import DEFAULT_PRIOR_WEIGHT, Lexicon, load_lexicon, playable, with_prior
from pictorank.lexicon import store as lexicon_store
from pictorank.puzzles import HintVocabulary, load_hints, load_puzzles
from pictorank.query import Query, joined_text
from pictorank.ranker import LearnedRanker, Ranker, Ranking, load_ranker, make_ranker
from pictorank.ranker.absence import AbsenceModel, clue_similarities
from pictorank.ranker.open_play import OpenPlayRanker
from pictorank.ranker.registry import serving_encoders

log = logging.getLogger(__name__)


class VocabularyIndex:
    """Exact nearest-neighbour search over answer words (faiss IndexFlatIP on unit vectors).

    Flat search is exact and, for a few thousand words, takes well under a millisecond; an
    approximate index would only add a tuning knob.
    """

    def __init__(self, words: Sequence[str], index: faiss.Index, encoder: Encoder | None = None,
                 zipf: dict[str, float] | None = None, source: str = "data",
                 glosses: StoredVectors | None = None, gloss_encoder: Encoder | None = None) -> None:
        if index.ntotal != len(words):
            raise ValueError(f"index holds {index.ntotal} vectors for {len(words)} words")
        self.words = list(words)
        self.index = index
        self.encoder = encoder  # the space of the vectors, which embeds the clue to search with
        self.zipf = zipf  # each word's frequency, for the prior; None without a lexicon
        self.source = source  # "data" (the data's words), "wordnet" or a word list's path
        # With glosses, a word's vector is its own followed by its gloss's (base space), and a
        # clue's is its own in each space: a word is found by its name and its definition.
        self.glosses = glosses  # the stored gloss vectors, which open play's ranker reads too
        self.gloss_encoder = gloss_encoder

    @classmethod
    def build(cls, words: Iterable[str], encoder: Encoder) -> "VocabularyIndex":
        distinct = sorted(set(words))
        encoder.warm(distinct)  # batch-encodes, and fills the disk cache when there is one
        vectors = np.ascontiguousarray(encoder.encode(distinct), dtype=np.float32)
        return cls(distinct, _flat_index(vectors), encoder)

    @classmethod
    def of_lexicon(cls, lexicon: Lexicon, vectors: np.ndarray, encoder: Encoder,
                   glosses: StoredVectors | None = None, base: Encoder | None = None) -> "VocabularyIndex":
        """The index of `lexicon`'s words (`vectors` in `encoder`'s space), and of their glosses
        when `glosses` (made by `base`) are given.

        The vectors are kept as float16 (faiss' scalar quantiser): half float32's memory, and as
        exact as the int8 vectors the lexicon is stored as. They are added a slice at a time, so
        the words' and glosses' vectors side by side never exist for the whole lexicon at once."""
        if glosses is None or base is None:
            glosses = base = None
        words = list(lexicon.words)
        width = vectors.shape[1] * (2 if glosses is not None else 1)
        index = faiss.IndexScalarQuantizer(width, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        for start in range(0, len(words), _SLICE):
            part = vectors[start : start + _SLICE]
            if glosses is not None and base is not None:
                part = np.hstack([part, lexicon_store.gloss_search_vectors(words[start : start + _SLICE], glosses, base)])
            index.add(np.ascontiguousarray(part, dtype=np.float32))
        return cls(words, index, encoder, lexicon.frequencies(), lexicon.source, glosses, base)

    def clue_vectors(self, texts: Sequence[str], fallback: Encoder) -> np.ndarray:
        """The vectors to search with for clue texts, in the index's space(s); `fallback`
        embeds them when the index has no encoder of its own."""
        vectors = (self.encoder or fallback).encode(list(texts))
        if self.gloss_encoder is None:
            return vectors
        return np.hstack([vectors, self.gloss_encoder.encode(list(texts))])

    def search(self, clue_vectors: np.ndarray, k: int) -> list[list[str]]:
        """The `k` words nearest to each clue vector, nearest first."""
        k = min(k, len(self.words))
        queries = np.ascontiguousarray(clue_vectors, dtype=np.float32)
        if len(queries) != 1:
            _, ids = self.index.search(queries, k)
        else:
            # One clue, the service's usual case: faiss' OpenMP threads wait on each other more than
            # they help for one vector (a 2-core machine shared with the encoders), so one thread.
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                _, ids = self.index.search(queries, k)
            finally:
                faiss.omp_set_num_threads(threads)
        return [[self.words[i] for i in row if i >= 0] for row in ids]


_SLICE = 8192  # lexicon words added to the index at a time


def _flat_index(vectors: np.ndarray) -> faiss.Index:
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def vocabulary_words(puzzle_files: Sequence[Path], word_list: Path | None) -> list[str]:
    """Every option and answer of the given puzzle files, plus the lines of `word_list`."""
    words: set[str] = set()
    for path in puzzle_files:
        for puzzle in load_puzzles(path):
            words.update(puzzle.options)
    if word_list is not None:
        try:
            lines = word_list.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(word_list, None, None, f"cannot read the word list ({exc})") from None
        words.update(line.strip() for line in lines if line.strip() and "|" not in line)
    return sorted(words)


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
    open_ranker : the model's own ranker for open play (pictorank.ranker.open_play), which
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
            kept = tuple(o for o in options if o not in clue.exclude)
            queries.append(Query(clue.hints, kept if clue.options is not None else kept[: self.open_vocab_candidates]))
        return queries

    def candidates(self, hint_lists: Sequence[Sequence[str]], extra: int = 0) -> list[list[str]]:
        """Open-vocabulary mode's candidates for each clue: the words nearest to its joined hints
        that a player would take as guesses (no hint word, one form of each word), `extra` more
        to make up for excluded words."""
        if self.index is None:
            raise RuntimeError("open-vocabulary mode is disabled: the service has no vocabulary index")
        clue_vectors = self.index.clue_vectors([joined_text(hints) for hints in hint_lists], self.encoders.base)
        wanted = self.open_vocab_candidates + extra
        # Room for the hint words and repeated forms that `playable` drops.
        found = self.index.search(clue_vectors, wanted + 20 + wanted // 2)
        return [playable(hints, words)[:wanted] for hints, words in zip(hint_lists, found)]

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


def _vocabulary_index(words: Sequence[str], encoder: Encoder) -> VocabularyIndex | None:
    """The open-vocabulary index of `words`; None, which disables open-vocabulary mode (a clue
    without options gets 422), when there are none: PICTORANK_VOCABULARY_FILES='[]' without a word
    list says so, and an index of no words cannot answer a search."""
    if words:
        return VocabularyIndex.build(words, encoder)
    log.warning("open-vocabulary mode is disabled: the vocabulary files and word list name no words")
    return None


def _lexicon_index(settings: Settings, encoders: Encoders, words: Sequence[str],
                   with_glosses: bool = False) -> VocabularyIndex | None:
    """The open-vocabulary index over the lexicon PICTORANK_OPEN_VOCAB_LEXICON names, with the
    data's words; None when it names none (`none`, or `auto` and the model folder stores none).

    Stored vectors (lexicon.npz, made by this model's encoders) are used as they are, for the
    search and, handed to the encoders, for ranking the words found; words the store lacks (the
    data's words, a word list, a lexicon it was not built for) are embedded now.
    """
    choice = settings.open_vocab_lexicon
    stored = lexicon_store.load(settings.model_dir) if settings.model_dir is not None and choice != "none" else None
    if choice == "none" or (choice == "auto" and stored is None):
        return None
    if stored is not None and choice not in ("auto", stored.lexicon.source):
        stored = None  # stored for another lexicon
    space = stored.space if stored is not None else lexicon_store.DEFAULT_SPACE
    encoder = encoders.finetuned if space == "ft" and encoders.finetuned is not None else encoders.base
    lexicon = stored.lexicon if stored is not None else load_lexicon("wordnet" if choice == "auto" else choice)
    same_encoder = False
    if stored is not None:
        _hand_stored_vectors(stored, encoders)
        same_encoder = stored.encoder_id == encoder.model_id
        if not same_encoder:
            log.warning("the stored lexicon was embedded by %s, not the served %s: embedding it anew "
                        "(`pictorank lexicon --model DIR` stores it again)", stored.encoder_id, encoder.model_id)
    lexicon = lexicon.with_words(words)
    vectors, embedded = _word_vectors(lexicon, stored.vectors[stored.space] if stored is not None and same_encoder
                                      else None, encoder, space)
    # Glosses are searched only for an open-play ranker fitted on what they find, and only when
    # the served base encoder made them.
    glosses = stored.glosses if stored is not None and with_glosses else None
    if glosses is not None and stored is not None and stored.encoder_ids.get("base") != encoders.base.model_id:
        log.warning("the stored glosses were made by %s, not the served base encoder %s: open play finds and "
                    "ranks words by name only (`pictorank lexicon --model DIR` stores them again)",
                    stored.encoder_ids.get("base"), encoders.base.model_id)
        glosses = None
    log.info("open-vocabulary lexicon: %d words (%s, %s space%s; %d embedded at start-up)", len(lexicon),
             lexicon.source, space, " and glosses" if glosses is not None else "", embedded)
    return VocabularyIndex.of_lexicon(lexicon, vectors, encoder, glosses, encoders.base)


def _word_vectors(lexicon: Lexicon, stored: StoredVectors | None, encoder: Encoder, space: str) -> tuple[np.ndarray, int]:
    """The lexicon's vectors in `encoder`'s space: stored ones as they are, the others (the data's
    words, a word list, a lexicon stored for another encoder) embedded now; and how many were."""
    if stored is not None:
        vectors, found = stored.lookup(lexicon.words)
    else:
        vectors, found = None, np.zeros(len(lexicon), dtype=bool)
    missing = [w for w, known in zip(lexicon.words, found) if not known]
    if missing:
        fresh = lexicon_store.embed(Lexicon(tuple(missing), np.zeros(len(missing), np.float32), ""),
                                    {space: encoder}, space).search_vectors()
        vectors = np.zeros((len(lexicon), fresh.shape[1]), np.float32) if vectors is None else vectors
        vectors[~found] = fresh
    if vectors is None:
        raise DataError("the open-vocabulary lexicon holds no words")
    return vectors, len(missing)


def _hand_stored_vectors(stored: lexicon_store.StoredLexicon, encoders: Encoders) -> None:
    """Give each served encoder the lexicon's vectors it made itself, so ranking a found word
    reads its vectors instead of encoding it (what most of an open-vocabulary request cost)."""
    served = {"base": encoders.base, "ft": encoders.finetuned}
    for space, vectors in stored.vectors.items():
        encoder = served.get(space)
        if encoder is not None and encoder.model_id == stored.encoder_ids[space]:
            encoder.know(vectors)
        else:
            log.warning("the stored lexicon's %s vectors were made by %s, not by the served encoder: its words "
                        "are encoded when ranked", space, stored.encoder_ids[space])


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
    index = _lexicon_index(settings, encoders, words, with_glosses) or _vocabulary_index(words, encoders.base)
    ranker.prepare(words)
    name = model_name(ranker, settings.model_dir, encoders.base)
    open_ranker = None
    if settings.model_dir is not None and isinstance(ranker, LearnedRanker) and index is not None and index.zipf:
        open_ranker = OpenPlayRanker.load_beside(settings.model_dir, ranker, index.zipf, index.glosses)
    return RankingService(ranker, vocab, index, encoders, name, settings.open_vocab_candidates, settings.model_dir,
                          open_ranker)
