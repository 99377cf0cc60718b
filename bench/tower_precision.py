"""The clue-giver's main-idea tower served in fp32 or in int8: does quantising it change what it
says? (The fp32 export is 87 MB of a serving image capped at 800 MB; the int8 one a quarter.)

On train alone, folds by answer: a tower is fitted on the other folds' words (the shipped recipe:
pictorank.suggest.model's epochs and rate) and exported both ways; for each held-out word, is the
main idea it ranks first the word's human one, and do the two exports agree? Prints a table.

    .venv/bin/python bench/tower_precision.py [--model models/default] [--folds 0 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
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
from pictorank.suggest.tower import fit_tower, main_idea_probabilities

DATA = Path(__file__).resolve().parents[1] / "data" / "bliss"
N_FOLDS, SEED = 5, 13


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/default", help="whose base encoder embeds the descriptions")
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1], help=f"held-out folds of {N_FOLDS}")
    args = parser.parse_args()
    vocab = load_hints(DATA / "hint_descriptions.csv")
    descriptions = list(vocab.descriptions.values())
    index = {d: i for i, d in enumerate(descriptions)}
    clues = {(p.answer, vocab.describe(p.hints)[0]) for p in load_puzzles(DATA / "train.csv", vocab)}
    words = sorted(clues)
    answers = [w for w, _ in words]
    folds = answer_folds(answers, N_FOLDS, SEED)
    base = serving_encoders(Path(args.model), CommonSettings()).base
    vectors = base.encode(descriptions)
    params = ClueModel(base).get_params()
    rows: dict[str, list[np.ndarray]] = {"fp32": [], "int8": [], "agree": [], "answer": []}
    for k in args.folds:
        inside = [i for i, f in enumerate(folds) if f != k]
        held = [i for i, f in enumerate(folds) if f == k]
        started = time.perf_counter()
        tower = fit_tower([answers[i] for i in inside], [index[words[i][1]] for i in inside], vectors,
                          params["tower_epochs"], params["tower_learning_rate"], params["seed"])
        firsts = {}
        with tempfile.TemporaryDirectory() as scratch:
            for precision in ("fp32", "int8"):
                export = OnnxSentenceEncoder(export_onnx(tower, Path(scratch) / precision, precision))
                firsts[precision] = np.array([int(np.argmax(main_idea_probabilities(export, answers[i], vectors)))
                                              for i in held])
        human = np.array([index[words[i][1]] for i in held])
        rows["fp32"].append(firsts["fp32"] == human)
        rows["int8"].append(firsts["int8"] == human)
        rows["agree"].append(firsts["fp32"] == firsts["int8"])
        rows["answer"].append(np.array([answers[i] for i in held]))
        print(f"fold {k}: {len(inside)} clues fitted, {len(held)} held out, {time.perf_counter() - started:.0f} s")
    fp32, int8 = np.concatenate(rows["fp32"]), np.concatenate(rows["int8"])
    groups = np.concatenate(rows["answer"])
    diff = int8.astype(float) - fp32.astype(float)
    print(f"\n{'tower export':<14}{'held-out clues':>16}{'main idea first':>17}{'± SE':>8}")
    for name, hits in (("fp32", fp32), ("int8", int8)):
        print(f"{name:<14}{len(hits):>16}{hits.mean():>17.3f}{clustered_se(hits.astype(float), groups):>8.3f}")
    print(f"\nint8 - fp32: {diff.mean():+.3f} ± {clustered_se(diff, groups):.3f} (clustered by answer); "
          f"same first main idea for {np.concatenate(rows['agree']).mean():.3f} of the held-out clues")


if __name__ == "__main__":
    main()
