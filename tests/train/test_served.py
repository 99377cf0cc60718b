"""Training features through the encoders the model will be served with (pictorank.encoders.runtime)."""

from __future__ import annotations

import json
from importlib.metadata import version

import numpy as np

from pictorank.encoders import Quantization
from pictorank.encoders.onnx import OnnxSentenceEncoder
from pictorank.encoders.runtime import served_encoder


def test_without_an_export_the_model_itself_encodes(base_model):
    encoder = served_encoder(base_model, "base-id", "base", None, None)
    assert encoder.model is base_model and encoder.model_id == "base-id"


def test_the_export_is_made_once_per_cache_and_named_apart_from_pytorch(base_model, tmp_path):
    first = served_encoder(base_model, "base-id", "ft", Quantization.parse("base=fp32,ft=int8-ffn"), tmp_path)
    assert isinstance(first.model, OnnxSentenceEncoder) and first.model.quantization == "int8-ffn"
    assert first.model_id == "base-id+onnx2-int8-ffn"  # its vectors never mix with PyTorch's in the cache
    made = (first.model.directory / "model.onnx").stat().st_mtime_ns
    again = served_encoder(base_model, "base-id", "ft", Quantization.parse("base=fp32,ft=int8-ffn"), tmp_path)
    assert again.model.directory == first.model.directory
    assert (again.model.directory / "model.onnx").stat().st_mtime_ns == made  # reused, not exported again
    texts = ["a red flower", "a boat"]
    expected = base_model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert (first.encode(texts) * expected).sum(axis=1).min() > 0.95


def test_a_damaged_cached_export_is_made_again(base_model, tmp_path):
    first = served_encoder(base_model, "base-id", "base", Quantization.parse("fp32"), tmp_path)
    (first.model.directory / "model.onnx").write_bytes(b"not a graph")
    again = served_encoder(base_model, "base-id", "base", Quantization.parse("fp32"), tmp_path)
    texts = ["water"]
    np.testing.assert_allclose(again.encode(texts), base_model.encode(texts, normalize_embeddings=True), atol=2e-5)


def test_a_cached_export_made_by_another_torch_is_made_again(base_model, tmp_path):
    first = served_encoder(base_model, "base-id", "base", Quantization.parse("fp32"), tmp_path)
    config_file = first.model.directory / "onnx.json"
    config = json.loads(config_file.read_text())
    config["versions"]["torch"] = "1.0.0"
    config_file.write_text(json.dumps(config))
    again = served_encoder(base_model, "base-id", "base", Quantization.parse("fp32"), tmp_path)
    assert json.loads((again.model.directory / "onnx.json").read_text())["versions"]["torch"] == version("torch")
