"""A lexicon's embeddings, stored in the model folder beside the encoders that made them:

    lexicon.npz    the words, their Zipf frequencies and their unit vectors in one space of the
                   model, as int8 (x127: a quarter of float32's size, and the same neighbours)
    lexicon.json   the lexicon's source and size, the space and the encoder's id, and the sha256
                   of lexicon.npz, checked before the vectors are trusted

Written by `pictorank train` and `pictorank lexicon --model DIR`, so that a service has the
faiss index of ~75,000 words at start-up without encoding them (a minute of CPU).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pictorank.artifacts import read_json, sha256_file, write_json
from pictorank.encoders import Encoder
from pictorank.errors import ModelError
from pictorank.lexicon.words import Lexicon

LEXICON_FILE = "lexicon.npz"
LEXICON_CONFIG = "lexicon.json"
SPACES = ("base", "ft")
DEFAULT_SPACE = "ft"  # the fine-tuned encoder retrieves answers best (docs/experiments/open-vocabulary.md)
_SCALE = 127.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredLexicon:
    """A lexicon with its unit vectors (float32) in `space`, made by the encoder `encoder_id`."""

    lexicon: Lexicon
    vectors: np.ndarray
    space: str
    encoder_id: str


def embed(lexicon: Lexicon, encoder: Encoder, space: str) -> StoredLexicon:
    """Every word's unit vector in `encoder`'s space; the encoder's memo is not filled (75,000
    words would push out what requests need)."""
    batch = 4096
    parts = [encoder.model.encode(list(lexicon.words[i : i + batch]), normalize_embeddings=True,
                                  convert_to_numpy=True, batch_size=256)
             for i in range(0, len(lexicon), batch)]
    vectors = np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
    return StoredLexicon(lexicon, vectors, space, encoder.model_id)


def save(directory: Path, stored: StoredLexicon) -> Path:
    """Write lexicon.npz and then lexicon.json (its hash last: a half-written pair never checks out)."""
    encoded = [w.encode("utf-8") for w in stored.lexicon.words]
    path = directory / LEXICON_FILE
    temporary = directory / f".{LEXICON_FILE}.tmp.npz"
    np.savez(temporary, words_utf8=np.frombuffer(b"".join(encoded), dtype=np.uint8),
             word_ends=np.cumsum([len(e) for e in encoded], dtype=np.int64),
             zipf=stored.lexicon.zipf.astype(np.float32),
             vectors=np.round(stored.vectors * _SCALE).astype(np.int8))
    temporary.replace(path)
    write_json(directory / LEXICON_CONFIG, {
        "source": stored.lexicon.source, "size": len(stored.lexicon), "space": stored.space,
        "encoder": stored.encoder_id, "files": {LEXICON_FILE: sha256_file(path)},
    })
    return path


def build(directory: Path, lexicon: Lexicon, encoder: Encoder, space: str) -> StoredLexicon:
    """Embed `lexicon` with the model's `space` encoder and store it in the model folder."""
    started = time.perf_counter()
    stored = embed(lexicon, encoder, space)
    save(directory, stored)
    log.info("embedded %d lexicon words in the %s space in %.1f s", len(lexicon), space, time.perf_counter() - started)
    return stored


def load(directory: Path) -> StoredLexicon | None:
    """The lexicon stored in a model folder; None when it has none. A damaged one is a ModelError."""
    config_path = directory / LEXICON_CONFIG
    if not config_path.is_file():
        return None
    config = read_json(config_path)
    if not isinstance(config, dict) or config.get("space") not in SPACES or not isinstance(config.get("files"), dict):
        raise ModelError(f"{config_path}: not a lexicon config (space and files expected)")
    path = directory / LEXICON_FILE
    if not path.is_file() or sha256_file(path) != config["files"].get(LEXICON_FILE):
        raise ModelError(f"{path}: missing or corrupt (sha256 differs from {LEXICON_CONFIG}'s); "
                         f"rebuild it with `pictorank lexicon --model {directory}`")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            data, ends = arrays["words_utf8"].tobytes(), arrays["word_ends"]
            starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
            words = tuple(data[a:b].decode("utf-8") for a, b in zip(starts.tolist(), ends.tolist()))
            zipf = arrays["zipf"].astype(np.float32)
            vectors = arrays["vectors"].astype(np.float32)
    except (OSError, ValueError, KeyError, EOFError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: corrupt lexicon ({type(exc).__name__}: {exc})") from None
    if len(vectors) != len(words):
        raise ModelError(f"{path}: {len(vectors)} vectors for {len(words)} words")
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    lexicon = Lexicon(words, zipf, str(config.get("source", "unknown")))
    return StoredLexicon(lexicon, vectors, config["space"], str(config.get("encoder", "")))
