"""How well pictorank's confidence ("83% sure") matches how often its first option is right.

    .venv/bin/python bench/calibration.py                        # seed, cosine, models/default
    .venv/bin/python bench/calibration.py --model /tmp/model      # another learned model directory
    .venv/bin/python bench/calibration.py --write-shipped         # refit seed/cosine on train first

For every ranker: expected calibration error (10 equal-width bins), mean confidence and Hits@1
on Bliss val (in domain) and on the ELCo dev set (emoji clues of English phrases, data/elco:
out of domain), and a reliability plot (reports/calibration/reliability.png) with one panel per
ranker. The learned ranker's calibration comes from its model directory (fitted on out-of-fold
CV scores of train); seed's and cosine's from `pictorank/ranker/calibrations/<method>.json`,
which `--write-shipped` refits on the bundled train set (they learn nothing from it).
Confidence is only given for rankings of given options, which is what both sets are.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")  # no display: write the PNG only
import matplotlib.pyplot as plt  # noqa: E402

from pictorank.settings import CommonSettings, use_offline_environment  # noqa: E402
from pictorank.encoders import Encoder  # noqa: E402
from pictorank.evaluation.calibration import expected_calibration_error, reliability_bins  # noqa: E402
from pictorank.puzzles import load_hints, load_puzzles, to_queries  # noqa: E402
from pictorank.query import Query  # noqa: E402
from pictorank.ranker import Ranker, load_ranker, make_ranker  # noqa: E402
from pictorank.ranker.calibration import SHIPPED_DIR  # noqa: E402
from pictorank.train.calibrate import unlearned_calibrator  # noqa: E402

use_offline_environment()

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "bliss val": (ROOT / "data/bliss/val.csv", ROOT / "data/bliss/hint_descriptions.csv"),
    "elco dev": (ROOT / "data/elco/elco_dev.csv", ROOT / "data/elco/hint_descriptions.csv"),
}
TRAIN = (ROOT / "data/bliss/train.csv", ROOT / "data/bliss/hint_descriptions.csv")


def answered_queries(puzzles_file: Path, hints_file: Path) -> list[Query]:
    vocab = load_hints(hints_file)
    return to_queries(load_puzzles(puzzles_file, vocab), vocab)


def write_shipped(encoder: Encoder, methods: Sequence[str]) -> None:
    """Refit the unlearned methods' calibrations on the bundled train set, into the package."""
    train = answered_queries(*TRAIN)
    for method in methods:
        calibrator = unlearned_calibrator(make_ranker(method, encoder=encoder), train,
                                          f"{method} rankings of the bundled Bliss train set ({len(train)} clues)")
        calibrator.save(SHIPPED_DIR / f"{method}.json")
        print(f"wrote {SHIPPED_DIR / f'{method}.json'}: {calibrator.to_json()}")


def measure(ranker: Ranker, queries: Sequence[Query]) -> dict:
    """Confidence against outcome for every query: ECE, means, reliability bins."""
    ranked = ranker.rank(queries)
    confidences = [r.confidence for r in ranked]
    if any(c is None for c in confidences):
        return {"error": "this ranker has no calibration"}
    correct = [r.options[0] == q.answer for q, r in zip(queries, ranked)]
    return {
        "rows": len(queries),
        "ece": expected_calibration_error(confidences, correct),
        "mean_confidence": sum(confidences) / len(confidences),
        "hits@1": sum(correct) / len(correct),
        "bins": [vars(b) for b in reliability_bins(confidences, correct)],
    }


def plot(results: dict[str, dict[str, dict]], path: Path) -> None:
    """One reliability panel per ranker: stated probability against observed accuracy per bin."""
    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 4.2), squeeze=False)
    for ax, (name, by_set) in zip(axes[0], results.items()):
        ax.plot([0, 1], [0, 1], color="#999", linestyle="--", linewidth=1, label="perfect")
        for (set_name, result), marker in zip(by_set.items(), ("o", "s")):
            if "bins" not in result:
                continue
            bins = result["bins"]
            ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], marker=marker,
                    label=f"{set_name} (ECE {result['ece']:.3f}, n={result['rows']})")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("stated confidence")
        ax.set_ylabel("share with the first option right")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, action="append", default=[],
                        help="learned model directory (default: models/default when it exists)")
    parser.add_argument("--methods", nargs="*", default=["seed", "cosine"], help="unlearned methods")
    parser.add_argument("--write-shipped", action="store_true", help="refit the unlearned calibrations on train first")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "calibration")
    args = parser.parse_args()

    encoder = Encoder(cache_dir=CommonSettings().cache_dir)
    if args.write_shipped:
        write_shipped(encoder, args.methods)
    rankers: dict[str, Ranker] = {m: make_ranker(m, encoder=encoder) for m in args.methods}
    models = args.model or [d for d in [ROOT / "models" / "default"] if (d / "ranker.json").is_file()]
    for directory in models:
        rankers[f"learned:{directory.name}"] = load_ranker(directory, encoder=encoder)
    sets = {name: answered_queries(*files) for name, files in SETS.items()}

    results = {name: {s: measure(r, q) for s, q in sets.items()} for name, r in rankers.items()}
    print(f"{'ranker':<22} {'set':<10} {'rows':>5} {'ECE':>7} {'mean conf':>10} {'hits@1':>7}")
    for name, by_set in results.items():
        for set_name, r in by_set.items():
            if "error" in r:
                print(f"{name:<22} {set_name:<10} {r['error']}")
            else:
                print(f"{name:<22} {set_name:<10} {r['rows']:>5} {r['ece']:>7.3f} {r['mean_confidence']:>10.3f} {r['hits@1']:>7.3f}")
    plot(results, args.out / "reliability.png")
    (args.out / "calibration.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"reliability plot: {args.out / 'reliability.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
