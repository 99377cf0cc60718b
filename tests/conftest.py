"""Shared fixtures. The real model loads once per session: importing torch alone takes seconds.

Every test that needs the real model is marked `slow` (automatically when it uses the
`base_model` fixture, directly or through another fixture; by hand for tests that start a
process that loads it), so `pytest -m "not slow"` runs the rest in seconds. A test that is not
marked slow and still tries to load the model fails, which keeps the marker honest.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pictorank.settings import use_offline_environment

use_offline_environment()  # before anything imports torch (see its docstring)

# Under pytest-xdist every core runs a worker of its own, so a worker's numeric libraries run on one
# thread each (PyTorch's OpenMP, onnxruntime): two threads a worker oversubscribed the cores and
# made the suite slower. Set before anything imports torch; values the user set are kept.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("PICTORANK_ONNX_THREADS", "1")

from helpers import DATA, NO_CLUE_TRAINING, SMALL_STOP_ROWS, SMALL_TRAIN_ROWS

# A service's clue-giver learns from PICTORANK_SUGGEST_TRAIN (the bundled train.csv by default) in
# the background after start-up. In the tests it names no file, before any fixture makes an app:
# an app or server of a test that does not exercise the clue-giver turns /suggest off at once
# instead of fitting beside the other tests. A test that wants one names its training puzzles.
os.environ["PICTORANK_SUGGEST_TRAIN"] = str(NO_CLUE_TRAINING)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test whose fixtures include the real model."""
    for item in items:
        if "base_model" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    _give_each_test_its_own_id(items)
    _check_shared_fixture_groups(items)


@pytest.fixture(autouse=True)
def _fast_tests_never_load_the_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked `slow` that loads a model fails here, naming the marker it lacks."""
    if request.node.get_closest_marker("slow"):
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{request.node.nodeid} loads the real model: mark it @pytest.mark.slow")

    import pictorank.encoders.memo

    # Both of the encoder module's loaders (load_base_model, load_model_dir) call this first.
    monkeypatch.setattr(pictorank.encoders.memo, "use_offline_environment", refuse)


@pytest.fixture(scope="session", autouse=True)
def _no_default_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The default model folder (what `serve` prefers and the clue-giver's command line reads
    with) is made absent, as on a fresh clone: a developer's trained models/default must not
    change what the tests see. A test that wants one points PICTORANK_DEFAULT_MODEL_DIR at it.

    Session-scoped so that it holds before any module's fixture starts a server: a server that
    found a trained default model would fit a clue model of its own in the background."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PICTORANK_DEFAULT_MODEL_DIR", str(tmp_path_factory.getbasetemp() / "no-default-model"))
        yield


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def vocab():
    from pictorank.puzzles import load_hints

    return load_hints(DATA / "hint_descriptions.csv")


@pytest.fixture(scope="session")
def val_puzzles(vocab):
    from pictorank.puzzles import load_puzzles

    return load_puzzles(DATA / "val.csv", vocab)


@pytest.fixture(scope="session")
def train_puzzles(vocab):
    from pictorank.puzzles import load_puzzles

    return load_puzzles(DATA / "train.csv", vocab)


@pytest.fixture(scope="session")
def base_model():
    """The real all-MiniLM-L6-v2, loaded once for the whole session."""
    from pictorank.encoders import load_base_model

    return load_base_model()


@pytest.fixture(scope="session")
def encoder(base_model):
    """A shared in-memory-cached encoder over the session's model."""
    from pictorank.encoders import Encoder, base_model_version

    return Encoder(model=base_model, model_id=base_model_version())


# -- learned ranker (tests/test_learned.py, test_transfer.py) ---------------------------------


@pytest.fixture(scope="session")
def small_config():
    """A training recipe that runs in seconds: no fine-tuning, 2 folds, one LightGBM setting (a bag
    of 3 boosters), no ONNX export on save (tests/test_onnx_encoder.py saves with one; the others
    compare PyTorch scores exactly)."""
    from pictorank.train import TrainConfig

    grid = ({"num_leaves": 7, "min_child_samples": 20, "learning_rate": 0.1},)
    return TrainConfig(finetune=False, folds=2, cv_folds=2, grid=grid, n_estimators=150, early_stopping_rounds=20,
                       quantization=None, bag=3)


