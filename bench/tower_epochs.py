"""The clue-giver's main-idea tower: how many epochs, on train folds.

The tower is the clue-giver's costliest part to fit (most of the clue-giver stage of `pictorank
train`). Its epochs were chosen on train alone at another learning rate (docs/experiments/
clue-giver.md); this bench asks again at the shipped rate. Folds by answer: a tower is fitted
on the other folds' words for each number of epochs (the shipped rate and seed, on `--threads`
PyTorch threads: the tower's own count by default) and saved as the clue model saves it (its
int8 export); for each held-out word, is the main idea it ranks first (over every description)
the word's human one? Prints each setting's share, its minus the first setting's with the
standard error clustered by answer, and the seconds a fit took. Folds run side by side (`--jobs` processes). Val is not read.

    .venv/bin/python bench/tower_epochs.py [--epochs 3 5] [--folds 0 1 2 3 4] [--jobs 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from pictorank.encoders import OnnxSentenceEncoder
from pictorank.encoders.onnx import export_onnx
from pictorank.evaluation.folds import answer_folds
from pictorank.evaluation.significance import clustered_se
from pictorank.puzzles import load_hints, load_puzzles
from pictorank.ranker.registry import serving_encoders
from pictorank.settings import CommonSettings
from pictorank.suggest.model import ClueModel
from pictorank.suggest.tower import SAVED_PRECISION, THREADS, fit_tower, main_idea_probabilities

DATA = Path(__file__).resolve().parents[1] / "data" / "bliss"
N_FOLDS, SEED = 5, 13


def held_out_hits(answers: list[str], ideas: list[int], inside: list[int], held: list[int], vectors: np.ndarray,
                  epochs: float, rate: float, seed: int, threads: int) -> tuple[np.ndarray, float]:
    """Fit a tower on the `inside` words, save it as served; whether it puts each `held` word's
    human main idea first, and the fit's seconds (fit and export)."""
    started = time.perf_counter()
    tower = fit_tower([answers[i] for i in inside], [ideas[i] for i in inside], vectors, epochs, rate, seed, threads)
    with tempfile.TemporaryDirectory() as scratch:
        export = OnnxSentenceEncoder(export_onnx(tower, Path(scratch) / "tower", SAVED_PRECISION))
        seconds = time.perf_counter() - started
        firsts = np.array([int(np.argmax(main_idea_probabilities(export, answers[i], vectors))) for i in held])
    return firsts == np.array([ideas[i] for i in held]), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/default", help="whose base encoder embeds the descriptions")
    parser.add_argument("--epochs", type=float, nargs="+", default=[3.0, 5.0])
    parser.add_argument("--folds", type=int, nargs="+", default=list(range(N_FOLDS)), help=f"held-out folds of {N_FOLDS}")
    parser.add_argument("--threads", type=int, default=THREADS, help="PyTorch's threads in each fit")
    parser.add_argument("--jobs", type=int, default=2, help="fits side by side, each in a process of its own")
    args = parser.parse_args()
    vocab = load_hints(DATA / "hint_descriptions.csv")
    descriptions = list(vocab.descriptions.values())
    index = {d: i for i, d in enumerate(descriptions)}
    words = sorted({(p.answer, vocab.describe(p.hints)[0]) for p in load_puzzles(DATA / "train.csv", vocab)})
    answers, ideas = [w for w, _ in words], [index[d] for _, d in words]
    folds = answer_folds(answers, N_FOLDS, SEED)
    base = serving_encoders(Path(args.model), CommonSettings()).base
    vectors = base.encode(descriptions)
    params = ClueModel(base).get_params()
    rate, seed = params["tower_learning_rate"], params["seed"]
    print(f"shipped: {params['tower_epochs']:g} epochs at {rate:g}, seed {seed}; {len(words)} train (word, main idea) "
          f"pairs, folds {args.folds} of {N_FOLDS}, {args.threads} PyTorch thread(s) a fit, {args.jobs} at once")
    jobs = {}
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        for k in args.folds:
            inside = [i for i, f in enumerate(folds) if f != k]
            held = [i for i, f in enumerate(folds) if f == k]
            for epochs in args.epochs:
                jobs[k, epochs] = (held, pool.submit(held_out_hits, answers, ideas, inside, held, vectors, epochs,
                                                     rate, seed, args.threads))
        results = {key: (held, future.result()) for key, (held, future) in jobs.items()}
    groups = np.concatenate([np.array([answers[i] for i in results[k, args.epochs[0]][0]]) for k in args.folds])
    hits = {e: np.concatenate([results[k, e][1][0] for k in args.folds]).astype(float) for e in args.epochs}
    seconds = {e: np.mean([results[k, e][1][1] for k in args.folds]) for e in args.epochs}
    first = args.epochs[0]
    print(f"\n{'epochs':>6}{'held-out words':>16}{'main idea first':>17}{'± SE':>8}{'minus ' + format(first, 'g'):>12}"
          f"{'± SE':>8}{'s a fit':>9}")
    for e in args.epochs:
        diff = hits[e] - hits[first]
        print(f"{e:>6g}{len(hits[e]):>16}{hits[e].mean():>17.3f}{clustered_se(hits[e], groups):>8.3f}"
              f"{diff.mean():>+12.3f}{clustered_se(diff, groups):>8.3f}{seconds[e]:>9.0f}")
    for k in args.folds:
        print(f"fold {k}: " + ", ".join(f"{e:g} epochs {results[k, e][1][0].mean():.3f}" for e in args.epochs))


if __name__ == "__main__":
    main()
