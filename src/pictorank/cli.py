"""`pictorank` command line: wires the commands to the package's modules.

Bad input ends with exit code 2 and one line on stderr naming file, row and field; no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from pictorank.api.serve import add_serve_parser
from pictorank.artifacts import check_replaceable
from pictorank.encoders import Encoder, Encoders, Quantization
from pictorank.errors import DataError, ModelError, PictorankError, SettingsError, UsageError, require_training_stack
from pictorank.evaluation import evaluate_rankings, format_table
from pictorank.evaluation.report import write_report
from pictorank.evaluation.significance import compare_with_reference, format_comparisons
from pictorank.lexicon import DEFAULT_SOURCE
from pictorank.lexicon import store as lexicon_store
from pictorank.puzzles import HintVocabulary, Puzzle, load_hints, load_puzzles
from pictorank.ranker import DEFAULT_METHOD, METHODS, Ranker, load_ranker, make_ranker, rank_puzzles
from pictorank.ranker.registry import default_model, serving_encoders
from pictorank.settings import CommonSettings, cache_dir_problem, read_settings, use_offline_environment
from pictorank.suggest import MAX_CLUE_LENGTH, Suggester
from pictorank.suggest.assembly import assemble_suggester, training_clues
from pictorank.suggest.rules import check_request
from pictorank.suggest.suggester import WIN_BONUS
from pictorank.suggest.evaluate import evaluate_suggestions, format_report, suggest_for_puzzles
from pictorank.submission import MAX_ANSWERS, checked_output, validate_submission, write_submission
from pictorank.open_play import store_lexicon, stored_words
from pictorank.train import TrainConfig, TrainingFiles, train_model
from pictorank.train.estimate import format_estimate

EXIT_BAD_INPUT = 2
EXIT_SYSTEM = 1  # the disk or the system failed (full, read-only), not the input


def _add_ranker_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hints", required=True, help="hint_descriptions.csv (hintID,description)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--method", choices=METHODS, help=f"unlearned method (default: {DEFAULT_METHOD})")
    choice.add_argument("--model", help="a model directory made by `pictorank train`")
    _add_cache_args(parser)


def _add_cache_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir", default=None,
        help="embedding (and fine-tuned encoder) cache (default: $PICTORANK_CACHE_DIR or ~/.cache/pictorank)",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk caches")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or messages")


def _settings(args: argparse.Namespace) -> CommonSettings:
    """The process settings (PICTORANK_* variables), with --cache-dir in place of the cache's."""
    if args.cache_dir:
        problem = cache_dir_problem(Path(args.cache_dir))
        if problem:
            raise UsageError(f"--cache-dir {args.cache_dir}: {problem}; give a folder (or --no-cache)")
        return read_settings(CommonSettings, cache_dir=Path(args.cache_dir))
    try:
        return read_settings(CommonSettings)
    except SettingsError as exc:
        if exc.variable != "PICTORANK_CACHE_DIR":
            raise
        raise UsageError(f"PICTORANK_CACHE_DIR {exc.problem.removeprefix('Value error, ')}; give a folder "
                         "(or --no-cache)") from None


def _cache_dir(args: argparse.Namespace) -> Path | None:
    return None if args.no_cache else _settings(args).cache_dir


def _add_force_arg(parser: argparse.ArgumentParser, destination: str) -> None:
    parser.add_argument(
        "--force", action="store_true",
        help=f"replace {destination} even if it is a non-empty folder pictorank did not write (everything in it is lost)",
    )


def _serving_settings(args: argparse.Namespace) -> CommonSettings:
    """The settings with the cache the user asked for (none with --no-cache)."""
    return _settings(args).model_copy(update={"cache_dir": _cache_dir(args)})


def build_ranker(args: argparse.Namespace) -> Ranker:
    """The ranker the user asked for, over the encoders `pictorank serve` would build for it
    (pictorank.ranker.registry.serving_encoders): a saved model directory, or an unlearned method."""
    model_dir = Path(args.model) if args.model else None
    encoders = serving_encoders(model_dir, _serving_settings(args))
    if model_dir is not None:
        return load_ranker(model_dir, encoders=encoders)
    return make_ranker(args.method or DEFAULT_METHOD, encoder=encoders.base)


