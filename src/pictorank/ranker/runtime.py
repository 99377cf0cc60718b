"""What a learned model directory ships so that never-seen input is cheap, and the
runtime the unlearned methods are served on (`method_encoder`):

    onnx/base/, onnx/ft/   both encoders exported to ONNX (int8 by default), run by onnxruntime
                           without importing torch (pictorank.onnx_encoder)
    vocabulary.npz         the training vocabulary (train and val options, every hint description)
                           embedded in both spaces by those exported encoders, and each option's
                           hubness in both spaces: what a server would otherwise compute at start-up

Both are written by `LearnedRanker.save` and read by `LearnedRanker.from_config`; the model's
ranker.json names them under "runtime", and its file hashes cover them.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pictorank.config import encoder_runtime
from pictorank.encoder import Encoder, base_model_version
from pictorank.errors import ModelError
from pictorank.features import FeatureExtractor
from pictorank.features.hubness import HubnessMemo
from pictorank.onnx_encoder import OnnxSentenceEncoder, cached_export, export_onnx, read_export_config

log = logging.getLogger(__name__)

ONNX_DIR = "onnx"
VOCABULARY_FILE = "vocabulary.npz"
# int8 for the base encoder; for the fine-tuned one int8 in the feed-forward blocks only, fp32
# attention: full int8 for both drifted past the accuracy tolerance on Bliss val (against the
# unoptimised model; bench/runtime.py), this mix stays inside it and makes the fine-tuned
# encoder, the costliest part of a never-seen request, faster than fp32 (docs/experiments/speed.md).
# The fine-tuned encoder carries the most weight in the ranker.
DEFAULT_QUANTIZATION = "base=int8,ft=int8-ffn"


def space_quantization(quantization: str, space: str) -> str:
    """One space's quantisation: `quantization` is either one for both ('int8', 'fp32') or one
    per space ('base=int8,ft=fp32')."""
    if "=" not in quantization:
        return quantization
    found = dict(part.split("=", 1) for part in quantization.split(","))
    if space not in found:
        raise ModelError(f"quantization {quantization!r} names no quantisation for the {space!r} encoder")
    return found[space]


def runtime_model_id(model_id: str, quantization: str) -> str:
    """The disk-cache id of an exported encoder: its vectors differ from PyTorch's (int8), so the
    two must never share cached vectors."""
    return f"{model_id}+onnx-{quantization}"


def method_encoder(encoder: Encoder) -> Encoder:
    """The base encoder a service runs an unlearned method (seed, cosine) on: the base model's fp32
    ONNX export, kept in `<cache_dir>/onnx/`. Its vectors equal PyTorch's to float rounding (the
    same rankings), it encodes a request's new options faster, and once the export is cached the
    process never imports torch (a slow part of every start-up, and its memory). The
    first start with an empty cache pays the export once (seconds, after importing torch).

    `encoder` itself when there is no cache folder to keep the export in (an export per process
    would cost more than it saves), when it is not the plain base model (a test's stub, an export
    already), with `PICTORANK_ENCODER_RUNTIME=torch`, or when the export fails (logged: a speed-up
    must not stop a service).
    """
    if encoder.cache_dir is None or encoder.model_id != base_model_version() or encoder_runtime() == "torch":
        return encoder
    try:
        folder = cached_export(lambda: encoder.model, f"{encoder.model_id}+fp32", "fp32", encoder.cache_dir)
        model = OnnxSentenceEncoder(folder, verify=False)  # cached_export has just checked its files
    except (ModelError, OSError, RuntimeError, ValueError) as exc:
        log.warning("serving on PyTorch: the base model's ONNX export failed (%s: %s)", type(exc).__name__, exc)
        return encoder
    return Encoder(model=model, model_id=runtime_model_id(encoder.model_id, "fp32"), cache_dir=encoder.cache_dir,
                   max_cached=encoder.max_cached)


def write_runtime(staging: Path, encoders: dict[str, Encoder], quantization: str, texts: Sequence[str],
                  options: Sequence[str], extractor: FeatureExtractor) -> dict[str, Any]:
    """Export each space's encoder into `staging/onnx/<space>` and embed the shipped vocabulary
    with the exports; the "runtime" entry of ranker.json."""
    spaces: dict[str, str] = {}
    exported: dict[str, OnnxSentenceEncoder] = {}
    for space, encoder in encoders.items():
        folder = staging / ONNX_DIR / space
        model = encoder.model
        wanted = space_quantization(quantization, space)
        if isinstance(model, OnnxSentenceEncoder):  # a loaded model saved again: copy its export
            if model.quantization != wanted:
                raise ModelError(f"cannot re-save a {model.quantization} export as {wanted}")
            shutil.copytree(model.directory, folder)
        else:
            export_onnx(model, folder, wanted)
        spaces[space] = f"{ONNX_DIR}/{space}"
        exported[space] = OnnxSentenceEncoder(folder, verify=False)
    _write_vocabulary(staging / VOCABULARY_FILE, exported, texts, options, extractor)
    return {"kind": "onnx", "quantization": quantization, "spaces": spaces, "vocabulary": VOCABULARY_FILE}


def _write_vocabulary(path: Path, exported: dict[str, OnnxSentenceEncoder], texts: Sequence[str],
                      options: Sequence[str], extractor: FeatureExtractor) -> None:
    """Every shipped text's vector in each space, and every option's hubness in each space."""
    texts = sorted(set(texts) | set(options))
    options = sorted(set(options))
    encoded = [t.encode("utf-8") for t in texts]
    arrays: dict[str, np.ndarray] = {
        "texts_utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "text_ends": np.cumsum([len(e) for e in encoded], dtype=np.int64),
    }
    option_encoded = [o.encode("utf-8") for o in options]
    arrays["options_utf8"] = np.frombuffer(b"".join(option_encoded), dtype=np.uint8)
    arrays["option_ends"] = np.cumsum([len(e) for e in option_encoded], dtype=np.int64)
    for space in ("base", "ft"):
        model = exported.get(space, exported["base"])
        encoder = Encoder(model=model, model_id=f"ship-{space}", max_cached=max(len(texts), 1))
        arrays[f"{space}_vectors"] = encoder.encode(texts) if texts else np.zeros((0, model.get_embedding_dimension()), np.float32)
        memo = HubnessMemo(extractor.reference_, extractor.hub_k, max_size=max(len(options), 1), space=space)
        arrays[f"{space}_hubness"] = memo.of(encoder, options) if options else np.zeros(0)
    np.savez(path, **arrays)


def _decode(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    data = blob.tobytes()
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    return [data[a:b].decode("utf-8") for a, b in zip(starts.tolist(), ends.tolist())]


def load_runtime_encoders(directory: Path, entry: Any, base: Encoder | None, has_finetuned: bool,
                          finetuned_id: str | None, base_id: str, where: Path) -> tuple[Encoder, Encoder | None]:
    """The base and fine-tuned Encoders over the directory's ONNX exports (sharing `base`'s disk
    cache folder and memory bound)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("spaces"), dict):
        raise ModelError(f"{where}: 'runtime' must be an object with 'spaces'")
    quantization = entry.get("quantization")
    cache_dir = base.cache_dir if base is not None else None
    max_cached = base.max_cached if base is not None else None

    def encoder_of(space: str, model_id: str) -> Encoder:
        relative = entry["spaces"].get(space)
        if not isinstance(relative, str):
            raise ModelError(f"{where}: runtime.spaces.{space} must name the export folder")
        folder = directory / relative
        read_export_config(folder)  # versions and digests: a clear error for a damaged export
        model = OnnxSentenceEncoder(folder, verify=False)
        return Encoder(model=model, model_id=runtime_model_id(model_id, model.quantization), cache_dir=cache_dir,
                       max_cached=max_cached)

    base_encoder = encoder_of("base", base_id)
    finetuned = encoder_of("ft", finetuned_id or "") if has_finetuned else None
    return base_encoder, finetuned


def preload_vocabulary(path: Path, extractor: FeatureExtractor) -> int:
    """Fill the extractor's encoders and hubness memos from vocabulary.npz; the texts loaded."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            texts = _decode(stored["texts_utf8"], stored["text_ends"])
            options = _decode(stored["options_utf8"], stored["option_ends"])
            arrays = {key: stored[key] for key in stored.files if key.endswith(("_vectors", "_hubness"))}
    except (OSError, ValueError, KeyError, EOFError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: corrupt shipped vocabulary ({type(exc).__name__}: {exc})") from None
    encoders = extractor.encoders()
    assert extractor.hubness_ is not None
    for space in ("base", "ft"):
        vectors, hubness = arrays.get(f"{space}_vectors"), arrays.get(f"{space}_hubness")
        if vectors is None or hubness is None or len(vectors) != len(texts) or len(hubness) != len(options):
            raise ModelError(f"{path}: the {space} vectors or hubness do not match the shipped texts")
        if space == "base" or encoders["ft"] is not encoders["base"]:  # without fine-tuning, one encoder
            encoders[space].preload(texts, vectors)
        extractor.hubness_[space].values.update(zip(options, hubness.tolist()))
    return len(texts)
