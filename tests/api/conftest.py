"""The HTTP service's fixtures: one service over the session's real encoder, one app, one client."""

from __future__ import annotations

import pytest

from helpers import DATA


@pytest.fixture(scope="session")
def api_service(encoder):
    """The HTTP service's ranking core over the session encoder, built once and self-tested.

    The open-vocabulary index holds val's words only, to keep start-up short in tests.

    The clue-giver's model is fitted here, once, into the cache folder every app over this service
    reads: an app started without `clues` builds its clue-giver in the background, and before
    this, each such app fitted the same model at once (about two minutes each, main-idea tower
    included), while the tests ran beside them.
    """
    from pictorank.api.clues import build_clue_giver
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings

    service = build_service(Settings(vocabulary_files=[DATA / "val.csv"]), base=encoder)
    service.self_test()
    giver = build_clue_giver(Settings(), service)
    assert giver.error is None, giver.error
    return service


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
