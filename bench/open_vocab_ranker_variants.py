"""More that open play's ranker could read or learn, measured on train folds only.

    .venv/bin/python bench/open_vocab_ranker_variants.py --model DIR [--cache DIR] [--glosses FILE.npy]
                                                         [--tables FILE] [--wordnet DIR]

The rows are open play's as `pictorank train` builds them (bench/open_vocab_wordnet.py, whose
options this bench shares); each clue is scored by a ranker fitted on the other folds. Against
the shipped columns and objective, each variant's differences are printed with standard errors
clustered by answer:

- compound parts: a hint's word also meets a hypernym or gloss word it is part of ("time" in
  "timepiece"), a word split where both halves are lexicon words;
- every sense: the share of hints, and the first hint, among the hypernyms' and glosses' words of
  all of a word's senses, beside the first sense's;
- how general a word is: its first sense's depth under WordNet's root, its direct hyponyms and
  (log) all its descendants: a basic-level word (watch) sits above specific ones (wristwatch);
- the kind's cosines: the first, the largest and the mean cosine of the hints to the candidate's
  kind (the first lemma of its first sense's direct hypernym: timepiece for watch), a soft
  `wn_kind_first`, in the fold encoder's space and the base one;
- the objective: LambdaMART with every candidate in its gradient (truncation level 100, not
  LightGBM's 30), and LightGBM's listwise rank_xendcg.

`--wordnet` names WordNet 3.0's dict folder (data.* and index.* files: Debian's wordnet-base
puts them in /usr/share/wordnet), which scripts/build_wordnet_facts.py reads.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from build_wordnet_facts import PARTS, Synset, hypernym_words, read_index, read_synsets  # noqa: E402
from open_vocab_ranker import held_out, metrics, ranks_of, training_setup  # noqa: E402
from open_vocab_wordnet import arguments, print_table, shipped_rows  # noqa: E402

from pictorank.features.gloss import GLOSS_COLUMNS  # noqa: E402
from pictorank.features.word import WORD_COLUMNS  # noqa: E402
from pictorank.features.wordnet import WORDNET_COLUMNS, wordnet_columns  # noqa: E402
from pictorank.encoders import Encoder  # noqa: E402
from pictorank.lexicon.facts import _WORD, default_facts, facts_of, stems_of  # noqa: E402  (a word as stems_of finds one)
from pictorank.query import Query  # noqa: E402
from pictorank.train import lambdamart  # noqa: E402
from pictorank.train.config import TrainConfig  # noqa: E402
from pictorank.train.oof import answer_folds, as_served, finetuned_encoder  # noqa: E402
from pictorank.train.open_play import OpenPlayTables  # noqa: E402

MATCH_COLUMNS = WORDNET_COLUMNS[4:]  # wn_kind_hints, wn_kind_first, wn_gloss_hints, wn_gloss_first
GENERAL_COLUMNS = ("general_depth", "general_hyponyms", "general_descendants")
KIND_COSINE_COLUMNS = tuple(f"kind_cos_{space}_{pool}" for space in ("ft", "base") for pool in ("first", "max", "mean"))


class WordNet:
    """WordNet 3.0's synsets and index, read from its dict folder."""

    def __init__(self, folder: Path) -> None:
        self.synsets = {part: read_synsets(folder, part) for part in PARTS}
        self.index = {part: read_index(folder, part) for part in PARTS}

    def senses(self, word: str) -> list[tuple[str, Synset, str]]:
        """(part, synset, offset) of every sense of `word`, in the index's order."""
        key = word.casefold().replace(" ", "_")
        return [(part, self.synsets[part][o], o) for part in PARTS for o in self.index[part].get(key, ())]

    @lru_cache(maxsize=None)
    def depth(self, part: str, offset: str) -> int:
        above = self.synsets[part][offset].hypernyms
        return 0 if not above else 1 + min(self.depth(part, o) for o in above)

    def kind(self, word: str) -> str | None:
        """The first lemma of the direct hypernym of `word`'s first sense (None without one)."""
        senses = self.senses(word)
        if not senses or not senses[0][1].hypernyms:
            return None
        part, synset, _ = senses[0]
        return self.synsets[part][synset.hypernyms[0]].words[0].replace("_", " ")

    def descendants(self, part: str, offset: str) -> int:
        seen, level = set(), [offset]
        while level:
            level = [d for o in level for d in self.synsets[part][o].hyponyms if d not in seen]
            seen.update(level)
        return len(seen)


