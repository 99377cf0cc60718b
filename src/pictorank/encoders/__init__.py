"""Sentence encoders: every way pictorank turns text into vectors, in one package.

- memo:         `Encoder`, embeddings memoised in memory and on disk, over any model;
- onnx:         ONNX export of a sentence-transformers model, and `OnnxSentenceEncoder` to run it;
- quantization: `Quantization`, the export precision of each of a model's encoders;
- runtime:      the choice of runtime (PyTorch or ONNX) and `Encoders`, what a served model reads;
- locked:       `LockedEncoder`, one encoder shared by a long job and short requests;
- stored:       `StoredVectors`, vectors made ahead of time for a fixed set of strings, in int8.
"""

from pictorank.encoders.locked import Cancelled, LockedEncoder
from pictorank.encoders.memo import Encoder, base_model_version, load_base_model, load_model_dir
from pictorank.encoders.onnx import OnnxSentenceEncoder, cached_export, export_onnx, read_export_config
from pictorank.encoders.quantization import DEFAULT_QUANTIZATION, Quantization
from pictorank.encoders.runtime import Encoders, exported_encoder, method_encoder, runtime_model_id, served_encoder
from pictorank.encoders.stored import StoredVectors

__all__ = [
    "DEFAULT_QUANTIZATION", "Cancelled", "Encoder", "Encoders", "LockedEncoder", "OnnxSentenceEncoder", "Quantization",
    "StoredVectors", "base_model_version", "cached_export", "export_onnx", "exported_encoder", "load_base_model",
    "load_model_dir", "method_encoder", "read_export_config", "runtime_model_id", "served_encoder",
]
