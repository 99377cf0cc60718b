"""What a learned model directory ships so that never-seen input is cheap:

    onnx/base/, onnx/ft/   both encoders exported to ONNX, run by onnxruntime without importing
                           torch (pictorank.encoders.onnx)
    vocabulary.npz         the training vocabulary (train and val options, every hint description)
                           embedded in both spaces by those exported encoders, and each option's
                           hubness in both spaces: what a server would otherwise compute at start-up

Both are written by `LearnedRanker.save` and read when the model loads; the model's ranker.json
names them under "runtime", and its file hashes cover them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pictorank.artifacts import inside
from pictorank.encoders import Encoder, OnnxSentenceEncoder, Quantization, export_onnx, exported_encoder, read_export_config
from pictorank.errors import ModelError
from pictorank.features import FeatureExtractor
from pictorank.features.hubness import HubnessMemo

ONNX_DIR = "onnx"
VOCABULARY_FILE = "vocabulary.npz"
def write_runtime(staging: Path, encoders: dict[str, Encoder], quantization: Quantization, texts: Sequence[str],
                  options: Sequence[str], extractor: FeatureExtractor) -> dict[str, Any]:
    """Export each space's encoder into `staging/onnx/<space>` and embed the shipped vocabulary
    with the exports; the "runtime" entry of ranker.json."""
    spaces: dict[str, str] = {}
    exported: dict[str, OnnxSentenceEncoder] = {}
    for space, encoder in encoders.items():
        folder = staging / ONNX_DIR / space
        model = encoder.model
        wanted = quantization.of(space)
        if isinstance(model, OnnxSentenceEncoder):  # a loaded model saved again: copy its export
            if model.quantization != wanted:
                raise ModelError(f"cannot re-save a {model.quantization} export as {wanted}")
            shutil.copytree(model.directory, folder)
        else:
            export_onnx(model, folder, wanted)
        spaces[space] = f"{ONNX_DIR}/{space}"
        exported[space] = OnnxSentenceEncoder(folder, verify=False)
    _write_vocabulary(staging / VOCABULARY_FILE, exported, texts, options, extractor)
    return {"kind": "onnx", "quantization": str(quantization), "spaces": spaces, "vocabulary": VOCABULARY_FILE}


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


def load_runtime_encoders(directory: Path, entry: Any, base: Encoder | None, finetuned_id: str | None,
                          base_id: str, where: Path, threads: int | None = None) -> tuple[Encoder, Encoder | None]:
    """The base and fine-tuned Encoders over the directory's ONNX exports (sharing `base`'s disk
    cache folder and memory bound); no fine-tuned one when `finetuned_id` is None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("spaces"), dict):
        raise ModelError(f"{where}: 'runtime' must be an object with 'spaces'")
    cache_dir = base.cache_dir if base is not None else None
    max_cached = base.max_cached if base is not None else None

    def encoder_of(space: str, model_id: str) -> Encoder:
        relative = entry["spaces"].get(space)
        if relative != f"{ONNX_DIR}/{space}":  # where `write_runtime` puts each space's export, always
            raise ModelError(f"{where}: runtime.spaces.{space} must be {ONNX_DIR}/{space}, found {relative!r}")
        folder = inside(directory, relative, where)  # never an export outside the model folder
        read_export_config(folder)  # versions and digests: a clear error for a damaged export
        return exported_encoder(folder, model_id, cache_dir, max_cached, threads)

    base_encoder = encoder_of("base", base_id)
    finetuned = encoder_of("ft", finetuned_id) if finetuned_id is not None else None
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