def split_parts(words: frozenset[str]) -> Callable[[str], frozenset[str]]:
    """The stems of a text's words and of the halves of those that split into two of `words`
    (its words found as `stems_of` finds them, so "timepiece," in a gloss is split too)."""
    @lru_cache(maxsize=None)
    def halves(word: str) -> tuple[str, ...]:
        return next(((word[:i], word[i:]) for i in range(3, len(word) - 2) if word[:i] in words and word[i:] in words), ())

    @lru_cache(maxsize=None)
    def stems(text: str) -> frozenset[str]:
        return stems_of(text) | stems_of(" ".join(h for w in _WORD.findall(text.casefold()) for h in halves(w)))
    return stems


def match_columns(queries: Sequence[Query], reads: Callable[[str], tuple[frozenset[str], frozenset[str]] | None],
                  prefix: str) -> dict[str, np.ndarray]:
    """MATCH_COLUMNS (renamed with `prefix`) of every candidate from `reads(word)`: its kinds' and
    its definitions' stems, or None for a word WordNet lacks."""
    parts = []
    for q in queries:
        found = [reads(o) for o in q.options]
        columns = wordnet_columns([stems_of(h) for h in q.hints], [(0, 0, 0, 0) if f else None for f in found],
                                  [f[0] if f else frozenset() for f in found], [f[1] if f else frozenset() for f in found])
        parts.append({prefix + name[3:]: columns[name] for name in MATCH_COLUMNS})
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def variant_columns(queries: Sequence[Query], wordnet: WordNet, lexicon_words: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    """Each column variant's columns, by variant name."""
    facts = default_facts()
    stems = split_parts(frozenset(w for w in lexicon_words if w.isalpha() and w.islower() and len(w) >= 3))

    def compound(word: str) -> tuple[frozenset[str], frozenset[str]] | None:
        f = facts_of(word, facts)
        return (stems(f.kinds_text), stems(f.gloss)) if f else None

    @lru_cache(maxsize=None)
    def every_sense(word: str) -> tuple[frozenset[str], frozenset[str]] | None:
        senses = wordnet.senses(word)
        if not senses:
            return None
        return (stems_of(" ".join(" ".join(hypernym_words(o, wordnet.synsets[p], 12)) for p, _, o in senses)),
                stems_of(" ".join(s.gloss for _, s, _ in senses)))

    def general(word: str) -> tuple[float, float, float]:
        first = next(((p, s, o) for p, s, o in wordnet.senses(word) if p in ("noun", "verb")), None)
        if first is None:
            return (np.nan, np.nan, np.nan)
        part, synset, offset = first
        return (wordnet.depth(part, offset), len(synset.hyponyms), np.log1p(wordnet.descendants(part, offset)))

    generality = np.array([general(o) for q in queries for o in q.options], dtype=np.float64).reshape(-1, 3)
    return {"compound parts": match_columns(queries, compound, "wn_"),  # the shipped columns' own names
            "every sense": match_columns(queries, every_sense, "wn_any_"),
            "how general": {name: generality[:, i] for i, name in enumerate(GENERAL_COLUMNS)}}


def kind_cosines(tables: OpenPlayTables, wordnet: WordNet, config: TrainConfig, train: Sequence[Query],
                 base: Encoder) -> dict[str, np.ndarray]:
    """KIND_COSINE_COLUMNS of every row: each clue's in the space of the fold encoder that never
    saw its answer (training's own, read back from the fine-tuning cache) and in the base space;
    NaN for a candidate without a kind."""
    columns = {name: np.full(len(tables.X), np.nan) for name in KIND_COSINE_COLUMNS}
    starts = np.cumsum([0, *tables.sizes])
    folds = answer_folds(train, config.folds, config.seed)
    for k in sorted(set(tables.folds.tolist())):
        inside = [q for q, f in zip(train, folds) if f != k]
        ft = finetuned_encoder(inside, config.oof_epochs, config, base.cache_dir, lambda message: None)[1]
        clues = np.flatnonzero(tables.folds == k)
        kinds = {o: wordnet.kind(o) for i in clues for o in tables.queries[i].options}
        names = sorted({kind for kind in kinds.values() if kind})
        hints = sorted({h for i in clues for h in tables.queries[i].hints})
        for space, encoder in (("ft", ft), ("base", base)):
            kind_vectors = dict(zip(names, encoder.encode(names)))
            hint_vectors = dict(zip(hints, encoder.encode(hints)))
            for i in clues:
                query = tables.queries[i]
                hinted = np.array([hint_vectors[h] for h in query.hints])
                for j, option in enumerate(query.options):
                    if kinds[option] is not None:
                        cosines = hinted @ kind_vectors[kinds[option]]
                        for pool, value in (("first", cosines[0]), ("max", cosines.max()), ("mean", cosines.mean())):
                            columns[f"kind_cos_{space}_{pool}"][starts[i] + j] = value
    return columns


@contextmanager
def objective(name: str, **params: Any) -> Iterator[None]:
    """LightGBM's rankers made with `objective` and `params` instead of the shipped ones."""
    made = lambdamart._ranker

    def ranker(*args: Any, **kwargs: Any) -> Any:
        return made(*args, **kwargs).set_params(objective=name, **params)
    with mock.patch.object(lambdamart, "_ranker", ranker):
        yield


def main() -> None:
    parser = arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"), help="WordNet 3.0's dict folder")
    args = parser.parse_args()
    config, lexicon, learned, tables = shipped_rows(args)
    _, train, _, encoder, _ = training_setup(args.model, args.cache)
    shipped = [*learned.feature_names, *WORD_COLUMNS, *GLOSS_COLUMNS, *WORDNET_COLUMNS]
    started = time.perf_counter()
    wordnet = WordNet(args.wordnet)
    variants = variant_columns(tables.queries, wordnet, lexicon.words)
    variants["kind cosines"] = kind_cosines(tables, wordnet, config, train, as_served(encoder, config))
    print(f"variant columns in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    zipf, results = lexicon.frequencies(), {}

    def score(label: str, columns: dict[str, np.ndarray], extra: Sequence[str] = ()) -> None:
        X = tables.X.copy()
        for name, values in columns.items():
            tables.X[name] = values.astype(np.float32)
        scores, chosen = held_out(tables, [*shipped, *extra], config)
        results[f"{label} ({chosen})"] = metrics(ranks_of(scores, tables, zipf, 0.0))
        tables.X = X
        print(f"{label}: {time.perf_counter() - started:.0f} s", file=sys.stderr)

    score("shipped", {})
    score("hint words met in compound parts too (replacing the match columns)", variants["compound parts"])
    score("+ the match columns over every sense", variants["every sense"], list(variants["every sense"]))
    score("+ how general the word is", variants["how general"], GENERAL_COLUMNS)
    score("+ the hints' cosines to the word's kind", variants["kind cosines"], KIND_COSINE_COLUMNS)
    with objective("lambdarank", lambdarank_truncation_level=100):
        score("objective: every candidate in LambdaMART's gradient", {})
    with objective("rank_xendcg"):
        score("objective: rank_xendcg", {})
    print_table(results, tables, lexicon)


if __name__ == "__main__":
    main()
