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


def test_a_child_that_cannot_fit_says_so_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    """A serving install (the image) has no torch to fit with: the child says why in one line and
    exits 2, not with a traceback; the service then says it too (/suggest answers 503)."""
    import pictorank.api.clues as clues
    from pictorank.errors import MissingExtraError

    def no_torch(*args, **kwargs):
        raise MissingExtraError("fitting the clue-giver's main-idea tower", "torch")

    monkeypatch.setattr(clues, "fit_into_cache", no_torch)
    with pytest.raises(SystemExit) as ended:
        clues._fit_and_exit(None, tmp_path / "train.csv", Settings(cache_dir=tmp_path), "any")
    err = capsys.readouterr().err
    assert ended.value.code == 2 and err.count("\n") == 1 and "main-idea tower" in err
