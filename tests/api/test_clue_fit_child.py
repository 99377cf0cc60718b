"""A service fits a missing or refused clue model in a child process, so that the training stack
the fit imports leaves with the child (pictorank.api.clues.fit_in_child)."""

from __future__ import annotations

import logging

import pytest

from helpers import DATA
from pictorank.api.clues import fit_in_child
from pictorank.api.settings import Settings

pytestmark = pytest.mark.slow


def test_a_child_that_would_build_another_encoder_fits_nothing_and_says_so(tmp_path, caplog) -> None:
    """The fit is made for one encoder: a child whose settings build another than the service's
    leaves the cache as it was, and the service fits the model itself."""
    settings = Settings(cache_dir=tmp_path / "cache")
    with caplog.at_level(logging.WARNING, logger="pictorank.api.clues"):
        fit_in_child(settings, None, DATA / "train.csv", "not-the-child's-encoder", None)
    assert "ended with exit code 3: fitting it here" in caplog.text
    assert not (tmp_path / "cache" / "suggest").exists()
