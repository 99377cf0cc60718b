"""Which runtime an encoder runs on, chosen in one place.

A sentence encoder runs either on PyTorch (sentence-transformers, what training needs) or as an
ONNX export run by onnxruntime (pictorank.encoders.onnx: no torch import, and int8 where the
accuracy allows). The entry points choose once, from the settings, and hand the resulting
`Encoders` down to the ranker, the vocabulary index and the clue-giver: nothing below them reads
the environment or asks a ranker for its encoders back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pictorank.encoders.memo import Encoder, base_model_version
from pictorank.encoders.onnx import OnnxSentenceEncoder, cached_export
from pictorank.encoders.quantization import Quantization
from pictorank.errors import ModelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Encoders:
    """The encoders one served model reads embeddings from.

    base : the base model's encoder: the unlearned methods' only one, the learned model's `base`
        space, and the space of the open-vocabulary index and of the clue-giver's fit.
    finetuned : the learned model's fine-tuned encoder (its `ft` space; the clue-giver's reader),
        or None.
    shipped : True when both are the exports a model folder ships, whose embedded vocabulary
        (vocabulary.npz) is then theirs to preload.
    """

    base: Encoder
    finetuned: Encoder | None = None
    shipped: bool = False

    def all(self) -> list[Encoder]:
        """Each distinct encoder once (a batch job flushes their disk caches)."""
        return [self.base] + ([self.finetuned] if self.finetuned is not None and self.finetuned is not self.base else [])


def runtime_model_id(model_id: str, quantization: str, export_format: int = 1) -> str:
    """The disk-cache id of an exported encoder: its vectors differ from PyTorch's (int8) and
    from another export format's (pictorank.encoders.onnx.EXPORT_FORMAT), so none of them ever
    share cached vectors."""
    runtime = "onnx" if export_format == 1 else f"onnx{export_format}"
    return f"{model_id}+{runtime}-{quantization}"


def exported_encoder(folder: Path, model_id: str, cache_dir: Path | None, max_cached: int | None,
                     threads: int | None = None) -> Encoder:
    """An Encoder over the ONNX export in `folder` (whose files the caller has checked)."""
    model = OnnxSentenceEncoder(folder, threads=threads, verify=False)
    return Encoder(model=model, model_id=runtime_model_id(model_id, model.quantization, model.export_format),
                   cache_dir=cache_dir, max_cached=max_cached)


def method_encoder(encoder: Encoder, runtime: str = "onnx", threads: int | None = None) -> Encoder:
    """The base encoder an unlearned method (seed, cosine) is served on: the base model's fp32
    ONNX export, kept in `<cache_dir>/onnx/`. Its vectors equal PyTorch's up to float rounding
    (the same rankings), it encodes faster, and once the export is cached the process never
    imports torch. The first start with an empty cache pays the export once.

    `encoder` itself when there is no cache folder to keep the export in (an export per process
    would cost more than it saves), when it is not the plain base model (a test's stub, an export
    already), with runtime `torch`, or when the export fails (logged: a speed-up must not stop a
    service).
    """
    if encoder.cache_dir is None or encoder.model_id != base_model_version() or runtime == "torch":
        return encoder
    try:
        folder = cached_export(lambda: encoder.model, f"{encoder.model_id}+fp32", "fp32", encoder.cache_dir)
        return exported_encoder(folder, encoder.model_id, encoder.cache_dir, encoder.max_cached, threads)
    except (ModelError, OSError, RuntimeError, ValueError) as exc:
        log.warning("serving on PyTorch: the base model's ONNX export failed (%s: %s)", type(exc).__name__, exc)
        return encoder


def served_encoder(model: Any, model_id: str, space: str, quantization: Quantization | None,
                   cache_dir: Path | None) -> Encoder:
    """An Encoder over `model` as a saved model will run it: its ONNX export at the space's
    quantisation, or `model` itself when the model will not be exported.

    Training computes its features through this, so that LightGBM learns from the very vectors
    the saved model will be served with (an int8 export's differ a little from PyTorch's).
    Exports are kept under `<cache_dir>/onnx/`, beside the fine-tuned weights they come from.
    """
    if quantization is None:
        return Encoder(model=model, model_id=model_id, cache_dir=cache_dir)
    wanted = quantization.of(space)
    folder = cached_export(lambda: model, f"{model_id}+{wanted}", wanted, cache_dir)
    return exported_encoder(folder, model_id, cache_dir, None)