def _load_input(args: argparse.Namespace, require_answers: bool) -> tuple[HintVocabulary, list[Puzzle]]:
    """The hint vocabulary and the puzzles of `--input`, checked."""
    vocab = load_hints(args.hints)
    puzzles = load_puzzles(args.input, vocab)
    if require_answers and any(p.answer is None for p in puzzles):
        raise DataError(args.input, None, "answer", "evaluation needs an answer column (use a train/val file)")
    return vocab, puzzles


def _timed_rank(
    args: argparse.Namespace, ranker: Ranker, puzzles: list[Puzzle], vocab: HintVocabulary
) -> tuple[list[list[str]], float]:
    """Every puzzle's full ranking and the seconds it took; then the new embeddings go to disk."""
    started = time.perf_counter()
    rankings = rank_puzzles(ranker, puzzles, vocab, progress=not args.quiet)
    seconds = time.perf_counter() - started
    for encoder in ranker.encoders():
        encoder.flush()
    return rankings, seconds


def _rank_file(args: argparse.Namespace, require_answers: bool) -> tuple[Ranker, list[Puzzle], list[list[str]], float]:
    vocab, puzzles = _load_input(args, require_answers)
    ranker = build_ranker(args)
    rankings, seconds = _timed_rank(args, ranker, puzzles, vocab)
    return ranker, puzzles, rankings, seconds


def _read_paths(args: argparse.Namespace) -> tuple[str, ...]:
    """Every file and folder the command reads: what it writes must overlap none of them."""
    names = ("input", "hints", "model", "reader", "train", "val")
    paths = [getattr(args, name, None) for name in names] + list(getattr(args, "models", None) or ())
    return tuple(str(p) for p in paths if p)


def cmd_predict(args: argparse.Namespace) -> int:
    inputs = _read_paths(args)
    checked_output(args.output, inputs)  # a bad --output fails now, not after the ranking
    ranker, puzzles, rankings, seconds = _rank_file(args, require_answers=False)
    write_submission(args.output, puzzles, [r[:MAX_ANSWERS] for r in rankings], inputs)
    if not args.quiet:
        print(f"wrote {args.output}: {len(puzzles)} rows ranked by {ranker.method} in {seconds:.1f} s", file=sys.stderr)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.report:
        check_replaceable(args.report, args.force, kind="report", inputs=_read_paths(args))
    vocab, puzzles = _load_input(args, require_answers=True)
    ranker = build_ranker(args)
    rankings, seconds = _timed_rank(args, ranker, puzzles, vocab)
    result = evaluate_rankings(puzzles, rankings)
    name = model_labels([args.model])[args.model] if args.model else ranker.method
    if args.json:
        payload = {"method": ranker.method, "model": args.model, "input": str(args.input), "seconds": seconds}
        payload.update({k: v for k, v in result.items() if k != "ranks"})
        print(json.dumps(payload, indent=2))
    else:
        print(format_table({name: result}))
    if args.report:
        _write_report(args, puzzles, {name: rankings}, vocab, {name: seconds})
    return 0


def _write_report(
    args: argparse.Namespace, puzzles: list[Puzzle], rankings_by_method: dict[str, list[list[str]]],
    vocab: HintVocabulary, seconds: dict[str, float], against: str | None = None,
) -> None:
    timings = ", ".join(f"{name} {s:.2f} s" for name, s in seconds.items())
    info = {"input": args.input, "hints": args.hints, "ranking time": timings}
    try:
        path = write_report(args.report, puzzles, rankings_by_method, vocab, info, force=args.force,
                            against=against)
    except OSError as exc:
        raise DataError(args.report, None, None, f"cannot write the report ({exc.strerror or exc})") from None
    if not args.quiet:
        print(f"wrote {path}", file=sys.stderr)


