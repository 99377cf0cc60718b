"""Training procedure: folds grouped by answer, reproducible fine-tuning and LightGBM, the CLI."""

from __future__ import annotations

import copy
import csv
import json

import numpy as np
import pytest

from helpers import DATA
from pictorank.cli import main
from pictorank.train.finetune import FinetuneParams, _embed, finetune, weights_digest
from pictorank.puzzles import to_queries
from pictorank.train import TrainConfig, fit_ranker_from_tables
from pictorank.train.fold_encoders import query_folds
from pictorank.train.oof import labels_and_sizes


def test_folds_keep_every_answer_in_one_fold(vocab, train_puzzles):
    queries = to_queries(train_puzzles, vocab)
    folds = query_folds(queries, 3, seed=1)
    fold_of: dict[str, set[int]] = {}
    for q, f in zip(queries, folds):
        fold_of.setdefault(q.answer, set()).add(int(f))
    assert all(len(f) == 1 for f in fold_of.values())
    assert sorted(set(folds.tolist())) == [0, 1, 2]


def test_labels_mark_the_answer_of_each_group(vocab, val_puzzles):
    """Exactly the answer's row of each group is 1, in transform's order (query, then option)."""
    queries = to_queries(val_puzzles[:40], vocab)
    labels, sizes = labels_and_sizes(queries)
    assert sizes.tolist() == [len(q.options) for q in queries]
    bounds = np.cumsum([0, *sizes])
    for query, start, end in zip(queries, bounds[:-1], bounds[1:]):
        group = labels[start:end]
        assert group.sum() == 1 and query.options[int(np.argmax(group))] == query.answer
    assert any(q.options.index(q.answer) != 0 for q in queries)  # the answer is not always first


def test_config_round_trips_through_json():
    config = TrainConfig(folds=2, drop_groups=("lex_",))
    assert TrainConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_a_model_saved_before_the_precision_knob_reads_as_fp32():
    values = TrainConfig().to_dict()
    del values["finetune_precision"]
    assert TrainConfig.from_dict(values).finetune_precision == "fp32"
    assert TrainConfig().finetune_precision == "bf16"


def test_an_unknown_finetuning_precision_is_refused_before_any_work():
    from pictorank.errors import UsageError

    with pytest.raises(UsageError, match="finetune_precision must be one of fp32, bf16"):
        TrainConfig(finetune_precision="fp16")


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_finetuning_is_reproducible_and_changes_the_weights(base_model, vocab, train_puzzles, precision):
    queries = to_queries(train_puzzles[:32], vocab)
    params = FinetuneParams(epochs=1, batch_size=16, hard_negatives=1, precision=precision)
    first = finetune(copy.deepcopy(base_model), queries, params)
    second = finetune(copy.deepcopy(base_model), queries, params)
    assert weights_digest(first) == weights_digest(second) != weights_digest(base_model)


def test_bf16_finetuning_is_mixed_precision(base_model, vocab, train_puzzles):
    """bf16 changes how the forward passes compute, so other weights than fp32's, but the
    weights themselves stay fp32 (what the export and the cache read)."""
    import torch

    queries = to_queries(train_puzzles[:32], vocab)
    tuned = {p: finetune(copy.deepcopy(base_model), queries, FinetuneParams(epochs=1, batch_size=16, precision=p))
             for p in ("bf16", "fp32")}
    assert weights_digest(tuned["bf16"]) != weights_digest(tuned["fp32"])
    assert {t.dtype for t in tuned["bf16"].state_dict().values() if t.is_floating_point()} == {torch.float32}


def test_length_sorted_chunks_embed_as_one_pass(base_model, vocab, train_puzzles):
    """Fine-tuning embeds a batch in length-sorted chunks to skip padding: each text must get
    the vector one padded pass gives it, in the batch's order."""
    import torch

    texts = [" ; ".join(q.hints) for q in to_queries(train_puzzles[:12], vocab)] + ["sun", "a much longer text than the rest"]
    base_model.eval()
    with torch.no_grad():
        chunked = _embed(base_model, texts, chunk_size=3).numpy()
        whole = _embed(base_model, texts, chunk_size=len(texts)).numpy()
    assert chunked.shape == (len(texts), whole.shape[1])
    assert np.allclose(chunked, whole, atol=1e-5)
    assert np.allclose(chunked, base_model.encode(texts, normalize_embeddings=True), atol=1e-5)


def test_lightgbm_training_is_deterministic(small_tables, small_config):
    quiet = lambda message: None  # noqa: E731
    one = fit_ranker_from_tables(small_tables, small_config, quiet).booster.model_to_string()
    two = fit_ranker_from_tables(small_tables, small_config, quiet).booster.model_to_string()
    assert one == two


