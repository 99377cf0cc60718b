"""The HTTP service's fixtures: one service over the session's real encoder, one app, one client,
and one clue-giver, fitted once for the tests that exercise it.

An app built without a clue-giver builds one in the background; here, unless a test asks for the
`clue_giver` fixture or names its own training puzzles, that build finds no training puzzles and
turns /suggest off at once (`_no_clue_giver_unless_asked`), so no test waits for, or competes
with, a fit it does not test.
"""

from __future__ import annotations

import pytest

from helpers import DATA


@pytest.fixture(autouse=True)
def _no_clue_giver_unless_asked(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Settings() in these tests name no training puzzles for the clue-giver (a missing file)."""
    monkeypatch.setenv("PICTORANK_SUGGEST_TRAIN", str(tmp_path_factory.getbasetemp() / "no-clue-giver-in-this-test.csv"))


@pytest.fixture(scope="session")
def api_service(base_model):
    """The HTTP service's ranking core over the real base model, built once and self-tested.

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
def clue_settings():
    """The service's settings with the bundled training puzzles for the clue-giver."""
    from pictorank.api.settings import Settings

    return Settings(suggest_train=DATA / "train.csv")


@pytest.fixture(scope="session")
def clue_giver(api_service, clue_settings):
    """The clue-giver over the session's service, fitted once (or read back from the cache)."""
    from pictorank.api.clues import build_clue_giver

    giver = build_clue_giver(clue_settings, api_service)
    assert giver.error is None, giver.error
    return giver


@pytest.fixture(scope="session")
def api_app(api_service):
    from pictorank.api.app import create_app
    from pictorank.api.settings import Settings

    return create_app(Settings(), service=api_service)


@pytest.fixture(scope="session")
def api_client(api_app):
    from fastapi.testclient import TestClient

    with TestClient(api_app) as client:
        yield client