def cmd_compare(args: argparse.Namespace) -> int:
    """Several methods and models on the same file: one table, and optionally one report."""
    if args.report:
        check_replaceable(args.report, args.force, kind="report", inputs=_read_paths(args))
    _check_against(args)
    vocab, puzzles = _load_input(args, require_answers=True)
    if not args.methods and not args.models:
        raise UsageError("nothing to compare: give --methods and/or --models")
    settings = _serving_settings(args)
    rankers: dict[str, Ranker] = {}
    if args.methods:
        base = serving_encoders(None, settings).base  # one encoder and one cache for every unlearned method
        rankers = {m: make_ranker(m, encoder=base) for m in args.methods}
    labels = model_labels(args.models or (), args.methods or ())
    rankers.update({labels[d]: load_ranker(d, encoders=serving_encoders(Path(d), settings)) for d in args.models or ()})
    against = labels.get(args.against, args.against)
    rankings, seconds = {}, {}
    for name, ranker in rankers.items():
        rankings[name], seconds[name] = _timed_rank(args, ranker, puzzles, vocab)
    results = {name: evaluate_rankings(puzzles, r) for name, r in rankings.items()}
    paired = compare_with_reference({name: res["ranks"] for name, res in results.items()}, against)
    if args.json:  # the shape of the report's metrics.json: methods by name, then the paired list
        methods = {name: {k: v for k, v in res.items() if k != "ranks"} for name, res in results.items()}
        print(json.dumps({"methods": methods, "paired": [c.to_dict() for c in paired]}, indent=2))
    else:
        print(format_table(results))
        if paired:
            print(f"\npaired against {paired[0].reference} (same puzzles; exact McNemar test on first places, "
                  "bootstrap intervals of the Hits@1 and score differences)\n")
            print(format_comparisons(paired))
    if args.report:
        _write_report(args, puzzles, rankings, vocab, seconds, against=against)
    return 0


def model_labels(models: Sequence[str], methods: Sequence[str] = ()) -> dict[str, str]:
    """Each model folder's name in tables and reports: its folder's own name
    (`/tmp/runs/model-default` -> `model-default`), with as many parent folders as it takes to
    tell it from the other folders and the methods. A whole path would break the table's columns."""
    parts = {model: Path(os.path.abspath(model)).parts for model in models}  # "." and "dir/" have names too
    labels = {}
    for model, own in parts.items():
        others = [p for m, p in parts.items() if p != own]
        for k in range(1, len(own) + 1):
            label = "/".join(own[-k:])
            if label not in methods and all("/".join(p[-k:]) != label for p in others):
                break
        else:
            label = model
        labels[model] = label
    return labels


def _check_against(args: argparse.Namespace) -> None:
    """--against must name one of the compared methods or model folders (checked before ranking);
    and a model folder named like a compared method would take over that method's row."""
    clash = next((d for d in args.models or () if d in (args.methods or ())), None)
    if clash is not None:
        raise UsageError(f"--models {clash}: named like the method {clash!r}, whose row it would take; "
                         f"give the folder's path another way (./{clash})")
    compared = [*(args.methods or ()), *(args.models or ())]
    if args.against is not None and args.against not in compared:
        raise UsageError(f"--against {args.against!r} is not compared: name one of {', '.join(compared) or 'none'}")


def _quantization_arg(text: str) -> Quantization | None:
    """--quantization checked before any training: int8, int8-ffn, fp32, none, or base=<q>,ft=<q>."""
    if text == "none":
        return None
    try:
        return Quantization.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: use int8, int8-ffn, fp32, none, or base=int8,ft=int8-ffn") from None


def cmd_train(args: argparse.Namespace) -> int:
    """Make a model folder from the data files (pictorank.train.pipeline.train_model)."""
    require_training_stack("pictorank train")
    settings = _serving_settings(args)
    config = TrainConfig(finetune=not args.no_finetune, seed=args.seed, quantization=args.quantization)
    log = (lambda message: None) if args.quiet else (lambda message: print(message, file=sys.stderr))
    encoder = Encoder(cache_dir=settings.cache_dir, max_cached=settings.max_cached_strings)
    files = TrainingFiles(Path(args.train), Path(args.val) if args.val else None, Path(args.hints))
    metadata = train_model(files, Path(args.out), config, encoder, settings, log, force=args.force,
                           lexicon=not args.no_lexicon)
    print(f"learned position weights (by clue length): {json.dumps(metadata['position_weights'])}")
    print(format_estimate(metadata["train_cv"]))
    report = metadata["held_out_report"]
    held_out = "" if report is None else (
        f"held-out val (scored once) score {report['overall']['score']:.4f}, Hits@1 {report['overall']['hits@1']:.4f}, "
        f"MRR {report['overall']['mrr']:.4f}; ")
    stages = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in metadata["stages"].items())
    print(f"wrote {args.out}: {held_out}stages: {stages}")
    return 0


