"""`pictorank serve` without --model/--method serves the default model directory when it exists
and loads, else the unlearned default method; its first log line and /health say which."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from helpers import DATA, serving
from pictorank.api.serve import _choose_for_workers, wants_default_model
from pictorank.api.settings import Settings



def serve_default(default_model: Path, log_path: Path) -> tuple[str, dict]:
    """Start `pictorank serve` with no model asked for; return its first log line and /health."""
    env = {"PICTORANK_DEFAULT_MODEL_DIR": str(default_model), "PICTORANK_VOCABULARY_FILES": json.dumps([str(DATA / "val.csv")])}
    with serving([], log_path, env, drop=("PICTORANK_MODEL_DIR", "PICTORANK_METHOD")) as server:
        health = httpx.get(f"{server.url}/health").json()
    return log_path.read_text().splitlines()[0], health


@pytest.mark.slow  # the server process loads the real model
def test_a_broken_default_model_falls_back_to_cosine_and_says_why(tmp_path):
    broken = tmp_path / "default"
    broken.mkdir()
    (broken / "ranker.json").write_text("{not json")
    first, health = serve_default(broken, tmp_path / "serve.log")
    assert first.startswith("INFO:     pictorank: serving cosine") and "ranker.json" in first and "did not load" in first
    assert health["model"].startswith("cosine")


@pytest.mark.slow
def test_the_default_model_is_served_when_it_loads(small_learned, tmp_path):
    default = tmp_path / "default"
    small_learned.save(default)
    first, health = serve_default(default, tmp_path / "serve.log")
    assert first.startswith("INFO:     pictorank: serving learned:default") and str(default) in first
    assert health["model"].startswith("learned:default")


def test_what_counts_as_asking_for_a_model(monkeypatch, tmp_path):
    monkeypatch.delenv("PICTORANK_METHOD", raising=False)
    monkeypatch.delenv("PICTORANK_MODEL_DIR", raising=False)
    assert wants_default_model(Settings())
    assert not wants_default_model(Settings(model_dir=tmp_path))
    monkeypatch.setenv("PICTORANK_METHOD", "cosine")  # what `--method cosine` sets
    assert not wants_default_model(Settings())


def test_workers_get_the_default_model_only_when_it_checks_out(monkeypatch, tmp_path):
    monkeypatch.delenv("PICTORANK_METHOD", raising=False)
    monkeypatch.delenv("PICTORANK_MODEL_DIR", raising=False)
    line = _choose_for_workers(Settings(default_model_dir=tmp_path / "missing", workers=2))
    assert line.startswith("serving cosine with 2 workers: the default model did not load")
    assert "PICTORANK_MODEL_DIR" not in os.environ
