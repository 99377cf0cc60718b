"""Training features read through the encoders the model will be served with.

A saved model runs its encoders as ONNX exports, int8 in part (pictorank.ranker.runtime): their
vectors differ a little from PyTorch's, and LightGBM learns how much to trust
each column from the values it was trained on. Trained on PyTorch's vectors and served the
exports', it meets slightly different inputs than it learned from: on Bliss val that cost
Hits@1 with the int8 feed-forward export of the fine-tuned encoder. So when the
model will be exported (`TrainConfig.quantization` set), every encoder that makes training
features, the fold encoders included, is exported the same way first and the features are
computed through the export. Exports are kept under `<cache_dir>/onnx/` (a few seconds each to
make), beside the fine-tuned weights they come from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pictorank.encoder import Encoder
from pictorank.onnx_encoder import OnnxSentenceEncoder, cached_export
from pictorank.ranker.runtime import runtime_model_id, space_quantization


def served_encoder(model: Any, model_id: str, space: str, quantization: str | None,
                   cache_dir: Path | None) -> Encoder:
    """An Encoder over `model` as the saved model will run it: its ONNX export at the space's
    quantisation, or `model` itself when the model will not be exported."""
    if quantization is None:
        return Encoder(model=model, model_id=model_id, cache_dir=cache_dir)
    wanted = space_quantization(quantization, space)
    folder = cached_export(lambda: model, f"{model_id}+{wanted}", wanted, cache_dir)
    exported = OnnxSentenceEncoder(folder, verify=False)
    return Encoder(model=exported, model_id=runtime_model_id(model_id, wanted), cache_dir=cache_dir)
