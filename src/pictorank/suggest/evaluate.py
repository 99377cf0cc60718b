"""`pictorank evaluate-suggest`: how human-like and how guessable suggested clues are.

For each puzzle with an answer, a clue is suggested for the answer with the puzzle's other
options as the words to avoid, never giving back a train clue of the word (`use_known=False`).

- Agreement with the puzzle's human clue: main-idea accuracy (same first pictogram), set F1 of
  the pictograms, exact-sequence rate. Pictograms are compared by description: two ids with one
  description are the same pictogram to every text model (Bliss has 7 such pairs).
- Guessability: the puzzle re-ranked by each judging guesser with the suggested clue in place of
  the human one: Hits@1 and the task's score of the answer; the human clue's beside them.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np

from pictorank.evaluation import evaluate_rankings
from pictorank.puzzles import HintVocabulary, Puzzle
from pictorank.ranker import Ranker, rank_puzzles
from pictorank.suggest.suggester import Suggester, Suggestion

GUESS_METRICS = ("hits@1", "score", "mrr")


def set_f1(suggested: Sequence[str], human: Sequence[str]) -> float:
    """F1 of the two clues' pictogram sets (order and repeats ignored)."""
    a, b = set(suggested), set(human)
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def agreement(suggested: Sequence[str], human: Sequence[str]) -> dict[str, float]:
    """Main-idea hit, set F1 and exact-sequence hit of one suggested clue against the human one."""
    return {
        "main_idea": float(bool(suggested) and suggested[0] == human[0]),
        "set_f1": set_f1(suggested, human),
        "exact": float(list(suggested) == list(human)),
        "length": float(len(suggested)),
    }


def suggest_for_puzzles(suggester: Suggester, puzzles: Sequence[Puzzle], max_length: int = 4,
                        progress: Callable[[int], None] | None = None) -> tuple[list[Suggestion], list[float]]:
    """The best clue for each puzzle's answer, avoiding its other options; and the seconds each took."""
    suggestions, seconds = [], []
    for done, puzzle in enumerate(puzzles, 1):
        assert puzzle.answer is not None
        avoid = [o for o in puzzle.options if o != puzzle.answer]
        started = time.perf_counter()
        suggestions.append(suggester.suggest(puzzle.answer, avoid, max_length=max_length, top=1, use_known=False)[0])
        seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress(done)
    return suggestions, seconds


def evaluate_suggestions(
    puzzles: Sequence[Puzzle], suggestions: Sequence[Suggestion], vocab: HintVocabulary, judges: dict[str, Ranker],
) -> dict:
    """Agreement with the human clues and guessability under each judge, suggested and human."""
    if any(p.answer is None for p in puzzles):
        raise ValueError("evaluation needs an answer for every puzzle (train/val files)")
    rows = [agreement(s.descriptions, vocab.describe(p.hints)) for p, s in zip(puzzles, suggestions)]
    summary = {name: float(np.mean([r[name] for r in rows])) for name in rows[0]} if rows else {}
    summary["human_length"] = float(np.mean([len(p.hints) for p in puzzles])) if puzzles else 0.0
    summary["rows"] = len(rows)
    replaced = [replace(p, hints=tuple(s.hint_ids)) for p, s in zip(puzzles, suggestions)]
    guessers = {}
    for name, judge in judges.items():
        guessers[name] = {
            "suggested": _guess_metrics(judge, replaced, vocab),
            "human": _guess_metrics(judge, list(puzzles), vocab),
        }
    return {"agreement": summary, "guessers": guessers}


def _guess_metrics(judge: Ranker, puzzles: list[Puzzle], vocab: HintVocabulary) -> dict[str, float]:
    overall = evaluate_rankings(puzzles, rank_puzzles(judge, puzzles, vocab))["overall"]
    return {name: float(overall[name]) for name in GUESS_METRICS}


def format_report(result: dict, name: str = "suggested") -> str:
    """The evaluation as two small plain-text tables."""
    a = result["agreement"]
    lines = [
        f"{'clue':<12} {'rows':>5} {'main idea':>10} {'set F1':>7} {'exact':>6} {'length':>7}",
        f"{name:<12} {a['rows']:>5} {a['main_idea']:>10.3f} {a['set_f1']:>7.3f} {a['exact']:>6.3f} {a['length']:>7.2f}",
        f"{'human':<12} {a['rows']:>5} {1:>10.3f} {1:>7.3f} {1:>6.3f} {a['human_length']:>7.2f}",
        "",
        f"{'guesser':<12} {'clue':<10} {'hits@1':>7} {'score':>7} {'mrr':>7}",
    ]
    for guesser, by_clue in result["guessers"].items():
        for clue in ("suggested", "human"):
            m = by_clue[clue]
            label = name if clue == "suggested" else "human"
            lines.append(f"{guesser:<12} {label:<10} {m['hits@1']:>7.3f} {m['score']:>7.3f} {m['mrr']:>7.3f}")
    return "\n".join(lines)
