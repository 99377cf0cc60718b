"""`pictorank serve` as a real uvicorn process on a free 127.0.0.1 port: start, wait for /ready,
rank, stop. Start-up problems are one-line errors with exit code 2 before uvicorn starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import DATA, PICTORANK, free_port, serving, stop_process

from pictorank.artifacts import library_versions



@pytest.mark.slow  # the server process loads the real model
def test_serve_answers_over_real_http(tmp_path: Path) -> None:
    # a small open vocabulary keeps start-up short; the default is train+val+test
    env = {"PICTORANK_VOCABULARY_FILES": json.dumps([str(DATA / "val.csv")])}
    with serving(["--method", "cosine"], tmp_path / "server.log", env) as server:
        base = server.url
        ranked = httpx.post(f"{base}/rank", json={"hint_texts": ["flower", "sun"], "options": ["hammer", "sunflower"]})
        assert ranked.status_code == 200 and ranked.json()["ranking"] == ["sunflower", "hammer"]
        open_vocab = httpx.post(f"{base}/rank", json={"hint_texts": ["animal", "water"], "top_k": 3}).json()
        assert open_vocab["mode"] == "open_vocabulary" and len(open_vocab["ranking"]) == 3
        assert httpx.post(f"{base}/rank", json={"hints": [-1], "options": ["a"]}).status_code == 422
        assert 'route="/rank"' in httpx.get(f"{base}/metrics").text
    assert server.process.returncode == 0, server.tail(2000)


@pytest.mark.parametrize(
    "args,env,named",
    [
        (["--model", "no/such/model"], {}, "no/such/model"),
        (["--hints", "no/such/hints.csv"], {}, "no/such/hints.csv"),
        (["--model", "{corrupt}"], {}, "ranker.json"),
        ([], {"PICTORANK_METHOD": "bogus"}, "PICTORANK_METHOD"),
        ([], {"PICTORANK_WORD_LIST": "{binary}"}, "word list"),
        ([], {"PICTORANK_CACHE_DIR": "{binary}"}, "PICTORANK_CACHE_DIR"),  # a file: seen only when saving, before
        ([], {"PICTORANK_CORS_ORIGINS": "not json"}, "PICTORANK_CORS_ORIGINS: not valid JSON"),
        (["--model", "{deep}"], {}, "unknown method (a list, not a name)"),
    ],
)
def test_serve_refuses_bad_settings_in_one_line(tmp_path: Path, args: list[str], env: dict, named: str) -> None:
    corrupt = tmp_path / "model"
    corrupt.mkdir()
    (corrupt / "ranker.json").write_text("{not json")
    deep = tmp_path / "deep"
    deep.mkdir()
    method = "[" * 900 + "]" * 900  # parses, then too deep to print in an error message
    (deep / "ranker.json").write_text(json.dumps({"versions": library_versions()})[:-1] + f', "method": {method}}}')
    binary = tmp_path / "words.txt"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    fill = {"{corrupt}": str(corrupt), "{binary}": str(binary), "{deep}": str(deep)}
    args = [fill.get(a, a) for a in args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **{k: fill.get(v, v) for k, v in env.items()}}
    result = subprocess.run([PICTORANK, "serve", "--port", str(free_port()), *args],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and named in result.stderr and "Traceback" not in result.stderr
