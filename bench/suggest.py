"""Clue-giver benchmark: baselines and pictorank's suggester side by side on val, and timings.

    .venv/bin/python bench/suggest.py [--rows N] [--model DIR] [--reader DIR] [--bonus 0 0.1 0.5] [--timing-words 40] [--no-table]
    .venv/bin/python bench/suggest.py --data elco      # the same table on another vocabulary

Rows of the table (every clue judged on the same val puzzles, the answer's other options as the
words to avoid; val answers never occur in train):

- human: the puzzle's own clue.
- another human clue: for a word with several human clues (ELCo's phrases have about 8 each),
  one of its other puzzles' clues, drawn at random: how far people agree with each other. Only
  where every word has another clue (not Bliss val, whose words mostly have one).
- nearest-k: the k descriptions nearest the word (cosine), dropping any that shares a word with
  it, in order of nearness (k = 2, 3).
- suggest (bonus B): pictorank's suggester with the seed guesser (`--model`: also with the
  learned ranker as guesser); bonus inf puts every clue the guesser gets right first, a finite
  bonus trades guessability for likeness to human clues. `--reader DIR`: the same rows again with
  that model's fine-tuned encoder as the suggester's reader ("+ reader").

`--data elco`: the clue model learns from the train part of ELCo's dev half split by answer
phrase (bench/harness.py, the split bench/transfer.py trains its in-domain ranker on: 63
phrases, 500 clues) and the table is measured on its test part (21 phrases never seen, 166
puzzles): the method on a new vocabulary (emoji names) with a small training set. No timing there.

Timing, for never-seen words (val answers) with 10 avoid words each, one request at a time after a
warm-up, wall clock; the clue model comes from the cache (fitted once if absent):

- in process: `Suggester.suggest` over an encoder that has memoised nothing;
- over HTTP: POST /suggest to the service (in-thread uvicorn, as `pictorank serve` runs it) started
  from an *empty* embedding cache whose answer vocabulary is train's only, so no val word was
  encoded before its request: what a user meets with a word the service never saw. /suggest's
  guesser is the seed baseline (the default) either way. The service serves plain cosine and,
  with `--reader DIR`, also that learned model (`pictorank serve --model DIR`, as a deployment
  runs it: its ONNX base encoder for the clue model and the guesser, its fine-tuned encoder as the
  reader), side by side in the same run.
- the game's Clue mode over HTTP, by a second service started the same way (the first has encoded
  most of val's options: val's puzzles share them): GET /clues/random (the server draws a val
  puzzle of 10 options, picks the secret word and clues it) and then POST /clues/{id}/guess (which
  computes the clue again for its reasons), as many rounds as timed words. Rounds draw puzzles at
  random, so a later round may meet a word an earlier one encoded, as a server does over a game.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

import numpy as np

from pictorank.settings import CommonSettings, use_offline_environment
from pictorank.encoders import Encoder
from pictorank.puzzles import HintVocabulary, Puzzle, load_hints, load_puzzles, to_queries
from pictorank.ranker import CosineRanker, Ranker, SeedRanker, load_ranker
from pictorank.suggest import Suggester, fit_or_load
from pictorank.suggest.evaluate import agreement, evaluate_suggestions, suggest_for_puzzles
from pictorank.suggest.suggester import WIN_BONUS, Pictogram, Suggestion
from pictorank.ranker.registry import load_encoders
from harness import ELCO_SEED, ELCO_SHARES, split_by_answer  # bench/harness.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
ELCO = ROOT / "data" / "elco"


def nearest_descriptions(word: str, k: int, vocab: HintVocabulary, encoder: Encoder) -> Suggestion:
    """The baseline: the k descriptions nearest the word that share no word with it."""
    descriptions = list(dict.fromkeys(vocab.descriptions.values()))
    ids = {d: min(i for i, e in vocab.descriptions.items() if e == d) for d in descriptions}
    similarity = encoder.encode(descriptions) @ encoder.encode([word])[0]
    words = set(re.findall(r"[a-z]+", word.lower()))
    chosen = [d for d in (descriptions[i] for i in np.argsort(-similarity)) if not set(re.findall(r"[a-z]+", d.lower())) & words][:k]
    return Suggestion(word, tuple(Pictogram(ids[d], d, "", "") for d in chosen), 0, 0, 0.0, 0.0)


def human(puzzle: Puzzle, vocab: HintVocabulary) -> Suggestion:
    return Suggestion(puzzle.answer or "", tuple(Pictogram(h, vocab.descriptions[h], "", "") for h in puzzle.hints), 0, 0, 0.0, 0.0)


def another_human(puzzles: list[Puzzle], vocab: HintVocabulary, seed: int = 0) -> list[Suggestion] | None:
    """For each puzzle, the clue of another puzzle with the same answer (drawn at random); None
    unless every answer has another puzzle."""
    by_answer: dict[str, list[Puzzle]] = {}
    for puzzle in puzzles:
        by_answer.setdefault(puzzle.answer or "", []).append(puzzle)
    if any(len(group) < 2 for group in by_answer.values()):
        return None
    rng = random.Random(seed)
    return [human(rng.choice([q for q in by_answer[p.answer or ""] if q is not p]), vocab) for p in puzzles]


def load_data(name: str) -> tuple[HintVocabulary, list[Puzzle], list[Puzzle]]:
    """The vocabulary, the puzzles the clue model learns from and the puzzles measured on."""
    if name == "bliss":
        vocab = load_hints(DATA / "hint_descriptions.csv")
        return vocab, load_puzzles(DATA / "train.csv", vocab), load_puzzles(DATA / "val.csv", vocab)
    vocab = load_hints(ELCO / "hint_descriptions.csv")
    train, _, test = split_by_answer(load_puzzles(ELCO / "elco_dev.csv", vocab), lambda p: p.answer or "",
                                     ELCO_SHARES, ELCO_SEED)
    return vocab, train, test


def row(name: str, result: dict, seconds: float | None = None) -> str:
    a = result["agreement"]
    cells = [f"{a['main_idea']:>6.3f}", f"{a['set_f1']:>6.3f}", f"{a['exact']:>6.3f}", f"{a['length']:>5.2f}"]
    for guesser in ("seed", "cosine", "learned"):
        if guesser in result["guessers"]:
            m = result["guessers"][guesser]["suggested"]
            cells.append(f"{m['hits@1']:>7.3f} {m['score']:>6.3f}")
    timing = f"{seconds * 1000:>7.0f}" if seconds is not None else f"{'':>7}"
    return f"{name:<37} " + " ".join(cells) + f" {timing}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=("bliss", "elco"), default="bliss",
                        help="bliss: train -> val; elco: ELCo's in-domain split, train part -> test part (table only)")
    parser.add_argument("--rows", type=int, default=0, help="first N measured rows only (0: all; 563 on Bliss val, 166 on ELCo)")
    parser.add_argument("--model", help="a learned model directory: judge with it, and also suggest with it as guesser")
    parser.add_argument("--reader", help="a learned model directory whose fine-tuned encoder reads the candidate clues")
    parser.add_argument("--bonus", type=float, nargs="*", default=[0.0, WIN_BONUS, 0.5],
                        help="finite win bonuses to try (default: 0, the default, 0.5)")
    parser.add_argument("--timing-words", type=int, default=40, help="never-seen words timed one by one")
    parser.add_argument("--no-table", action="store_true", help="timings only (the table takes ~10 minutes)")
    args = parser.parse_args()
    use_offline_environment()
    if args.data == "elco" and args.no_table:
        parser.error("--data elco measures the table only (the timings are Bliss's)")
    vocab, train, val = load_data(args.data)
    val = val[: args.rows] if args.rows else val
    encoder = Encoder(cache_dir=CommonSettings().cache_dir)
    started = time.perf_counter()
    model = fit_or_load(to_queries(train, vocab), list(vocab.descriptions.values()), encoder, CommonSettings().cache_dir)
    print(f"clue model ready in {time.perf_counter() - started:.1f} s (from the cache when fitted before)", file=sys.stderr)
    reader = load_encoders(args.reader, encoder).finetuned if args.reader else None
    if args.no_table:
        print(timing(model, vocab, encoder, val, args.timing_words, reader))
        for served in (None, *([args.reader] if args.reader else [])):
            print(http_timing(val, args.timing_words, served))
        return
    seed, cosine = SeedRanker(encoder), CosineRanker(encoder)
    judges: dict[str, Ranker] = {"seed": seed, "cosine": cosine}
    if args.model:
        judges["learned"] = load_ranker(args.model, encoder=encoder)
    header = f"{'clue':<37} {'main':>6} {'setF1':>6} {'exact':>6} {'len':>5}" + "".join(
        f" {g + ' @1':>7} {'score':>6}" for g in judges) + f" {'p50 ms':>7}"
    lines = [header, "-" * len(header)]

    def judged(name: str, suggestions: list[Suggestion], seconds: float | None = None) -> None:
        lines.append(row(name, evaluate_suggestions(val, suggestions, vocab, judges), seconds))
        print(lines[-1], file=sys.stderr)

    judged("human", [human(p, vocab) for p in val])
    others = another_human(val, vocab)
    if others is not None:
        judged("another human clue", others)
    for k in (2, 3):
        judged(f"nearest-{k}", [nearest_descriptions(p.answer or "", k, vocab, encoder) for p in val])
    guessers = {"seed": seed, **({"learned": judges["learned"]} if args.model else {})}
    readers = {"": None, **({" + reader": reader} if reader is not None else {})}
    for guesser_name, guesser in guessers.items():
        for reader_name, used_reader in readers.items():
            for bonus in [math.inf, *args.bonus]:
                suggester = Suggester(model, vocab, guesser, encoder, win_bonus=bonus, reader=used_reader)
                suggestions, seconds = suggest_for_puzzles(suggester, val)
                judged(f"suggest ({guesser_name}, bonus {bonus:g}){reader_name}", suggestions, float(np.median(seconds)))
    encoder.flush()
    if reader is not None:
        reader.flush()
    print("\n".join(lines))
    if args.data != "bliss":
        return
    print(timing(model, vocab, encoder, val, args.timing_words, reader))
    for served in (None, *([args.reader] if args.reader else [])):
        print(http_timing(val, args.timing_words, served))


def timed_words(val: list[Puzzle], count: int) -> list[tuple[str, list[str]]]:
    """`count` val answers, each with 10 of its puzzle's other options to avoid."""
    puzzles = [p for p in val if len(p.options) >= 11][:count]
    return [(p.answer or "", [o for o in p.options if o != p.answer][:10]) for p in puzzles]


