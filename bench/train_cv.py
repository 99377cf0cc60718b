"""The training protocol's effect: the shipped recipe's train-CV estimate beside val's held-out result.

    .venv/bin/python bench/train_cv.py --model models/default        # read a trained model's figures (seconds)
    .venv/bin/python bench/train_cv.py --out /tmp/m                   # train the shipped recipe first (~10-15 min)
    .venv/bin/python bench/train_cv.py --out /tmp/m --train-rows 600 --no-finetune   # a quick slice

`pictorank train` makes every recipe choice on train folds grouped by answer (the LightGBM
setting, its number of trees; pictorank.train.lambdamart) and estimates the recipe by the same
CV: each train clue ranked by boosters that never saw its answer (pictorank.train.estimate). Val
is scored once, after training, and read by nothing. This bench prints the two side by side, so a
reader sees how far the estimate a variant is judged by lies from puzzles no choice saw. It also
prints the grid as the CV saw it (held-out MRR of each setting, the folds' stopping points).

Why the two differ even without any tuning on val: val's answers are words train never has, while
a CV fold holds out answers but keeps the vocabulary of descriptions and most option words; and
the final model learns from all of train, a fold's boosters from two thirds of it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from pictorank.settings import use_offline_environment
from pictorank.encoders import Encoder
from pictorank.errors import PictorankError
from pictorank.train import TrainConfig, train_command
from pictorank.train.estimate import ESTIMATE_METRICS

use_offline_environment()

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"


def comparison_table(train_cv: dict[str, Any], report: dict[str, Any] | None) -> str:
    """Markdown: the train-CV estimate (mean ± standard error over folds), val, and val minus it."""
    names = {"hits@1": "Hits@1", "score": "score", "mrr": "MRR"}
    lines = ["| set | puzzles | " + " | ".join(names[m] for m in ESTIMATE_METRICS) + " |",
             "|---|---|" + "---|" * len(ESTIMATE_METRICS)]
    lines.append(f"| train-CV ({train_cv['folds']} folds by answer) | {train_cv['rows']} | "
                 + " | ".join(f"{train_cv[m]:.4f} ± {train_cv[m + '_se']:.4f}" for m in ESTIMATE_METRICS) + " |")
    if report is not None:
        overall = report["overall"]
        lines.append(f"| val (held out, scored once) | {report['rows']} | "
                     + " | ".join(f"{overall[m]:.4f}" for m in ESTIMATE_METRICS) + " |")
        lines.append("| val - train-CV | | "
                     + " | ".join(f"{overall[m] - train_cv[m]:+.4f}" for m in ESTIMATE_METRICS) + " |")
    return "\n".join(lines)


def grid_table(cv: Sequence[dict[str, Any]], chosen: dict[str, Any], trees: int) -> str:
    """Each grid setting's held-out MRR and stopping points; the chosen one marked with its trees."""
    lines = ["| setting | CV MRR | folds' early stopping | chosen |", "|---|---|---|---|"]
    for row in cv:
        mark = f"yes: {trees} trees (median)" if row["params"] == chosen else ""
        lines.append(f"| {json.dumps(row['params'])} | {row['cv_mrr']:.4f} ± {row['cv_se']:.4f} | "
                     f"{', '.join(map(str, row['trees']))} | {mark} |")
    return "\n".join(lines)


def _sliced(path: Path, rows: int | None, into: Path) -> Path:
    """`path`, or its first `rows` puzzles written to `into` (a quick run on a slice)."""
    if rows is None:
        return path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    into.write_text("".join(lines[: rows + 1]), encoding="utf-8")
    return into


def _trained(args: argparse.Namespace) -> dict[str, Any]:
    """Train the shipped recipe into `args.out` (or read the model `args.model`): its metadata."""
    if args.model is not None:
        return json.loads((Path(args.model) / "metadata.json").read_text())
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        train = _sliced(DATA / "train.csv", args.train_rows, Path(tmp) / "train.csv")
        config = TrainConfig(finetune=not args.no_finetune)
        return train_command(train, DATA / "val.csv", DATA / "hint_descriptions.csv", args.out, config,
                             Encoder(cache_dir=args.cache_dir), log, force=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a model folder made by `pictorank train`: print its stored figures")
    source.add_argument("--out", help="train the shipped recipe on Bliss train into this folder (replaced), then print")
    parser.add_argument("--train-rows", type=int, help="train on the first N train puzzles only (a quick check)")
    parser.add_argument("--no-finetune", action="store_true", help="skip fine-tuning (a quick check)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: none)")
    args = parser.parse_args(argv)
    try:
        metadata = _trained(args)
    except (PictorankError, OSError, KeyError, ValueError) as exc:
        print(f"train_cv: {exc}", file=sys.stderr)
        return 2
    if "train_cv" not in metadata:
        print("train_cv: this model was trained before the protocol (no train-CV estimate stored)", file=sys.stderr)
        return 2
    config = metadata["config"]
    what = f"{config['bag']} boosters, fine-tuning {'on' if config['finetune'] else 'off'}"
    print(f"## the recipe ({what}): train-CV estimate beside val\n")
    print(comparison_table(metadata["train_cv"], metadata.get("held_out_report")))
    if metadata.get("cv"):
        print("\n## the LightGBM grid as the CV saw it\n")
        print(grid_table(metadata["cv"], metadata["lgbm_params"], metadata["trees"][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
