"""Open play's retrieval ceiling on train folds: dense search alone against dense + BM25 fused.

    PICTORANK_CACHE_DIR=.cache/embeddings .venv/bin/python bench/open_vocab_retrieval.py [--folds 3]

For each fold (by answer, training's own `query_folds`), the fold's encoder (fine-tuned on the
other folds, as open play's training builds it; read from the fine-tuning cache when there) embeds
the lexicon, and each held-out clue whose answer is in the lexicon is searched as open play
searches it (pictorank.open_play.index: words and glosses), and by BM25 (`bm25s`, which the bench
needs and pictorank does not: the lever was not adopted) over each word's name, gloss and kinds.
The table gives, per retrieval, the
share of those clues whose answer is among the first 10 / 30 / 100 playable candidates (the ranker
never sees an answer past 100), with its standard error by clue. Nothing is learned from val.
"""

from __future__ import annotations

import argparse
import time
from typing import Mapping, Sequence

import numpy as np

from harness import reference_line  # bench/harness.py, beside this file
from pictorank.encoders import Encoder
from pictorank.lexicon import DEFAULT_SOURCE, guess_key, load_lexicon, matches, playable, without_qualifier
from pictorank.lexicon import store as lexicon_store
from pictorank.lexicon.facts import WordFacts, default_facts, facts_of, stem_tokens
from pictorank.lexicon.words import without_qualifier as plain
from pictorank.open_play import VocabularyIndex, search_width
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import joined_text
from pictorank.settings import CommonSettings
from pictorank.train.config import TrainConfig
from pictorank.train.fold_encoders import query_folds
from pictorank.train.oof import as_served, fold_extractor

RRF_OFFSET = 60  # reciprocal-rank fusion's constant (Cormack et al. 2009): 1 / (60 + rank)