def percentiles(seconds: list[float]) -> str:
    p50, p95 = np.percentile(seconds, [50, 95])
    return f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def http_timing(val: list[Puzzle], count: int, model_dir: str | None = None) -> str:
    """p50/p95 of POST /suggest over HTTP for never-seen words, from an empty embedding cache, by a
    service that serves plain cosine or, with `model_dir`, that learned model (and reads the
    candidate clues with its fine-tuned encoder); then the Clue mode's round and guess, timed on a
    second fresh service, because val's puzzles share most of their options and the first
    service has encoded them."""
    seconds: list[float] = []
    with running_service(model_dir) as (url, ready, client):
        client.post(f"{url}/suggest", json={"word": "warm-up word", "avoid": ["a", "b"]}).raise_for_status()
        for word, avoid in timed_words(val, count):
            began = time.perf_counter()
            client.post(f"{url}/suggest", json={"word": word, "avoid": avoid, "top": 5, "use_known": False}).raise_for_status()
            seconds.append(time.perf_counter() - began)
    rounds: list[float] = []
    guesses: list[float] = []
    with running_service(model_dir) as (url, _, client):
        client.post(f"{url}/suggest", json={"word": "warm-up word", "avoid": ["a", "b"]}).raise_for_status()
        for _ in range(count):
            began = time.perf_counter()
            shown = client.get(f"{url}/clues/random").raise_for_status().json()
            rounds.append(time.perf_counter() - began)
            began = time.perf_counter()
            client.post(f"{url}/clues/{shown['id']}/guess", json={"guess": shown["options"][0]}).raise_for_status()
            guesses.append(time.perf_counter() - began)
    what = f"serving {model_dir}, its fine-tuned encoder as reader" if model_dir else "serving cosine, no reader"
    return (f"POST /suggest over HTTP ({what}) for {len(seconds)} never-seen words with 10 avoid words, from an "
            f"empty embedding cache (service ready in {ready:.0f} s): {percentiles(seconds)}\n"
            f"  Clue mode, {len(rounds)} rounds on another fresh service: GET /clues/random {percentiles(rounds)}; "
            f"POST /clues/{{id}}/guess {percentiles(guesses)}")


