"""Where `pictorank train` spends its time: each stage's seconds, model folders side by side.

    .venv/bin/python bench/train_stages.py models/default [OTHER_MODEL ...]

Reads each folder's stages.json (pictorank.train.pipeline writes it: the ranker, lexicon, open
play and clue-giver stages) and prints one row a stage, one column a folder, with the machine's
reference line: train the folders on a quiet machine, from an empty cache, to compare them.
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
    times = {}
    for folder in folders:
        try:
            times[folder] = json.loads((folder / STAGES_FILE).read_text(encoding="utf-8"))["seconds"]
        except (OSError, ValueError, KeyError) as exc:
            raise SystemExit(f"train_stages: {folder / STAGES_FILE}: {exc}") from None
    stages = list(dict.fromkeys(name for seconds in times.values() for name in seconds))
    print(reference_line())
    print("\n| stage | " + " | ".join(str(f) for f in folders) + " |\n|---|" + "---|" * len(folders))
    for stage in [*stages, "total"]:
        cells = [f"{sum(s.values()) if stage == 'total' else s.get(stage, float('nan')):.0f} s" for s in times.values()]
        print(f"| {stage} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