def cmd_lexicon(args: argparse.Namespace) -> int:
    """Store a lexicon's embeddings in a model folder, for the service's open-vocabulary mode."""
    from pictorank.api.settings import Settings

    settings = _settings(args)
    model_dir = Path(args.model)
    if not model_dir.is_dir():
        raise DataError(model_dir, None, None, "model directory not found")
    if not os.access(model_dir, os.W_OK):  # before minutes of embedding, not after
        raise DataError(model_dir, None, None, "the model directory is read-only: the lexicon cannot be stored in it")
    files = [Path(f) for f in args.vocabulary] if args.vocabulary is not None else Settings().vocabulary_files
    started = time.perf_counter()
    stored = store_lexicon(model_dir, settings, args.lexicon, args.space, files)
    seconds = time.perf_counter() - started
    print(f"stored {stored_words(stored)} ({args.lexicon}, {stored.space} space) in "
          f"{lexicon_store.stored_file(model_dir) or model_dir / lexicon_store.LEXICON_CONFIG} in {seconds:.0f} s")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    problems = validate_submission(args.submission, args.input)
    for problem in problems:
        print(f"{args.submission}: {problem}")
    if problems:
        print(f"invalid: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{args.submission}: valid")
    return 0


# -- suggest: the clue-giver (pictorank.suggest) ------------------------------------------------


def _add_suggest_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hints", required=True, help="hint_descriptions.csv (hintID,description)")
    parser.add_argument(
        "--train", help="puzzles CSV with answers whose clues teach how people clue (default: train.csv beside --hints)"
    )
    guesser = parser.add_mutually_exclusive_group()
    guesser.add_argument("--guesser", choices=METHODS, default="seed",
                         help="unlearned guesser the clue must win (default: seed, the task's baseline)")
    guesser.add_argument("--model", help="a model directory made by `pictorank train`: its ranker is the guesser")
    parser.add_argument("--reader", metavar="MODEL_DIR",
                        help="a model directory made by `pictorank train`: its fine-tuned encoder judges how well each "
                             "candidate clue reads as the word (more human-like clues; see docs/clue-giver.md). "
                             "Default: --model's, else the default model's (as `pictorank serve` reads), "
                             "if there is one; 'none': no reader")
    parser.add_argument("--max-length", type=int, default=4, help=f"most pictograms per clue, 1-{MAX_CLUE_LENGTH} (default 4)")
    parser.add_argument("--win-bonus", type=float, default=WIN_BONUS,
                        help=f"likeness (0-2) a clue gains by making the guesser pick the word (default {WIN_BONUS}; "
                             "inf: every winning clue first)")
    _add_cache_args(parser)


def _train_path(args: argparse.Namespace) -> Path:
    if args.train:
        return Path(args.train)
    beside = Path(args.hints).with_name("train.csv")
    if not beside.is_file():
        raise UsageError(f"no --train given and no {beside}: name the training puzzles with --train")
    return beside