@contextmanager
def running_service(model_dir: str | None) -> Iterator[tuple[str, float, httpx.Client]]:
    """A service started from an empty embedding cache, with train's words as its answer vocabulary
    (cosine, or the learned model in `model_dir`), in-thread under uvicorn as `pictorank serve`
    runs it: its URL, the seconds it took to be ready, and a client."""
    import uvicorn

    from pictorank.api.app import create_app
    from pictorank.api.clues import build_clue_giver
    from pictorank.api.serve import uvicorn_options
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings

    with tempfile.TemporaryDirectory() as empty:
        served = {"model_dir": Path(model_dir)} if model_dir else {"method": "cosine"}
        settings = Settings(cache_dir=Path(empty), vocabulary_files=[DATA / "train.csv"], port=_free_port(), **served)
        started = time.perf_counter()
        service = build_service(settings)
        service.self_test()
        # The clue model from the usual cache (fitting it again would only cost minutes); its
        # encoder is the service's, which has encoded train's words and the pictograms only.
        clues = build_clue_giver(settings.model_copy(update={"cache_dir": CommonSettings().cache_dir}), service)
        if clues.error:
            raise SystemExit(f"bench/suggest.py: the clue-giver could not be built: {clues.error}")
        ready = time.perf_counter() - started
        server = uvicorn.Server(uvicorn.Config(create_app(settings, service, clues), **{**uvicorn_options(settings), "log_level": "warning"}))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            with httpx.Client(timeout=60) as client:
                yield f"http://{settings.host}:{settings.port}", ready, client
        finally:
            server.should_exit = True
            thread.join(timeout=30)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timing(model, vocab: HintVocabulary, encoder: Encoder, val: list[Puzzle], count: int,
           reader: Encoder | None = None) -> str:
    """p50/p95 of one suggest call for never-seen words (fresh encoder memory: nothing memoised),
    with `reader` as the suggester's reader when given (also fresh)."""
    fresh = Encoder(model=encoder.model, model_id=encoder.model_id)  # no disk cache: every string is new
    fresh_reader = Encoder(model=reader.model, model_id=reader.model_id) if reader is not None else None
    suggester = Suggester(model, vocab, SeedRanker(fresh), fresh, reader=fresh_reader)
    suggester.suggest("warm-up word", ["a", "b"])
    seconds = []
    for word, avoid in timed_words(val, count):
        started = time.perf_counter()
        suggester.suggest(word, avoid, top=5, use_known=False)
        seconds.append(time.perf_counter() - started)
    with_reader = " (with the reader)" if reader is not None else ""
    return f"suggest(){with_reader} in process for {len(seconds)} never-seen words with 10 avoid words: {percentiles(seconds)}"


if __name__ == "__main__":
    main()
