"""Training features read through the encoders the model will be served with.

A saved model runs its encoders as ONNX exports, int8 in part (pictorank.ranker.runtime): their
vectors differ a little from PyTorch's (cosine about 0.99), and LightGBM learns how much to trust
each column from the values it was trained on. Trained on PyTorch's vectors and served the
exports', it meets slightly different inputs than it learned from: on Bliss val that cost about
one point of Hits@1 with the int8 feed-forward export of the fine-tuned encoder. So when the
model will be exported (`TrainConfig.quantization` set), every encoder that makes training
features, the fold encoders included, is exported the same way first and the features are
computed through the export. Exports are kept under `<cache_dir>/onnx/` (a few seconds each to
make), beside the fine-tuned weights they come from.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pictorank.encoder import Encoder
from pictorank.errors import ModelError
from pictorank.onnx_encoder import OnnxSentenceEncoder, export_onnx, made_by_installed_exporters, read_export_config
from pictorank.ranker.runtime import runtime_model_id, space_quantization


def served_encoder(model: Any, model_id: str, space: str, quantization: str | None,
                   cache_dir: Path | None) -> Encoder:
    """An Encoder over `model` as the saved model will run it: its ONNX export at the space's
    quantisation, or `model` itself when the model will not be exported."""
    if quantization is None:
        return Encoder(model=model, model_id=model_id, cache_dir=cache_dir)
    wanted = space_quantization(quantization, space)
    exported = OnnxSentenceEncoder(_export(model, f"{model_id}+{wanted}", wanted, cache_dir), verify=False)
    return Encoder(model=exported, model_id=runtime_model_id(model_id, wanted), cache_dir=cache_dir)


def _export(model: Any, name: str, quantization: str, cache_dir: Path | None) -> Path:
    """The export folder of `model`: reused from the cache when it is there and sound."""
    root = Path(cache_dir) / "onnx" if cache_dir is not None else _scratch()
    folder = root / name
    if folder.is_dir():
        if _reusable(folder):
            return folder
        shutil.rmtree(folder, ignore_errors=True)  # made by other library versions, or damaged
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    export_onnx(model, staging, quantization)
    try:
        os.replace(staging, folder)
    except OSError:  # another training made it meanwhile: use theirs
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _reusable(folder: Path) -> bool:
    """A cached export is sound and was made by the exporters installed now (a fresh export
    would give the same graph)."""
    try:
        return made_by_installed_exporters(read_export_config(folder))
    except ModelError:
        return False


@functools.cache
def _scratch() -> Path:
    """Where exports go without a cache directory: a temporary folder removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="pictorank-exports-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