@pytest.fixture(scope="session")
def small_tables(base_model, vocab, train_puzzles, small_config):
    """OOF feature tables of a train slice (the expensive part, built once per session), over an
    encoder of their own: PyTorch's vectors move in the last bits with their batch, so over the
    session's shared encoder the model depended on what earlier tests had encoded."""
    from pictorank.encoders import Encoder, base_model_version
    from pictorank.puzzles import to_queries
    from pictorank.train import build_tables

    train = to_queries(train_puzzles[:SMALL_TRAIN_ROWS], vocab)
    own = Encoder(model=base_model, model_id=base_model_version())
    return build_tables(train, own, small_config, log=lambda message: None)


@pytest.fixture(scope="session")
def small_learned(small_tables, small_config):
    """A LearnedRanker trained on the train slice; it never saw val."""
    from pictorank.train import fit_ranker_from_tables

    return fit_ranker_from_tables(small_tables, small_config, log=lambda message: None)


@pytest.fixture(scope="session")
def saved_int8(small_learned, vocab, val_puzzles, tmp_path_factory) -> Path:
    """The session's learned model saved as `pictorank train` saves one, with its ONNX exports
    (int8) and the shipped vocabulary."""
    import copy

    from pictorank.encoders import Quantization

    ranker = copy.copy(small_learned)
    ranker.quantization = Quantization.parse("int8")
    directory = tmp_path_factory.mktemp("learned-onnx") / "model"
    options = sorted({o for p in val_puzzles[:SMALL_STOP_ROWS] for o in p.options})
    ranker.save(directory, vocabulary=(sorted(vocab.descriptions.values()), options))
    return directory


# -- running on several cores (pytest-xdist) --------------------------------------------------
#
# `make test` spreads the suite over every core with pytest-xdist. Each worker is its own process
# with its own session fixtures, so a costly fixture used by modules on two workers is built
# twice. The modules sharing one are therefore sent to one worker as a group; every other module
# is a group of its own. (pytest-xdist's `--dist loadgroup` marks do not group under pytest 9,
# hence a scheduler of our own.) `pytest_collection_modifyitems` below refuses a module that uses
# a shared fixture without being listed with it, so the list cannot silently go stale.

SHARED_FIXTURE_GROUPS: dict[str, tuple[str, frozenset[str]]] = {
    "clue-giver": ("clue_giver", frozenset({
        "tests/api/test_api_schemathesis.py",
        "tests/api/test_clue_rounds_api.py",
        "tests/api/test_game_browser.py",
        "tests/api/test_suggest_api.py",
    })),
    "small-learned": ("small_tables", frozenset({
        "tests/api/test_rank_explain_api.py",
        "tests/api/test_serve_default_model.py",
        "tests/ranker/test_fallback.py",
        "tests/ranker/test_learned.py",
        "tests/ranker/test_learned_explain_calibration.py",
        "tests/test_onnx_encoder.py",
        "tests/test_serving_install.py",
        "tests/train/test_open_play.py",
        "tests/train/test_pipeline.py",
        "tests/train/test_transfer.py",
    })),
}


def _give_each_test_its_own_id(items: list[pytest.Item]) -> None:
    """schemathesis names all its generated tests (one per operation) by one node id; pytest-xdist
    sends tests to workers by node id, so all but one operation would silently go untested. Each
    such test gets its operation appended, as pytest's own parametrize does."""
    seen = collections.Counter(item.nodeid for item in items)
    for item in items:
        if seen[item.nodeid] > 1 and "[" in item.name and item.id.params is None:
            # pytest 9 keeps a node id as a structured NodeId, with no public setter.
            item._id = item.id.with_params(item.name[item.name.index("[") + 1 : -1])
    repeated = [nodeid for nodeid, count in collections.Counter(item.nodeid for item in items).items() if count > 1]
    if repeated:
        raise pytest.UsageError(f"tests share a node id, so pytest-xdist would run one of them: {repeated[0]}")


def _group_of(module: str) -> str:
    """The scheduling group of a test module: its shared fixture's group, or the module itself."""
    for group, (_, modules) in SHARED_FIXTURE_GROUPS.items():
        if module in modules:
            return group
    return module


def _check_shared_fixture_groups(items: list[pytest.Item]) -> None:
    """A module that uses a shared fixture must be in that fixture's group (else two workers
    would each build it, and the suite silently slows down)."""
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        for group, (fixture, modules) in SHARED_FIXTURE_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()) and module not in modules:
                raise pytest.UsageError(
                    f"{module} uses the session fixture {fixture!r}: add it to the {group!r} group "
                    "in tests/conftest.py SHARED_FIXTURE_GROUPS")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Load-balance by group (see SHARED_FIXTURE_GROUPS): a group runs on one worker, in order."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group_of(nodeid.split("::", 1)[0])

    return SharedFixtureScheduling(config, log)