def suggester_from_args(args: argparse.Namespace, vocab: HintVocabulary,
                        judge: bool = False) -> tuple[Suggester, Encoders, Ranker | None]:
    """The clue-giver as `pictorank serve` assembles it for the same model folder
    (pictorank.suggest.assembly): its encoders, clue model and reader; and with `judge`, the
    learned model at hand (--model's, else the reader's), which evaluate-suggest also judges with."""
    settings = _serving_settings(args)
    train = _train_path(args)
    clues = training_clues(train, vocab)  # the cheap checks first: a bad file fails before any model loads
    reading, default = _reading_dir(args, settings)  # before the fit: a bad folder fails at once
    home = Path(args.model) if args.model else reading
    try:
        encoders = serving_encoders(home, settings)
    except ModelError as exc:
        if not default:
            raise
        _say(args, f"no reader: the default model did not load ({exc})")
        reading = home = None
        encoders = serving_encoders(None, settings)
    guesser = load_ranker(args.model, encoders=encoders) if args.model else make_ranker(args.guesser, encoder=encoders.base)
    reader = _reader(args, settings, reading, home, encoders)
    if default and reading is not None:
        _say(args, f"reader: the fine-tuned encoder of {reading}" if reader is not None
             else f"no reader: {reading} has no fine-tuned encoder")
    started = time.perf_counter()
    try:
        suggester = assemble_suggester(clues, vocab, encoders, settings.cache_dir, home, guesser, reader, args.win_bonus)
    except ModelError as exc:  # what the training puzzles cannot teach (too few answers): name the file
        raise DataError(train, None, None, str(exc)) from None
    _say(args, f"clue model ready in {time.perf_counter() - started:.1f} s", prefix="")
    learned = None
    if judge:
        learned = guesser if args.model else (load_ranker(reading, encoders=encoders) if reading else None)
    return suggester, encoders, learned


def _say(args: argparse.Namespace, line: str, prefix: str = "pictorank: ") -> None:
    """A progress or status line on stderr, unless --quiet."""
    if not args.quiet:
        print(f"{prefix}{line}", file=sys.stderr)


def _reading_dir(args: argparse.Namespace, settings: CommonSettings) -> tuple[Path | None, bool]:
    """The model folder whose fine-tuned encoder reads the candidate clues, and whether it is the
    default model: --reader's; without --reader, --model's, else the default model's (what
    `pictorank serve` serves when it loads), so that the command line suggests what the service
    does; none with `--reader none`. A default model that is missing or broken only leaves the
    reader out (said on stderr)."""
    if args.reader == "none":
        return None, False
    if args.reader is not None:
        return Path(args.reader), False
    if args.model:
        return Path(args.model), False
    directory, why = default_model(settings)
    if directory is None:
        _say(args, f"no reader: {why}")
    return directory, directory is not None


def _reader(args: argparse.Namespace, settings: CommonSettings, reading: Path | None, home: Path | None,
            encoders: Encoders) -> Encoder | None:
    """The fine-tuned encoder of `reading`: the home model's own when it is the same folder."""
    if reading is None:
        return None
    same = home is not None and reading.resolve() == home.resolve()
    reader = encoders.finetuned if same else serving_encoders(reading, settings).finetuned
    if reader is None and args.reader is not None:
        raise UsageError(f"--reader {args.reader}: that model has no fine-tuned encoder")
    return reader


def cmd_suggest(args: argparse.Namespace) -> int:
    """Clues for one secret word."""
    check_request(args.word, args.avoid, args.max_length, args.top)  # bad input fails before any fitting
    vocab = load_hints(args.hints)
    suggester, encoders, _ = suggester_from_args(args, vocab)
    started = time.perf_counter()
    suggestions = suggester.suggest(args.word, args.avoid, max_length=args.max_length, top=args.top)
    seconds = time.perf_counter() - started
    for encoder in encoders.all():
        encoder.flush()
    if args.json:
        print(json.dumps({"word": args.word, "seconds": seconds, "suggestions": [s.to_dict() for s in suggestions]},
                         indent=2, ensure_ascii=False))
        return 0
    for number, suggestion in enumerate(suggestions, 1):
        known = ", a known train clue" if suggestion.known else ""
        print(f"{number}. {' + '.join(p.description for p in suggestion.pictograms)}   "
              f"(ids {' '.join(map(str, suggestion.hint_ids))}; guesser rank {suggestion.rank} of {suggestion.options}{known})")
        for pictogram in suggestion.pictograms:
            print(f"     {pictogram.id:>5} {pictogram.description}: {pictogram.reason}")
    return 0