class LexicalIndex:
    """BM25 over the documents of `words` (one a word, in the same order).

    Parameters
    ----------
    words : the words, in the order their documents are indexed.
    documents : each word's tokens (see `document`).
    k1, b : BM25's term-frequency saturation and length normalisation (Robertson's defaults).
    """

    def __init__(self, words: Sequence[str], documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        if len(words) != len(documents):
            raise ValueError(f"{len(documents)} documents for {len(words)} words")
        self.words = list(words)
        self.k1, self.b = k1, b
        self.retriever_ = bm25s.BM25(k1=k1, b=b)
        self.retriever_.index([list(d) or ["\0"] for d in documents], show_progress=False)

    @classmethod
    def of_words(cls, words: Sequence[str], facts: Mapping[str, WordFacts]) -> "LexicalIndex":
        return cls(words, [document(w, facts) for w in words])

    def search(self, texts: Sequence[str], k: int) -> list[list[int]]:
        """For each text, the rows of the (at most) `k` words whose documents share a stem with it,
        best first; a word scored alike keeps the index's order."""
        k = min(k, len(self.words))
        found: list[list[int]] = []
        for text in texts:
            tokens = stem_tokens(text)
            if not tokens:
                found.append([])
                continue
            scores = self.retriever_.get_scores(tokens)
            top = np.flatnonzero(scores > 0)
            top = top[np.lexsort((top, -scores[top]))][:k]
            found.append(top.tolist())
        return found


def document(word: str, facts: Mapping[str, WordFacts]) -> list[str]:
    """The tokens a word is found by: its name, its gloss, its kinds."""
    known = facts_of(word, facts)
    text = plain(word).replace("_", " ")
    if known is not None:
        text = f"{text} {known.gloss} {known.kinds_text}"
    return stem_tokens(text)


def fused_many(rankings: Sequence[Sequence[int]], weights: Sequence[float]) -> list[int]:
    """Reciprocal-rank fusion of several rankings, each weighted; ties keep the first ranking's
    order, then the next's."""
    score: dict[int, float] = {}
    order: dict[int, int] = {}
    for n, (ranking, weight) in enumerate(zip(rankings, weights)):
        for rank, row in enumerate(ranking):
            score[row] = score.get(row, 0.0) + weight / (RRF_OFFSET + rank)
            order.setdefault(row, n * POOL + rank)
    return sorted(score, key=lambda row: (-score[row], order[row]))


def fused(dense: Sequence[int], lexical: Sequence[int], weight: float = 1.0) -> list[int]:
    """Reciprocal-rank fusion of two rankings of rows: 1/(RRF_OFFSET + rank) from each list a row
    is in (the lexical one times `weight`), best first; ties keep the dense order, then the
    lexical one."""
    score: dict[int, float] = {}
    order: dict[int, int] = {}
    for rank, row in enumerate(dense):
        score[row] = 1.0 / (RRF_OFFSET + rank)
        order[row] = rank
    for rank, row in enumerate(lexical):
        score[row] = score.get(row, 0.0) + weight / (RRF_OFFSET + rank)
        order.setdefault(row, len(dense) + rank)
    return sorted(score, key=lambda row: (-score[row], order[row]))


DEPTHS = (10, 30, 100)
POOL = 1000  # how deep each ranking is read before fusion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", default="data/bliss/train.csv")
    parser.add_argument("--hints", default="data/bliss/hint_descriptions.csv")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.25, 0.5])
    parser.add_argument("--shares", type=int, nargs="+", default=[10, 20, 30],
                        help="lexical candidates put after the dense ones (of 100)")
    parser.add_argument("--hint-weights", type=float, nargs="+", default=[0.25, 0.5],
                        help="weights of each hint's own dense search, fused with the joined hints'")
    args = parser.parse_args()
    config = TrainConfig()
    settings = CommonSettings()
    vocab = load_hints(args.hints)
    train = to_queries(load_puzzles(args.train, vocab), vocab)
    base = as_served(Encoder(cache_dir=settings.cache_dir), config)
    lexicon = load_lexicon(DEFAULT_SOURCE)
    keys = {guess_key(w) for w in lexicon.words}
    glosses = lexicon_store.embed_glosses(lexicon, base)
    lexical = LexicalIndex.of_words(list(lexicon.words), default_facts())
    folds = query_folds(train, config.folds, config.seed)
    methods = ["dense", *(f"dense + BM25 x{w:g}" for w in args.weights),
               *(f"dense {100 - m} + BM25 {m}" for m in args.shares), "BM25 alone", "BM25 of the first hint alone",
               *(f"dense, joined + each hint x{w:g}" for w in args.hint_weights),
               *(f"dense, joined + first hint x{w:g}" for w in args.hint_weights)]
    hits = {m: [] for m in methods}
    for k in range(config.folds):
        started = time.perf_counter()
        inside = [q for q, f in zip(train, folds) if f != k]
        held = [q for q, f in zip(train, folds) if f == k and without_qualifier(q.answer or "").casefold() in keys]
        _, ft, _ = fold_extractor(inside, base, config, print)
        space = ft or base
        stored = lexicon_store.embed(lexicon, {"space": space}, "space")
        index = VocabularyIndex.of_lexicon(lexicon, stored.search_vectors(), space, glosses, base)
        texts = [joined_text(q.hints) for q in held]
        dense_rows = _dense_rows(index, texts, base)
        lexical_rows = lexical.search(texts, POOL)
        row_of = {w: r for r, w in enumerate(index.words)}
        first_rows = lexical.search([q.hints[0] for q in held], POOL)
        hint_texts = sorted({h for q in held for h in q.hints})
        hint_rows = dict(zip(hint_texts, _dense_rows(index, hint_texts, base)))
        for q, d, lx, first in zip(held, dense_rows, lexical_rows, first_rows):
            for w in args.hint_weights:
                each = [hint_rows[h] for h in q.hints]
                rankings_h = {f"dense, joined + each hint x{w:g}": fused_many([d, *each], [1.0, *[w] * len(each)]),
                              f"dense, joined + first hint x{w:g}": fused_many([d, each[0]], [1.0, w])}
                for method, rows in rankings_h.items():
                    shown = playable(q.hints, [index.words[r] for r in rows[: search_width(100)]], spellings=index.spellings)
                    found = next((i for i, x in enumerate(shown[:100]) if matches(x, q.answer or "")), None)
                    hits[method].append(np.inf if found is None else found)
            rankings = {"dense": d[: search_width(100)], "BM25 alone": lx, "BM25 of the first hint alone": first}
            rankings.update({f"dense + BM25 x{w:g}": fused(d, lx, w) for w in args.weights})
            for m in args.shares:
                shown = playable(q.hints, [index.words[r] for r in d[: search_width(100)]], spellings=index.spellings)[: 100 - m]
                extra = [w for w in playable(q.hints, [index.words[r] for r in lx[: search_width(100)]],
                                             spellings=index.spellings) if w not in shown][:m]
                rankings[f"dense {100 - m} + BM25 {m}"] = [row_of[w] for w in [*shown, *extra]]
            for method, rows in rankings.items():
                shown = playable(q.hints, [index.words[r] for r in rows[: search_width(100)]],
                                 spellings=index.spellings)
                found = next((i for i, w in enumerate(shown[:100]) if matches(w, q.answer or "")), None)
                hits[method].append(np.inf if found is None else found)
        print(f"fold {k + 1}/{config.folds}: {len(held)} clues in {time.perf_counter() - started:.0f} s", flush=True)
    print(reference_line())
    print(f"\n{len(hits['dense'])} train clues with their answer in the lexicon ({config.folds} folds by answer)\n")
    print("| retrieval | " + " | ".join(f"answer in first {d}" for d in DEPTHS) + " |\n|---|" + "---|" * len(DEPTHS))
    for method in methods:
        ranks = np.array(hits[method])
        cells = []
        for depth in DEPTHS:
            share = ranks < depth
            cells.append(f"{share.mean():.3f} ± {share.std(ddof=1) / np.sqrt(len(share)):.3f}")
        print(f"| {method} | " + " | ".join(cells) + " |")


def _dense_rows(index: VocabularyIndex, texts: list[str], base) -> list[list[int]]:
    """Each text's POOL nearest rows of `index`, as open play's search finds them."""
    queries = np.ascontiguousarray(index.clue_vectors(texts, base), dtype=np.float32)
    _, ids = index.index.search(queries, POOL)
    return [[int(i) for i in row if i >= 0] for row in ids]


if __name__ == "__main__":
    main()