def test_boosters_fitted_side_by_side_are_the_ones_fitted_one_after_another(small_tables, small_config):
    """Each booster runs on one thread, `num_threads` of them at once: the same trees, the same
    held-out scores and CV choices as fitting them one at a time."""
    from dataclasses import replace

    quiet = lambda message: None  # noqa: E731
    side_by_side = fit_ranker_from_tables(small_tables, replace(small_config, num_threads=2), quiet)
    in_turn = fit_ranker_from_tables(small_tables, replace(small_config, num_threads=1), quiet)
    strip = lambda text: text.split("\nparameters:")[0]  # noqa: E731  (the trees, not the thread count)
    assert [strip(b.model_to_string()) for b in side_by_side.booster.boosters] == \
        [strip(b.model_to_string()) for b in in_turn.booster.boosters]
    assert side_by_side.training["train_cv"] == in_turn.training["train_cv"]
    assert [r["trees"] for r in side_by_side.training["cv"]] == [r["trees"] for r in in_turn.training["cv"]]


def _slice(source, target, rows: int, drop_answer: bool = False) -> None:
    with open(source, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = [c for c in reader.fieldnames if not (drop_answer and c == "answer")]
        kept = [r for r in reader if r["subtaskID"] == "1"][:rows]
    with open(target, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept)


@pytest.fixture(scope="module")
def cli_trained(tmp_path_factory, data_dir):
    """One `pictorank train` (no fine-tuning) on a slice of train and val, with a small lexicon
    standing in for WordNet's 75,000 words: its folder and what it printed. Shared by the tests
    of the command's model folder (each stage of a run takes tens of seconds)."""
    import contextlib
    import io
    import warnings

    from pictorank.lexicon import Lexicon, without_qualifier
    from pictorank.puzzles import load_puzzles

    root = tmp_path_factory.mktemp("cli-train")
    _slice(data_dir / "train.csv", root / "train.csv", 150)
    _slice(data_dir / "val.csv", root / "val.csv", 40)
    words = sorted({without_qualifier(w) for p in load_puzzles(root / "train.csv") for w in (*p.options, p.answer)})
    lexicon = Lexicon(tuple(words), np.linspace(2.0, 5.0, len(words)).astype(np.float32), "wordnet")
    hints = str(data_dir / "hint_descriptions.csv")
    args = ["train", "--train", str(root / "train.csv"), "--val", str(root / "val.csv"), "--out", str(root / "m"),
            "--hints", hints, "--cache-dir", str(root / "cache"), "--quiet", "--no-finetune"]
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The number of unique classes", UserWarning)  # the clue model's probe
        patch.setattr("pictorank.open_play.index.load_lexicon", lambda name: lexicon)  # the lexicon stage
        patch.setattr("pictorank.train.pipeline.load_lexicon", lambda name: lexicon)  # open play's stage
        assert main(args) == 0
    return root, printed.getvalue()


@pytest.mark.slow
def test_cli_train_writes_a_model_that_evaluate_uses(cli_trained, data_dir, capsys, monkeypatch):
    root, out = cli_trained
    hints = str(data_dir / "hint_descriptions.csv")
    common = ["--hints", hints, "--cache-dir", str(root / "cache"), "--quiet"]
    assert "learned position weights" in out and "train-CV" in out and "held-out val (scored once) score" in out
    metadata = json.loads((root / "m" / "metadata.json").read_text())
    assert len(metadata["training_files"]["train"]["sha256"]) == 64
    assert {"overall", "by_subtask"} <= set(metadata["held_out_report"])
    assert {"hits@1", "hits@1_se", "score", "mrr", "per_fold"} <= set(metadata["train_cv"])
    assert main(["evaluate", "--input", str(root / "val.csv"), "--model", str(root / "m"), "--json"] + common) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "learned"
    _a_service_of_the_model_finds_its_clue_model(root, hints, monkeypatch)


def test_no_lexicon_trains_without_the_lexicon_and_open_play(monkeypatch, data_dir, tmp_path):
    """--no-lexicon asks the pipeline for no lexicon stage (and so no open play of its own)."""
    asked = {}

    class Recorded(Exception):
        """Stops the command once the pipeline is called: what it was asked is all this checks."""

    def record(files, out_dir, config, encoder, settings, log, force=False, lexicon=True):
        asked["lexicon"] = lexicon
        raise Recorded

    monkeypatch.setattr("pictorank.cli.train_model", record)
    args = ["train", "--train", str(data_dir / "train.csv"), "--out", str(tmp_path / "m"),
            "--hints", str(data_dir / "hint_descriptions.csv"), "--no-cache", "--quiet"]
    with pytest.raises(Recorded):
        main([*args, "--no-lexicon"])
    assert asked == {"lexicon": False}
    with pytest.raises(Recorded):
        main(args)
    assert asked == {"lexicon": True}


def _a_service_of_the_model_finds_its_clue_model(tmp_path, hints: str, monkeypatch) -> None:
    """`pictorank train` left in the model's folder the clue model a service of the new model asks
    for (fitted with the model's own ONNX base encoder), so a service does not fit one, even with a
    cache folder of its own (a container that mounts the model)."""
    from pictorank.api.clues import build_clue_giver
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings
    from pictorank.encoders import Encoder
    from pictorank.suggest.model import ClueModel

    elsewhere = tmp_path / "another-machine-cache"
    settings = Settings(model_dir=tmp_path / "m", hints=hints, suggest_train=tmp_path / "train.csv",
                        vocabulary_files=[tmp_path / "val.csv"], cache_dir=elsewhere)
    service = build_service(settings, base=Encoder(cache_dir=elsewhere))
    assert service.encoders.base.model_id.endswith("+onnx2-int8")  # the model's own export, not PyTorch

    def refuse(*args, **kwargs):
        raise AssertionError("the service fitted the clue model: train did not leave it in the model folder")

    monkeypatch.setattr(ClueModel, "fit", refuse)
    giver = build_clue_giver(settings, service)
    assert giver.error is None and giver.suggester is not None
    assert giver.suggester.model.encoder.model_id == service.encoders.base.model_id
    assert not (elsewhere / "suggest").exists()  # read from the model folder, not fitted into this cache


def test_cli_train_refuses_a_file_without_answers(tmp_path, data_dir, capsys):
    _slice(data_dir / "train.csv", tmp_path / "train.csv", 20)
    _slice(data_dir / "val.csv", tmp_path / "val.csv", 20, drop_answer=True)
    args = ["train", "--train", str(tmp_path / "train.csv"), "--val", str(tmp_path / "val.csv"),
            "--hints", str(data_dir / "hint_descriptions.csv"), "--out", str(tmp_path / "m"), "--no-cache", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "val.csv" in err and "answer" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_the_bag_is_one_booster_per_seed_each_on_a_share_of_the_columns(small_tables, small_config):
    """`bag` boosters with seeds seed, seed + 1, ...; each tree reads sqrt(columns) of them."""
    from pictorank.train.lambdamart import column_share

    ranker = fit_ranker_from_tables(small_tables, small_config, lambda message: None)
    columns = len(ranker.feature_names)
    assert len(ranker.booster) == small_config.bag == len(ranker.training["trees"])
    params = [b.params for b in ranker.booster.boosters]
    assert [p["seed"] for p in params] == [small_config.seed + i for i in range(small_config.bag)]
    assert all(p["feature_fraction"] == pytest.approx(columns ** 0.5 / columns) for p in params)
    assert column_share(TrainConfig(colsample_bytree=0.5), columns) == 0.5


@pytest.mark.parametrize("change", [{"colsample_bytree": 0.0}, {"colsample_bytree": "log2"}, {"bag": 0}])
def test_impossible_bag_settings_are_refused(small_tables, small_config, change):
    from dataclasses import replace

    from pictorank.errors import UsageError

    with pytest.raises(UsageError, match="colsample_bytree|bag must"):
        fit_ranker_from_tables(small_tables, replace(small_config, **change), lambda message: None)


@pytest.mark.slow
def test_cli_train_fits_open_plays_ranker_beside_the_lexicon(cli_trained, data_dir):
    """With its lexicon, `pictorank train` also fits open play's ranker, which the model's service
    then uses for clues without options."""
    from pictorank.api.service import Clue, build_service
    from pictorank.api.settings import Settings
    from pictorank.open_play import OpenPlayRanker

    root, _ = cli_trained
    assert (root / "m" / "lexicon.json").is_file() and (root / "m" / "open_play" / "ranker.json").is_file()
    service = build_service(Settings(model_dir=root / "m", hints=str(data_dir / "hint_descriptions.csv"),
                                     vocabulary_files=[root / "val.csv"], cache_dir=root / "cache"))
    assert isinstance(service.open_ranker, OpenPlayRanker)
    assert service.open_ranker.training["train_cv"]["clues"] > 0
    [ranking] = service.rank([Clue(("animal", "water"), explain=5)])  # open play's explanations differ by guess
    assert len(ranking.explanations) == 5 and len({e.summary for e in ranking.explanations}) > 1


def test_a_later_stage_that_fails_is_logged_and_the_model_stands():
    """The lexicon, open play and the clue-giver add to a folder that already serves: a failure in
    one is one logged line with its stage's name, never a failed train; the ranker's is raised."""
    from pictorank.errors import ModelError, UsageError
    from pictorank.train.pipeline import Stages

    logged: list[str] = []
    stages = Stages(logged.append)
    with stages.stage("open play", optional=True):
        raise UsageError("no train clue has its answer in the lexicon")
    with stages.stage("clue-giver", optional=True):
        raise ModelError("too few training clues to learn from (4)")
    assert logged == ["== open play: not prepared for this model: no train clue has its answer in the lexicon",
                      "== clue-giver: not prepared for this model: too few training clues to learn from (4)"]
    assert set(stages.seconds) == {"open play", "clue-giver"}
    with pytest.raises(UsageError):
        with stages.stage("ranker"):
            raise UsageError("training needs an answer in every row")


def test_each_stage_records_the_runs_peak_memory_as_it_ends():
    """stages.json's peak tells which stage set the run's peak: a stage that holds 300 MB at once
    raises it by about that much, and the stage after it, holding little, does not lower it. In a
    process of its own, started while this one holds 400 MB more: the peak is the command's own,
    not the memory of the process it was started from (which getrusage's maxrss carries over)."""
    import subprocess
    import sys

    ballast = np.ones(400 * 2**20 // 8)  # written, so resident in this process when it starts the other

    script = """
import json
import numpy as np
from pictorank.train.pipeline import Stages

logged = []
stages = Stages(logged.append)
with stages.stage("small"):
    pass
with stages.stage("big"):
    held = np.ones(300 * 2**20 // 8)  # written, so resident
    assert held.sum() > 0
    del held
with stages.stage("after"):
    pass
print(json.dumps({"peak_mb": stages.peak_mb, "seconds": stages.seconds, "logged": logged}))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert ballast.sum() > 0
    result = json.loads(run.stdout)
    peak = result["peak_mb"]
    assert peak["small"] < 400
    assert peak["big"] >= peak["small"] + 250
    assert peak["after"] == peak["big"]
    assert result["logged"][1] == (f"== big: done in {result['seconds']['big']:.0f} s "
                                   f"(the run's peak memory so far {peak['big']} MB)")



def test_the_lexicon_is_embedded_behind_into_the_cache_the_lexicon_stage_reads(tmp_path, monkeypatch):
    """`embedding_behind` leaves the fine-tuned encoder's vectors of the lexicon in the cache by the
    time its body ends (the lexicon stage then reads them back: the same bytes as embedding them
    there); in the base space, without a cache, or when the encoders cannot be read, it embeds
    nothing and the body still runs."""
    from helpers import WordHashModel
    from pictorank.encoders import Encoder, Encoders
    from pictorank.errors import ModelError
    from pictorank.lexicon import Lexicon
    from pictorank.lexicon import store
    from pictorank.settings import CommonSettings
    from pictorank.train import pipeline

    words = Lexicon(("apple", "river bank", "sun"), np.full(3, 3.0, np.float32), "wordnet")
    asked: list[int | None] = []

    def encoders(model_dir, base, runtime, threads=None):
        asked.append(threads)
        return Encoders(base, Encoder(model=WordHashModel(), model_id="stub-ft", cache_dir=base.cache_dir))

    monkeypatch.setattr(pipeline, "load_encoders", encoders)
    logged: list[str] = []
    settings = CommonSettings(cache_dir=tmp_path / "cache")
    ran = []
    with pipeline.embedding_behind(tmp_path, settings, words, "ft", logged.append):
        ran.append("body")
    assert ran == ["body"] and asked == [1]  # one onnxruntime thread: the body has the other core
    entries = sorted((tmp_path / "cache" / store.CACHE_FOLDER).glob("*.npz"))
    assert len(entries) == 1 and any("beside open play" in line for line in logged)
    fresh = store.embedded(Encoder(model=WordHashModel(), model_id="stub-ft"), words.words)  # no cache: embedded now
    read = store.embedded(Encoder(model=WordHashModel(), model_id="stub-ft", cache_dir=tmp_path / "cache"), words.words)
    assert np.array_equal(read.codes, fresh.codes) and np.array_equal(read.scales, fresh.scales)

    for space, cache in (("base", tmp_path / "other"), ("ft", None)):
        with pipeline.embedding_behind(tmp_path, settings.model_copy(update={"cache_dir": cache}), words, space,
                                       logged.append):
            ran.append(space)
    assert ran == ["body", "base", "ft"] and asked == [1] and not (tmp_path / "other").exists()

    def unreadable(*args, **kwargs):
        raise ModelError("model.onnx: corrupt")

    monkeypatch.setattr(pipeline, "load_encoders", unreadable)
    with pipeline.embedding_behind(tmp_path, CommonSettings(cache_dir=tmp_path / "third"), words, "ft", logged.append):
        ran.append("after a failure")
    assert ran[-1] == "after a failure" and "not done (model.onnx: corrupt)" in logged[-1]
