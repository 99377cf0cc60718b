"""The clue-giver: ordered pictograms for a secret word, chosen to look like a person's clue and
to make a guesser pick the word over the words it must not be confused with.

1. Score every allowed pictogram (the game rule removes any that names the word or a word to
   avoid: `pictorank.suggest.rules`) with the
   :class:`~pictorank.suggest.model.ClueModel`: P(main idea), P(specifier), P(in the clue);
   P(main idea) includes the main-idea tower's opinion (:mod:`pictorank.suggest.tower`).
2. Candidates: each of the likeliest main ideas followed by every subset of the pictograms
   likeliest to be in the clue at all, of the lengths train clues have, up to `max_length`;
   specifiers in the order of P(specifier). (Taking specifiers by P(in the clue) rather than by
   P(specifier) gives a higher set F1 on val: a likely second main idea is often a specifier.)
3. Human likeness of a candidate: P(its main idea is the human's) + its expected set F1 with the
   human clue, 2 * sum P(in the clue) / (length + mean train clue length): the sum of the expected
   values of two of the agreement measures.
4. A cheap stand-in for the guesser (the mean of the pictograms' description embeddings against
   the word's and the other words') shortlists the candidates; the real guesser ranks the word
   against the other words for each of them.
5. With a `reader` (the encoder a learned model fine-tuned to read train clues as their answers),
   each shortlisted clue's likeness gains READER_WEIGHT x the cosine between the reader's
   embeddings of the joined clue and of the word. The per-pictogram probabilities of steps 1-3
   judge pictograms one at a time; the reader judges the clue as a whole, the way people's clues
   were read in training. On Bliss val it raises set F1, and with no bonus seed Hits@1 too (a
   clue that reads as the word is also guessed more often). READER_WEIGHT is chosen on train
   folds with the other knobs (below). The word is read as the clue model reads it, with its WordNet gloss
   (on val a little more set F1 for about the same seed Hits@1). Figures:
   docs/experiments/clue-giver.md.
6. Clues are ordered by likeness + `win_bonus` if the guesser puts the word first (ties and
   losers by how close the word came). The bonus is the one knob between human likeness and
   guessability. inf puts every winner first.
   The knobs (the bonus, the reader's weight, the main ideas and specifiers tried) are chosen on
   train alone, never on val, for the clue-giver's goal (clues as human-like as they can be while
   the seed guesser picks the word at least 82% of the time): on the ranker's three train folds
   by answer, a clue model fitted on two folds and the reader fine-tuned on them clue the third
   fold's words; of the settings whose mean seed Hits@1 reaches the goal, the one with the
   highest main idea + set F1 is the default (bench/clue_knobs.py; figures:
   docs/experiments/clue-giver.md). Likeness lies in [0, 2] plus the reader's part, so the bonus
   lets a loser keep first place only when it is more human-like than every winner by more.
7. A train clue of the word itself (a person's clue, given back as it was) goes first only when
   the guesser ranks the word first with it; one the guesser misreads goes last, below every
   clue made for the word.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from itertools import combinations
from typing import Sequence

import numpy as np

from pictorank.encoders import Encoder
from pictorank.lexicon.echo import named_among
from pictorank.errors import UsageError
from pictorank.puzzles import HintVocabulary
from pictorank.query import Query, joined_text, seed_text
from pictorank.ranker import Ranker, SeedRanker
from pictorank.suggest.model import ClueModel, PictogramScores
from pictorank.suggest.rules import check_request, same_word, words_of

MAIN_IDEAS = 3  # main ideas tried (chosen on train folds: step 6)
SPECIFIERS = 5  # specifiers tried after each main idea (chosen on train folds: step 6)
SHORTLIST = 10  # candidates the real guesser judges (each is one sentence to encode)
HARDEST_NEIGHBOURS = 10  # stand-ins for `avoid` when none is given
WIN_BONUS = 0.2  # likeness a clue gains by making the guesser pick the word (chosen on train folds: step 6)
READER_WEIGHT = 0.5  # likeness per unit of the reader's cosine (step 5; chosen on train folds: step 6)


@dataclass(frozen=True)
class Pictogram:
    """One pictogram of a suggested clue, and what it contributes."""

    id: int
    description: str
    role: str  # "main idea" or "specifier"
    reason: str


@dataclass(frozen=True)
class Suggestion:
    """An ordered clue for `word`, and how a guesser took it.

    `rank` is the word's 1-based rank among itself and `avoid` under the guesser; `margin` its
    score minus the best other word's (> 0: the guesser picks the word). `likeness` is the human
    likeness of steps 3 and 5 above (higher is more like a train clue). `known` marks a train clue of
    this very word, given back as it was.
    """

    word: str
    pictograms: tuple[Pictogram, ...]
    rank: int
    options: int
    margin: float
    likeness: float
    known: bool = False

    @property
    def hint_ids(self) -> list[int]:
        return [p.id for p in self.pictograms]

    @property
    def descriptions(self) -> list[str]:
        return [p.description for p in self.pictograms]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    pictograms: tuple[int, ...]  # indices into the model's descriptions
    likeness: float  # steps 1-3: without the reader
    known: bool = False
    reading: float = 0.0  # step 5: the reader's cosine between the clue and the word (0 without a reader)


@dataclass(frozen=True)
class JudgedClue:
    """One clue `suggest` chooses among, with what it is chosen by: its likeness without the reader
    (steps 1-3), the reader's cosine (step 5), the guesser's margin and the word's rank (step 6),
    and whether it is a train clue of the word (step 7). Benches re-weigh these to choose the knobs
    on train folds (bench/clue_knobs.py) without suggesting again."""

    pictograms: tuple[int, ...]
    likeness: float
    reading: float
    margin: float
    rank: int
    known: bool


class Suggester:
    """Suggests clues for secret words (see the module docstring for how).

    Parameters
    ----------
    model : a fitted ClueModel (what train clues teach).
    vocabulary : the pictograms that may be used (ids and descriptions).
    guesser : the ranker whose choice the clue must win (e.g. the task's seed baseline).
    encoder : the base encoder the model was fitted with (same `model_id`, else UsageError: an
        ONNX int8 export's vectors are not PyTorch's).
    win_bonus : what winning the guesser is worth in likeness (inf: a winner always beats a loser).
    main_ideas, specifiers, shortlist : candidate counts (see the constants above).
    reader_weight : likeness per unit of the reader's cosine (step 5).
    reader : an encoder fine-tuned on train clues -> answers (a learned model's, see
        pictorank.encoders.Encoders.finetuned), or None. It must have learned from the same train clues as the
        model, never from the words it will be asked about.
    """

    def __init__(self, model: ClueModel, vocabulary: HintVocabulary, guesser: Ranker, encoder: Encoder,
                 main_ideas: int = MAIN_IDEAS, specifiers: int = SPECIFIERS, shortlist: int = SHORTLIST,
                 win_bonus: float = WIN_BONUS, reader: Encoder | None = None,
                 reader_weight: float = READER_WEIGHT) -> None:
        if not win_bonus >= 0:
            raise UsageError(f"win_bonus must be 0 or more, not {win_bonus!r}")
        if encoder.model_id != model.encoder.model_id:  # words must be embedded as the model's were
            raise UsageError(f"the clue model was fitted with encoder {model.encoder.model_id!r}, "
                             f"not {encoder.model_id!r}: score with the one it was fitted with")
        self.win_bonus = win_bonus
        self.reader = reader
        self.reader_weight = reader_weight
        self.model = model
        self.guesser = guesser
        self.encoder = encoder
        self.main_ideas = main_ideas
        self.specifiers = specifiers
        self.shortlist = shortlist
        self._ids = _ids_by_description(vocabulary, model)
        self._usable = np.array([bool(self._ids.get(d)) for d in model.descriptions_])
        lengths = [len(c.pictograms) for c in model.clues_]
        self._shortest = min(lengths)
        self._answers = [c.answer for c in model.clues_]
        self._answer_vectors = model.clue_vectors_
        if model.glossary is not None:
            model.glossary.load()

    # -- the one entry point ----------------------------------------------------------------------
    def suggest(self, word: str, avoid: Sequence[str] | None = None, max_length: int = 4, top: int = 5,
                use_known: bool = True) -> list[Suggestion]:
        """Up to `top` clues for `word`, best first. `avoid`: words the guesser must not pick
        instead (a game's other options); when empty, the word's nearest train answers stand in.
        `use_known=False` never gives back a train clue of the word (for evaluation)."""
        word, avoid = check_request(word, avoid, max_length, top)
        vector, scores, options, shortlist, judged = self._judged(word, avoid, max_length, use_known)
        order = sorted(range(len(shortlist)),
                       key=lambda i: _preference(shortlist[i].known, self._total(shortlist[i]), judged[i][0], self.win_bonus))
        chosen, seen = [], set()
        for i in order:
            if shortlist[i].pictograms not in seen:
                seen.add(shortlist[i].pictograms)
                chosen.append(self._suggestion(word, vector, shortlist[i], judged[i], len(options), scores))
        return chosen[:top]

    def judged(self, word: str, avoid: Sequence[str] | None = None, max_length: int = 4,
               use_known: bool = True) -> list[JudgedClue]:
        """Every clue `suggest` would choose among for `word`, judged, in no particular order."""
        word, avoid = check_request(word, avoid, max_length, 1)
        *_, shortlist, judged = self._judged(word, avoid, max_length, use_known)
        return [JudgedClue(c.pictograms, c.likeness, c.reading, margin, rank, c.known)
                for c, (margin, rank) in zip(shortlist, judged)]

    def _judged(self, word: str, avoid: list[str], max_length: int, use_known: bool) -> tuple:
        """Steps 1-5 and the guesser's judgement: the word's vector, its pictogram scores, the
        options, the shortlist (train clues of the word first) and each one's (margin, rank)."""
        allowed = self._allowed(word, avoid)
        vector = self._word_vector(word, avoid)
        if not avoid:
            avoid = self.hardest_neighbours(word, vector)
        scores = self.model.score(word, vector, allowed)
        candidates = self._candidates(scores, max_length)
        known = self._known(word, allowed, max_length, scores) if use_known else []
        options = [word, *avoid]
        stored = {c.pictograms for c in known}  # a candidate that is a train clue of the word is that clue
        fresh = [c if c.pictograms not in stored else replace(c, known=True) for c in self._shortlist(candidates, options)]
        shortlist = self._read(word, known + fresh)
        return vector, scores, options, shortlist, self._judge(shortlist, options)

    def _total(self, candidate: _Candidate) -> float:
        """The candidate's likeness with the reader's part (step 5)."""
        return candidate.likeness + self.reader_weight * candidate.reading

    def explain(self, word: str, avoid: Sequence[str], hint_ids: Sequence[int]) -> Suggestion:
        """The clue `hint_ids` for `word`, judged and explained as `suggest` judges and explains its
        own (rank, likeness, a reason per pictogram), whichever clue `suggest` would choose now. A
        Clue-mode round explains the clue it showed: another process may choose another one, since
        the int8 encoder's vectors depend on the batches that process encoded before."""
        word, avoid = check_request(word, avoid, max(len(hint_ids), 1), 1)
        description_of = {hint_id: d for d, ids in self._ids.items() for hint_id in ids}
        if not hint_ids or any(h not in description_of for h in hint_ids):
            raise UsageError(f"not a clue in this vocabulary: {list(hint_ids)[:6]}")
        clue = tuple(self.model.index_[description_of[h]] for h in hint_ids)
        allowed = self._allowed(word, avoid)
        if len(set(clue)) < len(clue) or not allowed[list(clue)].all():  # the game rule: no clue of ours
            raise UsageError(f"not a clue of {word!r} by the game's rule: {list(hint_ids)[:6]}")
        vector = self._word_vector(word, avoid)
        if not avoid:
            avoid = self.hardest_neighbours(word, vector)
        scores = self.model.score(word, vector, allowed)
        [candidate] = self._read(word, [_Candidate(clue, self._likeness(clue, scores))])
        options = [word, *avoid]
        [judged] = self._judge([candidate], options)
        return self._suggestion(word, vector, candidate, judged, len(options), scores)

    def _word_vector(self, word: str, avoid: Sequence[str]) -> np.ndarray:
        """The word as the clue model reads it (with its gloss). The gloss and the avoid words are
        encoded in the same call (the guesser stand-in then finds the avoid words cached; each
        string's vector is its own whatever it is encoded with), by this suggester's encoder: a service's clue model holds an encoder
        that takes the service's lock, which the request already holds."""
        gloss = self.model.gloss(word)
        vectors = self.encoder.encode([word, *avoid, *([gloss] if gloss is not None else [])])
        return self.model.reading(vectors[0], vectors[-1] if gloss is not None else None)

    def _allowed(self, word: str, avoid: Sequence[str]) -> np.ndarray:
        """The pictograms a clue of `word` may use: usable ones that name neither the word nor a
        word to avoid (the game rule: a clue showing "tower" reads as tower, whatever it is for)."""
        return self._usable & ~np.array(named_among(self.model.descriptions_, [word, *avoid]), dtype=bool)

    def hardest_neighbours(self, word: str, vector: np.ndarray | None = None,
                           count: int = HARDEST_NEIGHBOURS) -> list[str]:
        """The train answers nearest `word` (not the word itself): the likeliest confusions.
        `vector`, if given, is the word as the clue model reads it, as its answers' vectors are."""
        if vector is None:
            vector = self._word_vector(word, [])
        order = np.argsort(-(self._answer_vectors @ vector), kind="stable")
        target = words_of(word)
        found: list[str] = []
        for i in order:
            answer = self._answers[i]
            if answer not in found and answer != word and not same_word(words_of(answer), target):
                found.append(answer)
                if len(found) == count:
                    break
        return found

    # -- candidates -------------------------------------------------------------------------------
    def _lengths(self, max_length: int) -> range:
        """Clue lengths to try: as short as train clues get (2 on Bliss), up to max_length."""
        return range(min(self._shortest, max_length), max_length + 1)

    def _candidates(self, scores: PictogramScores, max_length: int) -> list[_Candidate]:
        pool = scores.pool
        mains = pool[np.argsort(-scores.first[pool], kind="stable")][: self.main_ideas]
        candidates = []
        for main in mains:
            rest = [i for i in pool[np.argsort(-scores.any[pool], kind="stable")] if i != main][: self.specifiers]
            rest.sort(key=lambda i: -scores.rest[i])
            for length in self._lengths(max_length):
                for specifiers in combinations(rest, length - 1):
                    clue = (int(main), *map(int, specifiers))
                    candidates.append(_Candidate(clue, self._likeness(clue, scores)))
        return candidates

    def _likeness(self, clue: Sequence[int], scores: PictogramScores) -> float:
        """P(main idea right) + expected set F1 against the human clue (see the module docstring)."""
        expected_f1 = 2 * float(scores.any[list(clue)].sum()) / (len(clue) + self.model.mean_length_)
        return float(scores.first[clue[0]]) + expected_f1

    def _known(self, word: str, allowed: np.ndarray, max_length: int, scores: PictogramScores) -> list[_Candidate]:
        """Train clues of this very word that follow the rules and fit in max_length, with their
        likeness (they are judged like any candidate; `_preference` says when one goes first)."""
        return [
            _Candidate(c.pictograms, self._likeness(c.pictograms, scores), known=True)
            for c in self.model.clues_
            if c.answer == word and len(c.pictograms) <= max_length
            and len(set(c.pictograms)) == len(c.pictograms) and allowed[list(c.pictograms)].all()
        ]

    def _shortlist(self, candidates: list[_Candidate], options: list[str]) -> list[_Candidate]:
        """Half the most human-like, half the best by the cheap guesser stand-in."""
        if len(candidates) <= self.shortlist:
            return candidates
        vectors = self.model.description_vectors_
        clues = np.stack([vectors[list(c.pictograms)].sum(0) for c in candidates])
        clues /= np.linalg.norm(clues, axis=1, keepdims=True)
        similarity = clues @ self.encoder.encode(options).T
        proxy = similarity[:, 0] - similarity[:, 1:].max(1, initial=-1.0)
        likeness = np.array([c.likeness for c in candidates])
        half = self.shortlist // 2
        picked = list(np.argsort(-likeness, kind="stable")[:half])
        picked += [i for i in np.argsort(-proxy, kind="stable") if i not in picked][: self.shortlist - half]
        return [candidates[i] for i in picked]

    def _read(self, word: str, candidates: list[_Candidate]) -> list[_Candidate]:
        """Add to each candidate's likeness how well the reader reads the whole clue as the word
        (step 5), the word read as the clue model reads it: with its gloss, if it has one;
        unchanged without a reader."""
        if self.reader is None or not candidates:
            return candidates
        gloss = self.model.gloss(word)
        glosses = [gloss] if gloss is not None else []
        texts = [joined_text([self.model.descriptions_[i] for i in c.pictograms]) for c in candidates]
        vectors = self.reader.encode([word, *glosses, *texts])
        target = self.model.reading(vectors[0], vectors[1] if glosses else None)
        cosines = vectors[1 + len(glosses):] @ target
        return [replace(c, reading=float(cos)) for c, cos in zip(candidates, cosines)]

    def _judge(self, candidates: list[_Candidate], options: list[str]) -> list[tuple[float, int]]:
        """Per candidate: the guesser's score of the word minus the best other option's, and the
        word's 1-based rank among the options (ties count against the word)."""
        if not candidates:
            return []
        queries = [Query(tuple(self.model.descriptions_[i] for i in c.pictograms), tuple(options)) for c in candidates]
        if isinstance(self.guesser, SeedRanker):  # it encodes one clue per call: batch them first
            self.guesser.encoder.encode([seed_text(q.hints) for q in queries])
        judged = []
        for scores in self.guesser.score(queries):
            scores = np.asarray(scores, dtype=float)
            margin = float(scores[0] - scores[1:].max(initial=-np.inf))
            judged.append((margin, 1 + int((scores[1:] >= scores[0]).sum())))
        return judged

    # -- the answer -------------------------------------------------------------------------------
    def _suggestion(self, word: str, vector: np.ndarray, candidate: _Candidate, judged: tuple[float, int],
                    options: int, scores: PictogramScores) -> Suggestion:
        pictograms = tuple(
            Pictogram(self._ids[self.model.descriptions_[i]][0], self.model.descriptions_[i],
                      "main idea" if position == 0 else "specifier",
                      "a train clue of this word" if candidate.known else self._reason(i, position, vector, scores))
            for position, i in enumerate(candidate.pictograms)
        )
        margin, rank = judged
        return Suggestion(word, pictograms, rank, options, margin, self._total(candidate), candidate.known)

    def _reason(self, index: int, position: int, vector: np.ndarray, scores: PictogramScores) -> str:
        """What the pictogram contributes, from the strongest evidence for it."""
        parts = scores.parts
        part = parts.text.get(index)
        users = [self.model.clues_[r] for r in scores.neighbours[:10]]
        if position == 0:
            if parts.head[index]:
                return f"main idea: names the head of the word ({part!r})"
            if parts.parenthesis[index]:
                return f"main idea: names the word's sense ({part!r})"
            similar = list(dict.fromkeys(c.answer for c in users if c.pictograms[0] == index))[:3]
            if similar:
                return "main idea of the clues of similar words: " + ", ".join(similar)
            return f"the likeliest main idea for a word like this (P = {scores.first[index]:.2f})"
        if part is not None:
            return f"names a part of the word ({part!r})"
        similar = list(dict.fromkeys(c.answer for c in users if index in c.pictograms[1:]))[:3]
        if similar:
            return "specifies as in the clues of: " + ", ".join(similar)
        cosine = float(self.model.description_vectors_[index] @ vector)
        return f"close in meaning to the word (cosine {cosine:.2f})"


def first_choice(clues: Sequence[JudgedClue], reader_weight: float, win_bonus: float) -> JudgedClue:
    """The clue `suggest` puts first among `clues` (as `Suggester.judged` returns them) with these
    knobs: what a bench needs to try many knobs on one set of judged clues."""
    return min(clues, key=lambda c: _preference(c.known, c.likeness + reader_weight * c.reading, c.margin, win_bonus))


def _preference(known: bool, likeness: float, margin: float, win_bonus: float) -> tuple:
    """Sort key: a train clue of the word first when the guesser picks the word with it; then
    the other clues by likeness plus the bonus for winning; last, the train clues it does not
    pick the word with (a person's clue that the guesser misreads is no clue to offer first)."""
    wins = margin > 0
    if known:
        return (0, 0.0, -margin) if wins else (2, 0.0, -margin)
    if math.isinf(win_bonus):
        return (1, -float(wins), -likeness if wins else -margin)
    return (1, -(likeness + win_bonus * wins), -margin)


def _ids_by_description(vocabulary: HintVocabulary, model: ClueModel) -> dict[str, list[int]]:
    """Pictogram ids of each description, smallest first. The model knows pictograms by their
    descriptions (two ids with one description are the same pictogram to every text model)."""
    ids: dict[str, list[int]] = {}
    for hint_id, description in vocabulary.descriptions.items():
        ids.setdefault(description, []).append(hint_id)
    return {d: sorted(v) for d, v in ids.items()}
