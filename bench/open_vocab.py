"""Open-vocabulary mode on held-out puzzles: the answer guessed from the whole English lexicon,
not from the puzzle's options.

    .venv/bin/python bench/open_vocab.py --model DIR [--split val] [--candidates 100] [--prior 0.2]
                                         [--choose-prior] [--limit N] [--no-everyday]

DIR must store its lexicon (lexicon.npz: `pictorank lexicon --model DIR`). The service's own code
path (RankingService, no HTTP): its faiss index over the lexicon, here *without* the data's words
(train/val/test options), hands the `--candidates` words nearest to the clue (less hint words and
repeated forms) to a ranker; the frequency prior then reorders them. A guess matches the answer
when it equals it or the answer without its parenthesised qualifier ("library" is
"library (building)"). Scored on the puzzles whose answer, so matched, is in the lexicon; the
share of such puzzles is printed. Rows: seed-style cosine and cosine (over the model's base
encoder) and the learned model, all on the same candidates; and today's behaviour, the learned
model choosing among the data's words only; and, when the model folder has one, open play's own
ranker (pictorank.open_play), which the service uses for such clues. The retrieval
ceiling is the share of puzzles whose answer is among the candidates handed to the ranker.

`--choose-prior` (run it on `--split train`) picks the prior's weight by 5-fold CV over the
puzzles, folds grouped by answer: the weight best on four folds is scored on the fifth. The
learned model's scores on train are in-sample (it was fitted there), so its choice leans to
trusting the ranker; cosine's is printed beside it. Then the eight everyday clues of issue 34,
ranked by the service as served (lexicon and data words, free-text hints).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import faiss
import numpy as np

from pictorank.api.service import Clue, build_service
from pictorank.api.settings import Settings
from pictorank.errors import PictorankError
from pictorank.evaluation import summarise
from pictorank.evaluation.folds import answer_folds
from pictorank.lexicon import guess_key, matches, with_prior, without_qualifier
from pictorank.lexicon.words import default_lexicon
from pictorank.open_play import VocabularyIndex
from pictorank.puzzles import load_puzzles
from pictorank.query import Query
from pictorank.ranker import make_ranker

COLUMNS = ["hits@1", "hits@10", "mrr"]
WEIGHTS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]
EVERYDAY = [
    (["animal", "stripes", "horse"], "zebra"), (["water", "frozen"], "ice"), (["sun", "flower"], "sunflower"),
    (["building", "books"], "library"), (["person", "fire", "water hose"], "firefighter"),
    (["time", "wrist"], "watch"), (["sky", "water", "falling"], "rain"), (["cold", "white", "falling"], "snow"),
]


def first_match(ranking: list[str], answer: str) -> int | None:
    return next((i for i, word in enumerate(ranking) if matches(word, answer)), None)


def lexicon_only(index: VocabularyIndex) -> VocabularyIndex:
    """The service's index less the data's words: only the English lexicon's entries."""
    table = set(default_lexicon().words) if index.source == "wordnet" else set(index.zipf or {})
    rows = [i for i, word in enumerate(index.words) if word in table]
    vectors = np.stack([index.index.reconstruct(i) for i in rows])
    words = [index.words[i] for i in rows]
    assert index.zipf is not None and index.encoder is not None
    zipf = {w: index.zipf[w] for w in words}
    flat = faiss.IndexFlatIP(vectors.shape[1])  # the vectors as stored: with their glosses', when searched so
    flat.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return VocabularyIndex(words, flat, index.encoder, zipf, index.source, index.glosses, index.gloss_encoder,
                           index.spellings)


def scored(rankers: dict, queries: list[Query]) -> dict[str, list[tuple[list[str], list[float]]]]:
    """Each ranker's (options, scores) for each query, best first."""
    return {name: [(r.options, r.scores) for r in ranker.rank(queries)] for name, ranker in rankers.items()}


def ranks_with(rankings, answers, zipf, weight: float) -> list[int | None]:
    return [first_match(with_prior(o, s, zipf, weight)[0], a) for (o, s), a in zip(rankings, answers)]


