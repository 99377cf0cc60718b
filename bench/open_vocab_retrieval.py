"""How open-vocabulary mode should retrieve its candidates, measured on train puzzles only.

    .venv/bin/python bench/open_vocab_retrieval.py --model DIR [--folds] [--limit N]
                                                   [--derivations FILE] [--rank VARIANT ...] [--out FILE.json]

Every variant retrieves from the same lexicon-only index as bench/open_vocab.py (the data's
words left out), drops echoes of the hints and repeated forms as the service does
(pictorank.lexicon.playable), and is scored on the same puzzles: those whose answer is in the
lexicon. The variants: the query (joined hints, the ranker's position-weighted pooling of hint
vectors, their mean, joined + pooled, a union of joined and per-hint searches), the space (base,
fine-tuned, blends of the two), CSLS (a word's hubness subtracted from its cosine) and the echo
rule (with WordNet's derivational links, `--derivations`, or as it was before WordNet's
irregular forms). First the retrieval ceiling (answer among the first N candidates) of every
variant at N = 100, 150 and 200, cheap; then, for the variants named by --rank (name@N), the
learned model's Hits@1 / Hits@10 / MRR over its candidates with the service's frequency prior,
each variant ranked by the same code. Every figure is printed with its paired difference from
the service's recipe before this bench (joined hints, fine-tuned space, 100 candidates, old
echo rule) and that difference's standard error, clustered by answer (the puzzles of one
answer are not independent).

The model's fine-tuned encoder learned from train, so its train figures are in-sample and
favour the joined text it was trained on. `--folds` retrieves instead in the spaces of fold
encoders fine-tuned as training fine-tunes its out-of-fold encoders (its folds by answer, one
epoch), each puzzle in the space of the encoder that never saw its answer (ceilings only). Fold weights,
their lexicon vectors and the base space's lexicon vectors are kept under /tmp/pictorank-h34-*
for the next run: delete them when the model or the lexicon changes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import numpy as np

from open_vocab import first_match, lexicon_only  # bench/ is the script's folder, on sys.path
from pictorank.api.service import build_service
from pictorank.api.settings import Settings
from pictorank.features.pooling import learned_weights
from pictorank.lexicon import guess_key, matches, playable, with_prior, without_qualifier
from pictorank.lexicon import echo
from pictorank.lexicon import store as lexicon_store
from pictorank.lexicon.echo import read_forms
from pictorank.puzzles import load_puzzles, to_queries
from pictorank.query import Query, joined_text
from pictorank.train.open_play import nearest as top_words  # exact inner-product search, as training's

SIZES = (100, 150, 200)
CSLS_WEIGHTS = (0.25, 0.5, 0.75)  # 0.5 is CSLS proper: 2 cos - hub, halved
BASELINE = "joined, old echo"  # the service's recipe before this bench


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=-1, keepdims=True), 1e-12)


def interleave(lists: Sequence[Sequence[str]]) -> list[str]:
    """Round-robin union of ranked lists, first occurrence kept."""
    seen: dict[str, None] = {}
    for column in range(max(len(x) for x in lists)):
        for ranked in lists:
            if column < len(ranked):
                seen.setdefault(ranked[column], None)
    return list(seen)


def retrieve(ft_encode: Callable[[list[str]], np.ndarray], ft_vectors: np.ndarray,
             base_encode: Callable[[list[str]], np.ndarray], base_vectors: np.ndarray,
             hints: Sequence[tuple[str, ...]], weights: dict[int, list[float]], words: Sequence[str],
             hub: np.ndarray | None = None) -> dict[str, list[list[str]]]:
    """Every variant's nearest words for each clue (deep enough for the largest size after echoes go).
    `hub`: each word's hubness in the fine-tuned space (`hubness`), for the CSLS variants."""
    joined_ft = ft_encode([joined_text(h) for h in hints])
    joined_base = base_encode([joined_text(h) for h in hints])
    hint_ft = [ft_encode(list(h)) for h in hints]
    pooled = unit(np.stack([learned_weights(weights, len(h)) @ v for h, v in zip(hints, hint_ft)]))
    means = unit(np.stack([v.mean(axis=0) for v in hint_ft]))
    deep = max(SIZES) * 2 + 40
    retrieved: dict[str, list[list[str]]] = {
        "joined": top_words(ft_vectors, joined_ft, words, deep),
        "pooled": top_words(ft_vectors, pooled, words, deep),
        "mean": top_words(ft_vectors, means, words, deep),
        "joined+pooled": top_words(ft_vectors, unit(joined_ft + pooled), words, deep),
        "base joined": top_words(base_vectors, joined_base, words, deep),
    }
    per_hint = [top_words(ft_vectors, v, words, deep) for v in hint_ft]
    retrieved["union"] = [interleave([j[: len(j) // 2], *ph]) for j, ph in zip(retrieved["joined"], per_hint)]
    for a in (0.25, 0.5):
        both = np.hstack([np.sqrt(a) * base_vectors, np.sqrt(1 - a) * ft_vectors])
        queries = np.hstack([np.sqrt(a) * joined_base, np.sqrt(1 - a) * joined_ft])
        retrieved[f"blend{a}"] = top_words(both, queries, words, deep)
    if hub is not None:
        for weight in CSLS_WEIGHTS:
            # cos(q, w) - weight * hub(w) as one inner product: the query gets a last coordinate of 1
            shifted = np.hstack([ft_vectors, -weight * hub[:, None]]).astype(np.float32)
            queries = np.hstack([joined_ft, np.ones((len(joined_ft), 1), np.float32)])
            retrieved[f"csls{weight}"] = top_words(shifted, queries, words, deep)
    return retrieved


def hubness(vectors: np.ndarray, words: Sequence[str], clue_vectors: np.ndarray, clue_answers: Sequence[str],
            k: int = 10) -> np.ndarray:
    """Each word's mean cosine to its `k` nearest training clues, its own clues left out (as the
    ranker's hub_* columns compute it: pictorank.features.hubness)."""
    rows_of: dict[str, list[int]] = defaultdict(list)
    for i, answer in enumerate(clue_answers):
        rows_of[guess_key(answer)].append(i)
    hub = np.empty(len(words), np.float32)
    for start in range(0, len(words), 4096):
        sims = vectors[start : start + 4096] @ clue_vectors.T
        for j, word in enumerate(words[start : start + 4096]):
            sims[j, rows_of.get(guess_key(word), [])] = -1.0
        hub[start : start + 4096] = np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)
    return hub


def out_of_fold(puzzles, vocab, hints, words, base_vectors, base, weights, settings) -> dict[str, list[list[str]]]:
    """`retrieve` with each puzzle's fine-tuned space made by an encoder that never saw its fold:
    training's own folds (answer_folds, its seed) and its fold encoders' recipe (oof_epochs),
    fine-tuned here on the whole train file's other folds, run in PyTorch (fp32)."""
    from pictorank.encoders.memo import load_base_model, load_model_dir
    from pictorank.train.config import TrainConfig
    from pictorank.train.finetune import finetune
    from pictorank.train.oof import answer_folds

    config = TrainConfig()
    everything = to_queries(load_puzzles(settings.data_dir / "train.csv", vocab), vocab)
    folds = answer_folds(everything, config.folds, config.seed)
    fold_of_answer = {q.answer: int(f) for q, f in zip(everything, folds)}
    retrieved: dict[str, list[list[str]]] = {}
    rows_by_fold = defaultdict(list)
    for i, p in enumerate(puzzles):
        rows_by_fold[fold_of_answer[p.answer]].append(i)
    for k in range(config.folds):
        stored = Path(f"/tmp/pictorank-h34-fold{k}")
        if (stored / "config.json").is_file():
            model = load_model_dir(stored)
        else:
            started = time.perf_counter()
            model = finetune(load_base_model(), [q for q, f in zip(everything, folds) if f != k],
                             config.finetune_params(config.oof_epochs))
            model.save(str(stored))
            print(f"fold {k}: fine-tuned in {time.perf_counter() - started:.0f} s", file=sys.stderr)

        def encode(texts: list[str]) -> np.ndarray:
            return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=256)

        vectors_file = stored / "lexicon.npy"
        if vectors_file.exists():
            ft_vectors = np.load(vectors_file)
        else:
            ft_vectors = np.concatenate([encode(list(words[i : i + 4096])) for i in range(0, len(words), 4096)])
            np.save(vectors_file, ft_vectors)
        rows = rows_by_fold[k]
        inside = [q for q, f in zip(everything, folds) if f != k]
        hub = hubness(ft_vectors, words, encode([joined_text(q.hints) for q in inside]), [q.answer for q in inside])
        found = retrieve(encode, ft_vectors, base.encode, base_vectors, [hints[i] for i in rows], weights, words, hub)
        for name, lists in found.items():
            retrieved.setdefault(name, [[] for _ in puzzles])
            for i, ranked in zip(rows, lists):
                retrieved[name][i] = ranked
    return retrieved


@contextmanager
def without_irregular_inflections() -> Iterator[None]:
    """The echo rule as it was before WordNet's irregular forms (stems only), for the baseline."""
    saved = echo.irregular_inflections
    echo.irregular_inflections = lambda: {}
    try:
        yield
    finally:
        echo.irregular_inflections = saved


def clustered_se(values: np.ndarray, groups: Sequence[str]) -> float:
    """Standard error of the mean of `values` with the rows of one group as one cluster."""
    by_group: dict[str, float] = defaultdict(float)
    centred = values - values.mean()
    for value, group in zip(centred, groups):
        by_group[group] += value
    g, n = len(by_group), len(values)
    return float(np.sqrt(sum(s * s for s in by_group.values()) * g / max(g - 1, 1)) / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rank", nargs="*", default=[], help="variants (name@N) to rank with the learned model")
    parser.add_argument("--folds", action="store_true",
                        help="retrieve in fold encoders' spaces that never saw the puzzle (ceilings only)")
    parser.add_argument("--derivations", type=Path, default=None,
                        help="a table of derivational links (scripts/build_inflection_table.py): rank an echo rule with them")
    parser.add_argument("--out", type=Path, default=None, help="write per-puzzle results here (JSON)")
    args = parser.parse_args()
    if args.split not in ("train",):
        raise SystemExit("open_vocab_retrieval: choices are made on train; val is scored by bench/open_vocab.py")

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    settings = Settings(model_dir=args.model)
    served = build_service(settings)
    index = lexicon_only(served.index)
    words = index.words
    ft_vectors = np.stack([index.index.reconstruct(i) for i in range(len(words))])
    if index.gloss_encoder is not None:  # stored as [word | gloss]: this bench searches by word
        ft_vectors = ft_vectors[:, : ft_vectors.shape[1] // 2]
    keys = {guess_key(w) for w in words}
    puzzles = [p for p in load_puzzles(settings.data_dir / f"{args.split}.csv", served.vocab)[: args.limit]
               if without_qualifier(p.answer).casefold() in keys]
    hints = [tuple(served.describe(p.hints)) for p in puzzles]
    answers = [p.answer for p in puzzles]
    groups = [guess_key(a) for a in answers]
    print(f"## {len(puzzles)} {args.split} puzzles with their answer in the lexicon of {len(words):,} words\n")

    ft, base = served.encoders.finetuned, served.encoders.base
    weights = served.ranker.extractor.position_weights_
    started = time.perf_counter()
    base_store = Path("/tmp/pictorank-h34-base-lexicon.npy")
    if base_store.exists():
        base_vectors = np.load(base_store)
    else:
        from pictorank.lexicon import Lexicon
        base_vectors = lexicon_store.embed(Lexicon(tuple(words), np.zeros(len(words), np.float32), ""), base, "base").vectors
        np.save(base_store, base_vectors)
    print(f"base-space lexicon ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    if args.folds:
        retrieved = out_of_fold(puzzles, served.vocab, hints, words, base_vectors, base, weights, settings)
    else:
        train = to_queries(load_puzzles(settings.data_dir / "train.csv", served.vocab), served.vocab)
        hub = hubness(ft_vectors, words, ft.encode([joined_text(q.hints) for q in train]), [q.answer for q in train])
        retrieved = retrieve(ft.encode, ft_vectors, base.encode, base_vectors, hints, weights, words, hub)
    print(f"retrieval of every variant took {time.perf_counter() - started:.0f} s", file=sys.stderr)

    playable_lists = {name: [playable(h, found) for h, found in zip(hints, lists)] for name, lists in retrieved.items()}
    derivations = read_forms(args.derivations) if args.derivations is not None else None
    if derivations is not None:
        playable_lists["joined, derivations"] = [playable(h, found, derivations)
                                                 for h, found in zip(hints, retrieved["joined"])]
    with without_irregular_inflections():
        playable_lists[BASELINE] = [playable(h, found) for h, found in zip(hints, retrieved["joined"])]
    base_found = np.array([any(matches(c, a) for c in cs[:100]) for cs, a in zip(playable_lists[BASELINE], answers)], float)
    print("| variant | " + " | ".join(f"ceiling@{n}" for n in SIZES) + f" | @100 minus {BASELINE}@100 (± SE) |")
    print("|---|" + "---|" * (len(SIZES) + 1))
    ceilings = {}
    for name, lists in playable_lists.items():
        cells = []
        for n in SIZES:
            found = np.array([any(matches(c, a) for c in cs[:n]) for cs, a in zip(lists, answers)], float)
            ceilings[f"{name}@{n}"] = found
            cells.append(f"{found.mean():.3f}")
        diff = ceilings[f"{name}@100"] - base_found
        print(f"| {name} | " + " | ".join(cells) + f" | {diff.mean():+.3f} ± {clustered_se(diff, groups):.3f} |")

    results: dict[str, dict[str, list[float]]] = {}
    if args.rank and not args.folds:
        zipf = index.zipf or {}
        print("\n| variant | Hits@1 | Hits@10 | MRR | Hits@1 diff (± SE) | Hits@10 diff (± SE) | MRR diff (± SE) | s to rank |")
        print("|---|---|---|---|---|---|---|---|")
        for variant in [f"{BASELINE}@100", *[v for v in args.rank if v != f"{BASELINE}@100"]]:
            name, n = variant.split("@")
            queries = [Query(h, tuple(cs[: int(n)])) for h, cs in zip(hints, playable_lists[name])]
            started = time.perf_counter()
            rankings = served.ranker.rank(queries)
            seconds = time.perf_counter() - started
            ranks = [first_match(with_prior(r.options, r.scores, zipf, served.prior_weight)[0], a)
                     for r, a in zip(rankings, answers)]
            results[variant] = {
                "hits@1": [float(r is not None and r < 1) for r in ranks],
                "hits@10": [float(r is not None and r < 10) for r in ranks],
                "mrr": [1 / (r + 1) if r is not None else 0.0 for r in ranks],
            }
            cells, diffs = [], []
            for metric, values in results[variant].items():
                mine = np.array(values)
                cells.append(f"{mine.mean():.3f}")
                diff = mine - np.array(results[f"{BASELINE}@100"][metric])
                diffs.append(f"{diff.mean():+.3f} ± {clustered_se(diff, groups):.3f}")
            print(f"| {variant} | " + " | ".join(cells + diffs) + f" | {seconds:.0f} |", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps({"answers": answers, "ceilings": {k: v.tolist() for k, v in ceilings.items()},
                                        "ranked": results}))


if __name__ == "__main__":
    main()
