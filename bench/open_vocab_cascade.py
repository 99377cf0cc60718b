"""Could a cheap first stage hand open play's ranker more answers? Retrieval ceilings on train folds only.

    .venv/bin/python bench/open_vocab_cascade.py [CACHE_DIR] [--rank]

It reads models/default; CACHE_DIR is the fine-tuning cache that model was trained with.

Open play's ranker sees the 100 nearest playable lexicon words; the answer is among them for 44%
of train clues out of fold, 58% among 300. Scoring 300 with the ranker's columns would triple a
request's cost. This bench asks whether a first stage over columns that cost nothing per request
(the fine-tuned cosine, its gap to the first and its rank, the base cosine and its z-score within
the clue, both from stored vectors, the word's Zipf frequency and length) can choose 100 of 300
that hold the answer more often. Each clue is retrieved in the space of the fold encoder that never
saw its answer (as pictorank.train.open_play does), and its 100 are chosen by a LambdaMART fitted
on the other folds' clues. Prints the plain ceilings at 100 to 300 and the first stage's ceiling
at 100 with its paired difference (standard error clustered by answer); with --rank, open play's
ranker fitted and scored out of fold over each way's 100 (a few minutes more). Not built into the
service: measured for the next round. """
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
import numpy as np
from open_vocab_retrieval import clustered_se
from pictorank.api.settings import Settings
from pictorank.encoders import Encoder
from pictorank.lexicon import guess_key, matches, playable, without_qualifier
from pictorank.lexicon import store as lexicon_store
from pictorank.lexicon.words import default_lexicon
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import joined_text
from pictorank.train.config import TrainConfig
from pictorank.train.oof import answer_folds, as_served, finetuned_encoder
from pictorank.train.open_play import nearest
ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    import lightgbm as lgb  # lazy: only this bench's first stage needs it

    model = ROOT / "models" / "default"
    config = TrainConfig.from_dict(json.loads((model / "metadata.json").read_text())["config"])
    s = Settings()
    vocab = load_hints(s.data_dir / "hint_descriptions.csv")
    train = to_queries(load_puzzles(s.data_dir / "train.csv", vocab), vocab)
    lex = default_lexicon()
    words = lex.words
    zipf = lex.frequencies()
    index = {w: i for i, w in enumerate(words)}
    keys = {guess_key(w) for w in words}
    enc = Encoder(cache_dir=Path(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "--rank" else ROOT / ".cache" / "embeddings")  # training's cache
    base = as_served(enc, config)
    bvec = lexicon_store.embed(lex, {"b": base}, "b").search_vectors()
    folds = answer_folds(train, config.folds, config.seed)
    N = 300
    rows = []  # (fold, answer, cands, X, query)
    fts, insides = {}, {}
    for k in range(3):
        t = time.perf_counter()
        inside = [q for q, f in zip(train, folds) if f != k]
        held = [q for q, f in zip(train, folds) if f == k and without_qualifier(q.answer).casefold() in keys]
        ft = finetuned_encoder(inside, config.oof_epochs, config, enc.cache_dir, lambda m: None)[1]
        fts[k], insides[k] = ft, inside
        fvec = lexicon_store.embed(lex, {"f": ft}, "f").search_vectors()
        qf = ft.encode([joined_text(q.hints) for q in held])
        qb = base.encode([joined_text(q.hints) for q in held])
        found = nearest(fvec, qf, words, N + 20 + N // 2)
        for q, f, a, b in zip(held, found, qf, qb):
            c = playable(q.hints, f)[:N]
            ids = np.array([index[w] for w in c])
            fc = fvec[ids] @ a
            bc = bvec[ids] @ b
            z = np.array([zipf[w] for w in c])
            X = np.column_stack([fc, fc - fc[0], np.arange(len(c)), bc, (bc - bc.mean()) / (bc.std() + 1e-9), z,
                                 [len(w.replace("-", " ").split()) for w in c]])
            rows.append((k, q.answer, c, X, q))
        print(f"fold {k}: {time.perf_counter() - t:.0f} s", flush=True)
    fold = np.array([r[0] for r in rows])
    groups = [guess_key(r[1]) for r in rows]
    labels = [np.array([matches(w, r[1]) for w in r[2]], float) for r in rows]
    for n in (100, 150, 200, 300):
        print(f"plain ceiling@{n}: {np.mean([l[:n].any() for l in labels]):.3f}")
    plain = np.array([l[:100].any() for l in labels], float)
    kept = np.zeros(len(rows))
    selected: list[list[str]] = [[] for _ in rows]
    for k in range(3):
        tr = [i for i in range(len(rows)) if fold[i] != k and labels[i].any()]
        X = np.vstack([rows[i][3] for i in tr])
        y = np.concatenate([labels[i] for i in tr])
        m = lgb.LGBMRanker(objective="lambdarank", n_estimators=200, num_leaves=7, learning_rate=0.05, min_child_samples=50,
                           verbose=-1, lambdarank_truncation_level=100).fit(X, y, group=[len(labels[i]) for i in tr])
        for i in np.flatnonzero(fold == k):
            sc = m.predict(rows[i][3])
            top = np.argsort(-sc, kind="stable")[:100]
            kept[i] = labels[i][top].any()
            selected[i] = [rows[i][2][j] for j in sorted(top)]  # in retrieval order, as served
    d = kept - plain
    print(f"cascade ceiling@100: {kept.mean():.3f} vs plain {plain.mean():.3f}: {d.mean():+.3f} ± {clustered_se(d, groups):.3f}")
    if "--rank" in sys.argv:
        rank_both(model, enc, base, config, zipf, rows, fold, fts, insides,
                  {"plain 100 nearest": [r[2][:100] for r in rows], "first stage's 100 of 300": selected}, groups)


def rank_both(model, enc, base, config, zipf, rows, fold, fts, insides, lists, groups) -> None:
    """Open play's ranker (its columns, fitted on the other folds as bench/open_vocab_ranker.py
    does) over each way's 100 candidates: Hits@1 / Hits@10 / MRR and the paired differences."""
    import pandas as pd
    from open_vocab_ranker import held_out, metrics, ranks_of
    from pictorank.features import FeatureExtractor
    from pictorank.features.word import WORD_COLUMNS, word_columns
    from pictorank.query import Query
    from pictorank.ranker import load_ranker
    from pictorank.train.open_play import OpenPlayTables

    learned = load_ranker(model, enc)
    columns = [*learned.feature_names, *WORD_COLUMNS]
    results = {}
    for name, chosen in lists.items():
        started = time.perf_counter()
        parts, queries = [], []
        for k in range(3):
            qs = [Query(rows[i][4].hints, tuple(chosen[i]), rows[i][1]) for i in np.flatnonzero(fold == k)]
            table = FeatureExtractor(base, fts[k]).fit(insides[k]).transform(qs)
            extra = [word_columns(q.options, zipf) for q in qs]
            for column in WORD_COLUMNS:
                table[column] = np.concatenate([e[column] for e in extra]).astype(np.float32)
            parts.append(table)
            queries += qs
        y = np.array([float(matches(o, q.answer)) for q in queries for o in q.options])
        found = np.array([any(matches(o, q.answer) for o in q.options) for q in queries])
        tables = OpenPlayTables(pd.concat(parts, ignore_index=True), y, np.array([len(q.options) for q in queries]),
                                fold.copy(), found, queries)
        scores, setting = held_out(tables, columns, config)
        results[name] = metrics(ranks_of(scores, tables, zipf, 0.0))
        print(f"{name}: ceiling {found.mean():.3f}, {setting}, {time.perf_counter() - started:.0f} s", flush=True)
    print("| candidates | Hits@1 | Hits@10 | MRR |\n|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['hits@1'].mean():.3f} | {r['hits@10'].mean():.3f} | {r['mrr'].mean():.3f} |")
    a, b = results.values()
    for m in ("hits@1", "hits@10", "mrr"):
        d = b[m] - a[m]
        print(f"{m} difference: {d.mean():+.3f} ± {clustered_se(d, groups):.3f}")


if __name__ == "__main__":
    main()