def cmd_evaluate_suggest(args: argparse.Namespace) -> int:
    """Suggest a clue for every answer of --input and compare it with the human clue."""
    check_request("word", [], args.max_length, 1)
    vocab, puzzles = _load_input(args, require_answers=True)
    _check_suggestable(args.input, puzzles, args.max_length)
    suggester, encoders, learned = suggester_from_args(args, vocab, judge=True)
    done = (lambda n: None) if args.quiet else (lambda n: print(f"\rsuggested {n}/{len(puzzles)}", end="", file=sys.stderr))
    suggestions, seconds = suggest_for_puzzles(suggester, puzzles, args.max_length, progress=done)
    if not args.quiet:
        print(file=sys.stderr)
    plain = serving_encoders(None, _serving_settings(args)).base  # the judges are the task's own methods
    judges: dict[str, Ranker] = {m: make_ranker(m, encoder=plain) for m in METHODS}
    if learned is not None:
        judges["learned"] = learned
    result = evaluate_suggestions(puzzles, suggestions, vocab, judges)
    for ranker in {id(j): j for j in judges.values()}.values():
        for used in ranker.encoders():
            used.flush()
    for encoder in [*encoders.all(), *([suggester.reader] if suggester.reader is not None else [])]:
        encoder.flush()
    result["seconds_per_word"] = {"p50": float(sorted(seconds)[len(seconds) // 2]), "mean": sum(seconds) / len(seconds)}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_report(result))
        print(f"\nseconds per word: p50 {result['seconds_per_word']['p50']:.3f}, mean {result['seconds_per_word']['mean']:.3f}")
    return 0


def _check_suggestable(path: str, puzzles: list[Puzzle], max_length: int) -> None:
    """Each puzzle's answer and other options as the suggestion request evaluate-suggest will make,
    checked before the fit and the minutes of suggesting: a row the clue-giver refuses (a
    101-character answer, more than 100 other options) is named, not met at the end of the run."""
    for puzzle in puzzles:
        avoid = [o for o in puzzle.options if o != puzzle.answer]
        for column, words in (("answer", []), ("options", avoid)):
            try:
                check_request(puzzle.answer, words, max_length, 1)
            except UsageError as exc:
                raise DataError(path, puzzle.datapoint_id, column, f"{exc} for a clue request") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pictorank",
        description="Rank candidate words for an ordered pictogram clue (the game Chameleon).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    predict = commands.add_parser("predict", help="rank a test file's options and write submission.csv")
    predict.add_argument("--input", required=True, help="puzzles CSV (test/val/train format)")
    _add_ranker_args(predict)
    predict.add_argument("--output", required=True, help="submission.csv to write (atomically)")
    predict.set_defaults(func=cmd_predict)

    evaluate = commands.add_parser("evaluate", help="rank a file with answers and print its metrics")
    evaluate.add_argument("--input", required=True, help="puzzles CSV with an answer column (val/train)")
    _add_ranker_args(evaluate)
    evaluate.add_argument("--json", action="store_true", help="print the metrics as JSON")
    evaluate.add_argument("--report", metavar="DIR", help="also write DIR/report.html with plots and metrics.json")
    _add_force_arg(evaluate, "--report DIR")
    evaluate.set_defaults(func=cmd_evaluate)

    compare = commands.add_parser("compare", help="evaluate several methods/models on one file, side by side")
    compare.add_argument("--input", required=True, help="puzzles CSV with an answer column (val/train)")
    compare.add_argument("--hints", required=True, help="hint_descriptions.csv (hintID,description)")
    compare.add_argument("--methods", nargs="+", choices=METHODS, default=[], help="unlearned methods to compare")
    compare.add_argument("--models", nargs="+", default=[], metavar="DIR", help="model directories to compare")
    compare.add_argument("--report", metavar="DIR", help="write DIR/report.html with plots and metrics.json")
    _add_force_arg(compare, "--report DIR")
    compare.add_argument("--json", action="store_true", help="print the metrics as JSON")
    compare.add_argument("--against", metavar="NAME",
                         help="compare every other method with this one puzzle by puzzle: first places won and lost "
                              "(exact McNemar p) and the score difference with a 95%% bootstrap interval "
                              "(default: cosine, when it is compared)")
    _add_cache_args(compare)
    compare.set_defaults(func=cmd_compare)

    train = commands.add_parser("train", help="train the learned ranker and write a model directory")
    train.add_argument("--train", required=True, help="training puzzles CSV with answers")
    train.add_argument("--val", help="held-out puzzles CSV with answers, scored once after training (the held-out "
                       "report); no training choice reads it (optional)")
    train.add_argument("--hints", required=True, help="hint_descriptions.csv (hintID,description)")
    train.add_argument("--out", required=True, help="model directory to write (replaced atomically)")
    _add_force_arg(train, "--out DIR")
    train.add_argument("--seed", type=int, default=13, help="seed of every random source (default 13)")
    train.add_argument("--no-finetune", action="store_true", help="skip encoder fine-tuning (fast, weaker)")
    train.add_argument("--quantization", default=TrainConfig.quantization, type=_quantization_arg,
                       help="ONNX export of the encoders for inference: int8, int8-ffn (feed-forward "
                       "layers only), fp32, per encoder as "
                       f"base=int8,ft=int8-ffn (default {TrainConfig.quantization}), or none (the model runs on PyTorch)")
    train.add_argument("--no-lexicon", action="store_true",
                       help="do not store the English lexicon's embeddings (open-vocabulary mode then guesses the data's words)")
    _add_cache_args(train)
    train.set_defaults(func=cmd_train)

    lexicon = commands.add_parser("lexicon", help="store a lexicon's embeddings in a model folder (open-vocabulary mode)")
    lexicon.add_argument("--model", required=True, help="the model directory to add lexicon.npz to")
    lexicon.add_argument("--lexicon", default=DEFAULT_SOURCE,
                         help="`wordnet` (the bundled English lexicon, default) or a word list: one word a line, "
                         "optionally a tab and its Zipf frequency")
    lexicon.add_argument("--space", default=lexicon_store.DEFAULT_SPACE, choices=lexicon_store.SPACES,
                         help=f"the space to search in (default {lexicon_store.DEFAULT_SPACE}); every space of the model is stored")
    lexicon.add_argument("--vocabulary", nargs="*", metavar="CSV",
                         help="puzzle files whose options join the lexicon (default: the bundled train, val and test)")
    _add_cache_args(lexicon)
    lexicon.set_defaults(func=cmd_lexicon)

    validate = commands.add_parser("validate", help="check a submission.csv against its input file")
    validate.add_argument("--submission", required=True, help="submission.csv to check")
    validate.add_argument("--input", required=True, help="the puzzles CSV it answers")
    validate.set_defaults(func=cmd_validate)

    suggest = commands.add_parser("suggest", help="suggest pictogram clues for a secret word (the clue-giver)")
    suggest.add_argument("--word", required=True, help="the secret word")
    suggest.add_argument("--avoid", nargs="+", default=[], metavar="W",
                         help="words the guesser must not confuse it with (default: the word's nearest train answers)")
    suggest.add_argument("--top", type=int, default=5, help="how many clues to print (default 5)")
    suggest.add_argument("--json", action="store_true", help="print the clues as JSON")
    _add_suggest_args(suggest)
    suggest.set_defaults(func=cmd_suggest)

    evaluate_suggest = commands.add_parser(
        "evaluate-suggest", help="suggest a clue for each answer of a file and compare with its human clue"
    )
    evaluate_suggest.add_argument("--input", required=True, help="puzzles CSV with an answer column (val)")
    evaluate_suggest.add_argument("--json", action="store_true", help="print the metrics as JSON")
    _add_suggest_args(evaluate_suggest)
    evaluate_suggest.set_defaults(func=cmd_evaluate_suggest)

    add_serve_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    use_offline_environment(quiet=getattr(args, "quiet", False))
    handler: Callable[[argparse.Namespace], int] = args.func
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return handler(args)
    except PictorankError as exc:
        print(f"pictorank: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # the disk, not the input: full, read-only, gone (ENOSPC, EROFS, EIO)
        print(f"pictorank: error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return EXIT_SYSTEM
    except KeyboardInterrupt:
        print("pictorank: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("pictorank: terminated", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM (what `timeout`, `docker stop` and systemd send), raised where the command is, as
    Ctrl-C raises KeyboardInterrupt: the cleanups run (a temporary output file or model folder is
    removed) instead of the process dying with them half-written beside the user's files."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


if __name__ == "__main__":
    sys.exit(main())
