"""Open play's retrieval: the words nearest to a clue, taken as guesses a player would accept.

One faiss inner-product index over the unit vectors of every word open play knows (an English
lexicon with the data's words, or the data's words alone), searched with the joined hints; with
the lexicon's glosses a word's vector is its own followed by its gloss's (base space) and a
clue's is its own in each space, so a word is found by its name and by its definition.
`candidates` is the one place a clue's candidates are taken: the service and training both call
it, so open play's ranker learns from exactly what it is later handed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import faiss
import numpy as np

from pictorank.encoders import Encoder, Encoders, StoredVectors
from pictorank.errors import DataError, UsageError
from pictorank.lexicon import Lexicon, load_lexicon, playable
from pictorank.lexicon.glosses import read_glosses
from pictorank.lexicon.spellings import spelling_groups
from pictorank.lexicon.words import read_table
from pictorank.lexicon import store as lexicon_store
from pictorank.puzzles import load_puzzles
from pictorank.query import joined_text
from pictorank.ranker.registry import serving_encoders
from pictorank.settings import CommonSettings

log = logging.getLogger(__name__)

DEFAULT_CANDIDATES = 100  # words handed to the ranker per clue (PICTORANK_OPEN_VOCAB_CANDIDATES)
_SLICE = 8192  # lexicon words added to the index at a time


def search_width(wanted: int) -> int:
    """How many words to search for to keep `wanted` guesses: room for the hint words and the
    repeated forms of a word that `playable` drops."""
    return wanted + 20 + wanted // 2


class VocabularyIndex:
    """Search over the words open play guesses from, in one encoder's space.

    Parameters
    ----------
    words : the words, in the index's row order.
    index : a faiss inner-product index of their vectors.
    encoder : the space of the vectors, which embeds a clue to search with (None: the caller's).
    zipf : each word's Zipf frequency (None without a lexicon).
    source : "data" (the data's words), "wordnet" or a word list's path.
    glosses, gloss_encoder : the stored gloss vectors (base space) searched beside the words, and
        the base encoder that embeds a clue for them; None to search by word only.
    spellings : word -> its spelling group's key, for the words spelled several ways
        (pictorank.lexicon.spellings): one guess, not two.
    """

    def __init__(self, words: Sequence[str], index: faiss.Index, encoder: Encoder | None = None,
                 zipf: dict[str, float] | None = None, source: str = "data",
                 glosses: StoredVectors | None = None, gloss_encoder: Encoder | None = None,
                 spellings: Mapping[str, str] | None = None) -> None:
        if index.ntotal != len(words):
            raise ValueError(f"index holds {index.ntotal} vectors for {len(words)} words")
        self.words = list(words)
        self.index = index
        self.encoder = encoder
        self.zipf = zipf
        self.source = source
        self.glosses = glosses  # open play's ranker reads them too
        self.gloss_encoder = gloss_encoder
        self.spellings = spellings or {}

    @classmethod
    def build(cls, words: Iterable[str], encoder: Encoder) -> "VocabularyIndex":
        """An exact index of a few thousand words (the data's), embedded now."""
        distinct = sorted(set(words))
        encoder.warm(distinct)  # fills the disk cache when there is one
        vectors = np.ascontiguousarray(encoder.encode(distinct), dtype=np.float32)
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        return cls(distinct, index, encoder)

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
        spellings = spelling_groups(words, read_glosses())
        return cls(words, index, encoder, lexicon.frequencies(), lexicon.source, glosses, base, spellings)

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
        # One thread: faiss' OpenMP threads wait on each other more than they help on a 2-core
        # machine shared with the encoders, and a clue's result must not depend on its batch.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            _, ids = self.index.search(queries, k)
        finally:
            faiss.omp_set_num_threads(threads)
        return [[self.words[i] for i in row if i >= 0] for row in ids]

    def candidates(self, hint_lists: Sequence[Sequence[str]], wanted: int, fallback: Encoder) -> list[list[str]]:
        """Each clue's `wanted` candidates: the words nearest to its joined hints that a player
        would take as guesses (no hint word, one form and one spelling of each word:
        pictorank.lexicon.playable)."""
        clue_vectors = self.clue_vectors([joined_text(hints) for hints in hint_lists], fallback)
        found = self.search(clue_vectors, search_width(wanted))
        return [playable(hints, words, spellings=self.spellings)[:wanted] for hints, words in zip(hint_lists, found)]


def vocabulary_words(puzzle_files: Sequence[Path], word_list: Path | None) -> list[str]:
    """Every option and answer of the given puzzle files, plus the lines of `word_list`."""
    words: set[str] = set()
    for path in puzzle_files:
        for puzzle in load_puzzles(path):
            words.update(puzzle.options)
    if word_list is not None:  # read and checked as a lexicon's word list is (size, lines, words)
        words.update(read_table(word_list, str(word_list)).words)
    return sorted(words)


def data_index(words: Sequence[str], encoder: Encoder) -> VocabularyIndex | None:
    """The index of the data's `words`; None, which turns open play off (a clue without options
    gets 422), when there are none: an index of no words cannot answer a search."""
    if words:
        return VocabularyIndex.build(words, encoder)
    log.warning("open-vocabulary mode is disabled: the vocabulary files and word list name no words")
    return None


def lexicon_index(model_dir: Path | None, choice: str, encoders: Encoders, words: Sequence[str],
                  with_glosses: bool = False) -> VocabularyIndex | None:
    """The index over the lexicon `choice` names (`auto`: the model folder's, `wordnet`, a word
    list's path, or `none`), with the data's `words`; None when it names none (`none`, or `auto`
    and the model folder stores none).

    Stored vectors (lexicon.npz, made by this model's encoders) are used as they are; words the
    store lacks (the data's words, a word list, a lexicon it was not built for) are embedded now.
    Glosses are searched only `with_glosses` (an open-play ranker fitted on what they find), and
    only when the served base encoder made them.
    """
    stored = lexicon_store.load(model_dir) if model_dir is not None and choice != "none" else None
    if choice == "none" or (choice == "auto" and stored is None):
        return None
    if stored is not None and choice not in ("auto", stored.lexicon.source):
        stored = None  # stored for another lexicon
    space = stored.space if stored is not None else lexicon_store.DEFAULT_SPACE
    encoder = encoders.finetuned if space == "ft" and encoders.finetuned is not None else encoders.base
    lexicon = stored.lexicon if stored is not None else load_lexicon("wordnet" if choice == "auto" else choice)
    same_encoder = stored is not None and stored.encoder_id == encoder.model_id
    if stored is not None and not same_encoder:
        log.warning("the stored lexicon was embedded by %s, not the served %s: embedding it anew "
                    "(`pictorank lexicon --model DIR` stores it again)", stored.encoder_id, encoder.model_id)
    lexicon = lexicon.with_words(words)
    vectors, embedded = _word_vectors(lexicon, stored.vectors[stored.space] if stored is not None and same_encoder
                                      else None, encoder, space)
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


def store_lexicon(model_dir: Path, settings: CommonSettings, lexicon_name: str, space: str,
                  vocabulary_files: Sequence[Path]) -> lexicon_store.StoredLexicon:
    """Embed `lexicon_name`'s words and the options of `vocabulary_files` with each of the
    model's serving encoders, and their glosses with the base one, into model_dir/lexicon.npz,
    to be searched in `space` (`pictorank train` and `pictorank lexicon` both come here)."""
    lexicon = lexicon_with_data(lexicon_name, vocabulary_files)
    encoders = serving_encoders(model_dir, settings)
    if space == "ft" and encoders.finetuned is None:
        raise UsageError(f"{model_dir}: the model has no fine-tuned encoder; use --space base")
    spaces = {"base": encoders.base} if encoders.finetuned is None else {"base": encoders.base, "ft": encoders.finetuned}
    return lexicon_store.build(model_dir, lexicon, spaces, space)


def lexicon_with_data(lexicon_name: str, vocabulary_files: Sequence[Path]) -> Lexicon:
    """The words a model folder's lexicon holds: `lexicon_name`'s and the options of the data
    files (a clue's answer may be a data word the lexicon lacks)."""
    return load_lexicon(lexicon_name).with_words(vocabulary_words(vocabulary_files, None))


def stored_words(stored: lexicon_store.StoredLexicon) -> str:
    """"76041 words and 75159 glosses": what a stored lexicon holds, for the log."""
    return f"{len(stored.lexicon)} words and {len(stored.glosses or ())} glosses"