def choose_weight(rankings, answers, zipf, folds: int = 5) -> tuple[float, dict[str, float], list[float]]:
    """CV over puzzles grouped by answer: per fold the weight with the best MRR on the others."""
    fold_of = answer_folds([guess_key(a) for a in answers], folds, seed=13)
    rr = {w: np.array([1 / (r + 1) if r is not None else 0.0 for r in ranks_with(rankings, answers, zipf, w)])
          for w in WEIGHTS}
    held_out, chosen = [], []
    for fold in range(folds):
        inside = np.array([fold_of[i] != fold for i in range(len(answers))])
        best = max(WEIGHTS, key=lambda w: rr[w][inside].mean())
        chosen.append(best)
        held_out.extend(rr[best][~inside].tolist())
    overall = max(WEIGHTS, key=lambda w: rr[w].mean())
    return overall, {str(w): float(rr[w].mean()) for w in WEIGHTS}, chosen + [float(np.mean(held_out))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="model directory that stores its lexicon")
    parser.add_argument("--candidates", type=int, default=100, help="words taken from the index (service default 100)")
    parser.add_argument("--split", default="val")
    parser.add_argument("--prior", type=float, default=None, help="the prior's weight (default: the service's)")
    parser.add_argument("--choose-prior", action="store_true", help="choose the prior's weight by CV on --split")
    parser.add_argument("--limit", type=int, default=None, help="only the first N puzzles of the split")
    parser.add_argument("--no-everyday", action="store_true", help="skip the eight everyday clues")
    parser.add_argument("--ranks-out", type=Path, default=None,
                        help="write each puzzle's answer, and its place in open play's ranking, as JSON "
                             "(bench/open_vocab_paired.py compares two such files)")
    args = parser.parse_args()

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    settings = Settings(model_dir=args.model, open_vocab_candidates=args.candidates)
    try:
        started = time.perf_counter()
        served = build_service(settings)
        build_seconds = time.perf_counter() - started
        today = build_service(settings.model_copy(update={"open_vocab_lexicon": "none"}), encoders=served.encoders,
                              ranker=served.ranker)
    except PictorankError as exc:
        raise SystemExit(f"open_vocab: {exc}") from None
    if served.index is None or served.index.zipf is None:
        raise SystemExit(f"open_vocab: {args.model} stores no lexicon; run `pictorank lexicon --model {args.model}`")
    weight = served.prior_weight if args.prior is None else args.prior
    index = lexicon_only(served.index)
    lexicon_keys = {guess_key(w) for w in index.words}
    puzzles = load_puzzles(settings.data_dir / f"{args.split}.csv", served.vocab)[: args.limit]
    kept = [p for p in puzzles if without_qualifier(p.answer).casefold() in lexicon_keys]
    print(f"## Open vocabulary on {args.split}: {len(kept)} of {len(puzzles)} puzzles ({len(kept) / len(puzzles):.1%}) "
          f"have their answer in the lexicon of {len(index.words):,} words ({index.source}); model {served.model_name}; "
          f"service built in {build_seconds:.1f} s\n")

    served.index = index
    hints = [tuple(served.describe(p.hints)) for p in kept]
    answers = [p.answer for p in kept]
    started = time.perf_counter()
    candidates = served.candidates(hints)
    ceiling = np.mean([any(matches(c, a) for c in cs) for cs, a in zip(candidates, answers)])
    queries = [Query(h, tuple(c)) for h, c in zip(hints, candidates)]
    encoder = served.encoders.base
    rankers = {"seed": make_ranker("seed", encoder), "cosine": make_ranker("cosine", encoder),
               f"learned ({served.ranker.method})": served.ranker}
    if served.open_ranker is not None:  # it reads the frequencies itself: no prior added
        rankers["open play's ranker (as served)"] = served.open_ranker
    rankings = scored(rankers, queries)
    rank_seconds = time.perf_counter() - started
    zipf = index.zipf or {}

    if args.choose_prior:
        print("| ranker | weight chosen on all | MRR by weight | weights chosen per fold | held-out MRR |\n|---|---|---|---|---|")
        for name, ranked in rankings.items():
            overall, by_weight, folds = choose_weight(ranked, answers, zipf)
            print(f"| {name} | {overall} | {', '.join(f'{w}: {m:.3f}' for w, m in by_weight.items())} | "
                  f"{folds[:-1]} | {folds[-1]:.3f} |")
        print()

    print(f"| ranker (prior weight {weight}, none for open play's) | {' | '.join(COLUMNS)} | retrieval ceiling |")
    print(f"|---|{'---|' * (len(COLUMNS) + 1)}")
    for name, ranked in rankings.items():
        metrics = summarise(ranks_with(ranked, answers, zipf, 0.0 if rankers[name] is served.open_ranker else weight))
        print(f"| {name} | " + " | ".join(f"{metrics[c]:.3f}" for c in COLUMNS) + f" | {ceiling:.3f} |")
    if args.ranks_out is not None and served.open_ranker is not None:
        places = ranks_with(rankings["open play's ranker (as served)"], answers, zipf, 0.0)
        retrieved = [any(matches(c, a) for c in cs) for cs, a in zip(candidates, answers)]
        args.ranks_out.write_text(json.dumps([{"id": f"{p.datapoint_id}/{p.subtask_id}", "answer": a, "place": r, "retrieved": f}
                                              for p, a, r, f in zip(kept, answers, places, retrieved)]))
    old = [r.options for r in today.rank([Clue(h) for h in hints])]
    old_ranks = [first_match(o, a) for o, a in zip(old, answers)]
    old_ceiling = np.mean([any(matches(c, a) for c in cs) for cs, a in zip(today.candidates(hints), answers)])
    metrics = summarise(old_ranks)
    print(f"| today: learned over the data's {len(today.index.words):,} words | "
          + " | ".join(f"{metrics[c]:.3f}" for c in COLUMNS) + f" | {old_ceiling:.3f} |")
    print(f"\n{args.candidates} candidates a clue; retrieving and ranking {len(kept)} clues with {len(rankers)} rankers took "
          f"{rank_seconds:.1f} s")

    if not args.no_everyday:
        served.index = build_service(settings, encoders=served.encoders, ranker=served.ranker).index
        served.prior_weight = weight
        print("\n| everyday clue | answer | its place | first three |\n|---|---|---|---|")
        found = 0
        for clue_hints, answer in EVERYDAY:
            [ranking] = served.rank([Clue(tuple(clue_hints))])
            place = first_match(ranking.options[:10], answer)
            found += place is not None
            print(f"| {' + '.join(clue_hints)} | {answer} | {'-' if place is None else place + 1} | "
                  f"{', '.join(ranking.options[:3])} |")
        print(f"\n{found} of {len(EVERYDAY)} everyday clues have their answer in the top 10")


if __name__ == "__main__":
    main()
