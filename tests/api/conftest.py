"""The HTTP service's fixtures. Unit tests of the HTTP contract run on `api_service`, a cosine
service over a stand-in encoder (tests/helpers.WordHashModel: texts that share words are close),
with its app and client; they load no model. The end-to-end tests run on `real_service` (the real
base model, marked slow by the session's conftest) and its `clue_giver`, fitted once.

An app built without a clue-giver builds one in the background; in the tests, unless a test asks
for the `clue_giver` fixture or names its own training puzzles, that build finds none
(tests/conftest.py) and turns /suggest off at once, so no test waits for, or competes with, a fit
it does not test.
"""

from __future__ import annotations

import pytest

from helpers import DATA, WordHashModel

CLUE_ROWS = 350  # train rows the session's clue-giver learns from


@pytest.fixture(scope="session")
def api_service():
    """A cosine service over the stand-in encoder, built once and self-tested: the open-vocabulary
    index holds val's words."""
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings
    from pictorank.encoders import Encoder

    stub = Encoder(model=WordHashModel(), model_id="word-hash-api")
    service = build_service(Settings(vocabulary_files=[DATA / "val.csv"]), base=stub)
    service.self_test()
    return service


@pytest.fixture(scope="session")
def real_service(base_model):
    """The service over the real base model, built once and self-tested.

    Built as `pictorank serve` builds a cosine service (the base model's fp32 ONNX export, kept in
    the settings' cache folder), so the clue model fitted below is the one a real server of the
    same data reads back from that cache. The open-vocabulary index holds val's words only, to
    keep start-up short in tests.
    """
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings
    from pictorank.encoders import Encoder, base_model_version

    settings = Settings(vocabulary_files=[DATA / "val.csv"])
    base = Encoder(model=base_model, model_id=base_model_version(), cache_dir=settings.cache_dir)
    service = build_service(settings, base=base)
    service.self_test()
    return service


@pytest.fixture(scope="session")
def clue_settings(tmp_path_factory: pytest.TempPathFactory):
    """The service's settings with training puzzles for the clue-giver: the first CLUE_ROWS rows of
    the bundled train.csv, enough for every behaviour the tests check at a fraction of the fit."""
    from pictorank.api.settings import Settings

    lines = (DATA / "train.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    train = tmp_path_factory.mktemp("clue-giver") / "train.csv"
    train.write_text("".join(lines[: CLUE_ROWS + 1]), encoding="utf-8")
    return Settings(suggest_train=train)


@pytest.fixture(scope="session")
def clue_giver(real_service, clue_settings):
    """The clue-giver over the real service, fitted once (or read back from the cache)."""
    from pictorank.api.clues import build_clue_giver

    giver = build_clue_giver(clue_settings, real_service)
    assert giver.error is None, giver.error
    return giver


@pytest.fixture(scope="session")
def api_app(api_service):
    from pictorank.api.app import create_app
    from pictorank.api.settings import Settings

    return create_app(Settings(), service=api_service)


@pytest.fixture(scope="session")
def real_client(real_service):
    """A client of an app over the real service (no clue-giver)."""
    from fastapi.testclient import TestClient

    from pictorank.api.app import create_app
    from pictorank.api.settings import Settings

    with TestClient(create_app(Settings(), service=real_service)) as client:
        yield client


@pytest.fixture(scope="session")
def api_client(api_app):
    from fastapi.testclient import TestClient

    with TestClient(api_app) as client:
        yield client
