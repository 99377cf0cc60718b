"""The HTTP service's fixtures: one service over the session's real encoder, one app, one client."""

from __future__ import annotations

import pytest

from helpers import DATA


@pytest.fixture(scope="session")
def api_service(encoder):
    """The HTTP service's ranking core over the session encoder, built once and self-tested.

    The open-vocabulary index holds val's words only, to keep start-up short in tests.
    """
    from pictorank.api.service import build_service
    from pictorank.api.settings import Settings

    service = build_service(Settings(vocabulary_files=[DATA / "val.csv"]), encoder=encoder)
    service.self_test()
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
