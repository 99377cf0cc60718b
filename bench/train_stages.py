"""Where `pictorank train` spends its time and memory: each stage's seconds, and the run's peak
memory as each stage ended, model folders side by side.

    .venv/bin/python bench/train_stages.py models/default [OTHER_MODEL ...]

Reads each folder's stages.json (pictorank.train.pipeline writes it: the ranker, lexicon, open
play and clue-giver stages) and prints one row a stage, one column a folder, with the machine's
reference line: train the folders on a quiet machine, from an empty cache, to compare them. The
peak only grows over a run: the stage where it jumps set it. Folders trained before the peak was
recorded show none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness import reference_line  # bench/harness.py, beside this file
from pictorank.train.pipeline import STAGES_FILE


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]]
    if not folders:
        raise SystemExit(__doc__.split("\n\n")[1].strip())
    records = {}
    for folder in folders:
        try:
            records[folder] = json.loads((folder / STAGES_FILE).read_text(encoding="utf-8"))
            records[folder]["seconds"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"train_stages: {folder / STAGES_FILE}: {exc}") from None
    stages = list(dict.fromkeys(name for record in records.values() for name in record["seconds"]))
    print(reference_line())
    print("\n| stage | " + " | ".join(str(f) for f in folders) + " |\n|---|" + "---|" * len(folders))
    for stage in [*stages, "total"]:
        cells = []
        for record in records.values():
            seconds = sum(record["seconds"].values()) if stage == "total" else record["seconds"].get(stage, float("nan"))
            peak = record.get("peak_mb", {}).get(stage)
            cells.append(f"{seconds:.0f} s" + (f", peak so far {peak:,} MB" if peak is not None else ""))
        print(f"| {stage} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
