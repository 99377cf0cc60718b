"""A lexicon's embeddings, stored in the model folder beside the encoders that made them:

    lexicon-<sha>.npz  the words, their Zipf frequencies and their unit vectors in each of the
                   model's spaces (base, and ft when it has a fine-tuned encoder), as int8 with a
                   scale a row (pictorank.encoders.StoredVectors); and the base encoder's vectors
                   of the glosses of the words WordNet defines (pictorank.lexicon.glosses);
                   zip-compressed
    lexicon.json   the lexicon's source and size, the space searched in, each space's encoder id,
                   and the name and sha256 of the .npz, checked before the vectors are trusted

A new lexicon is written beside the old one under its own name, then lexicon.json is switched to
it in one step (an atomic rename), then the old file is removed: a write killed at any point
leaves a folder that serves, the old lexicon or the new. Leftovers of a killed write are removed
by the next one.

Written by `pictorank train` and `pictorank lexicon --model DIR`, so that a service has the
faiss index of ~75,000 words at start-up without encoding them (a minute of CPU), and ranks a
clue's candidate words without encoding them either: in open play they are what a request costs.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pictorank.artifacts import read_json, sha256_file, write_json
from pictorank.encoders import Encoder, StoredVectors
from pictorank.encoders.memo import remove_dead_writers
from pictorank.errors import ModelError
from pictorank.lexicon.glosses import gloss_of, read_glosses
from pictorank.lexicon.words import Lexicon

LEXICON_FILE = "lexicon.npz"  # the name formats 2 and 3 stored the vectors under
LEXICON_CONFIG = "lexicon.json"
FORMAT = 4  # vectors of every space, a scale a row; gloss vectors; the .npz named by its digest
READABLE = (2, 3, 4)  # a lexicon stored before glosses has none: open play reads it without
_STORED_NAME = re.compile(r"lexicon(-[0-9a-f]{16})?\.npz")  # what lexicon.json may name: nothing outside the folder
SPACES = ("base", "ft")
DEFAULT_SPACE = "ft"  # the fine-tuned encoder retrieves answers best (docs/experiments/open-vocabulary.md)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredLexicon:
    """A lexicon with its vectors in each stored space, `space` the one searched in.

    vectors : space -> the words' vectors made by that space's encoder.
    encoder_ids : space -> the id of the encoder that made them.
    glosses : the base encoder's vectors of the words' glosses, for the words that have one.
    """

    lexicon: Lexicon
    vectors: Mapping[str, StoredVectors]
    space: str
    encoder_ids: Mapping[str, str]
    glosses: StoredVectors | None = None

    @property
    def encoder_id(self) -> str:
        """The id of the encoder of the searched space."""
        return self.encoder_ids[self.space]

    def search_vectors(self) -> np.ndarray:
        """The searched space's unit vectors, float32, one row a word."""
        return self.vectors[self.space].all()


def embed(lexicon: Lexicon, encoders: Mapping[str, Encoder], space: str) -> StoredLexicon:
    """Every word's unit vector in each of `encoders`' spaces; their memos are not filled (75,000
    words would push out what requests need)."""
    if space not in encoders:
        raise ValueError(f"the searched space {space!r} is not among the spaces embedded ({', '.join(encoders)})")
    vectors = {name: embedded(encoder, lexicon.words) for name, encoder in encoders.items()}
    return StoredLexicon(lexicon, vectors, space, {name: e.model_id for name, e in encoders.items()})


def save(directory: Path, stored: StoredLexicon) -> Path:
    """Write the vectors under a name of their own, switch lexicon.json to them in one step, then
    remove what the folder held before (see the module's docstring); the new file's path."""
    _remove_leftovers(directory, keep=stored_file(directory))
    encoded = [w.encode("utf-8") for w in stored.lexicon.words]
    temporary = directory / ".lexicon.tmp.npz"
    arrays = {f"{name}_{part}": array for name, vectors in stored.vectors.items()
              for part, array in (("codes", vectors.codes), ("scales", vectors.scales))}
    if stored.glosses is not None:
        rows = {w: i for i, w in enumerate(stored.lexicon.words)}
        arrays.update(gloss_rows=np.array([rows[w] for w in stored.glosses.texts], dtype=np.int64),
                      gloss_codes=stored.glosses.codes, gloss_scales=stored.glosses.scales)
    # compressed: the int8 vectors shrink by about a tenth, which the serving image's size needs,
    # for a fraction of a second more at start-up
    np.savez_compressed(temporary, words_utf8=np.frombuffer(b"".join(encoded), dtype=np.uint8),
                        word_ends=np.cumsum([len(e) for e in encoded], dtype=np.int64),
                        zipf=stored.lexicon.zipf.astype(np.float32), **arrays)
    digest = sha256_file(temporary)
    path = directory / f"lexicon-{digest[:16]}.npz"
    os.replace(temporary, path)
    config = directory / f".{LEXICON_CONFIG}.tmp"
    write_json(config, {
        "format": FORMAT, "source": stored.lexicon.source, "size": len(stored.lexicon), "space": stored.space,
        "encoders": dict(stored.encoder_ids), "files": {path.name: digest},
    })
    os.replace(config, directory / LEXICON_CONFIG)  # the switch
    _remove_leftovers(directory, keep=path)
    return path


def stored_file(directory: Path) -> Path | None:
    """The vectors' file lexicon.json names (None without a readable config or with a name that
    is not one pictorank writes)."""
    try:
        files = read_json(directory / LEXICON_CONFIG).get("files")
    except (ModelError, OSError, AttributeError):
        return None
    names = list(files) if isinstance(files, dict) else []
    return directory / names[0] if len(names) == 1 and _STORED_NAME.fullmatch(str(names[0])) else None


def _remove_leftovers(directory: Path, keep: Path | None) -> None:
    """Remove the vectors no config names and the temporary files of a killed write."""
    for path in [*directory.glob("lexicon*.npz"), *directory.glob(".lexicon*.tmp*")]:
        if path != keep and (path.name.startswith(".") or _STORED_NAME.fullmatch(path.name)):
            path.unlink(missing_ok=True)


def embed_with_glosses(lexicon: Lexicon, encoders: Mapping[str, Encoder], space: str) -> StoredLexicon:
    """`embed`, and the words' glosses by the base encoder when `encoders` has one: what a model
    folder stores (`build`), and what training's open play reads before it is stored."""
    stored = embed(lexicon, encoders, space)
    return replace(stored, glosses=embed_glosses(lexicon, encoders["base"])) if "base" in encoders else stored


def build(directory: Path, lexicon: Lexicon, encoders: Mapping[str, Encoder], space: str) -> StoredLexicon:
    """Embed `lexicon` with each of the model's encoders, and its glosses with the base one, and
    store it in the model folder."""
    started = time.perf_counter()
    stored = embed_with_glosses(lexicon, encoders, space)
    save(directory, stored)
    log.info("embedded %d lexicon words in the %s space(s), and %d glosses, in %.1f s", len(lexicon),
             ", ".join(encoders), len(stored.glosses or ()), time.perf_counter() - started)
    return stored


def load(directory: Path) -> StoredLexicon | None:
    """The lexicon stored in a model folder; None when it has none. A damaged one is a ModelError.

    Read once per process and folder state: the encoders and the open-play index of one served
    model share the same arrays (tens of megabytes) instead of each reading its own."""
    config_path = directory / LEXICON_CONFIG
    if not config_path.is_file():
        return None
    states = []
    for path in (config_path, stored_file(directory) or directory / LEXICON_FILE):
        try:
            state = path.stat()
            states.append((state.st_ino, state.st_mtime_ns, state.st_size))
        except OSError:
            states.append(None)
    return _load(directory.resolve(), tuple(states))


@functools.lru_cache(maxsize=2)
def _load(directory: Path, states: tuple) -> StoredLexicon | None:
    del states  # part of the cache key: a file replaced or rewritten is read (and checked) again
    config_path = directory / LEXICON_CONFIG
    if not config_path.is_file():
        return None
    config = read_json(config_path)
    rebuild = f"rebuild it with `pictorank lexicon --model {directory}`"
    if not isinstance(config, dict) or not isinstance(config.get("files"), dict):
        raise ModelError(f"{config_path}: not a lexicon config (files expected)")
    if config.get("format") not in READABLE:
        raise ModelError(f"{config_path}: stored by another version of pictorank (format {config.get('format')}, "
                         f"this one reads {', '.join(map(str, READABLE))}); {rebuild}")
    encoder_ids = config.get("encoders")
    if (not isinstance(encoder_ids, dict) or not encoder_ids or set(encoder_ids) - set(SPACES)
            or config.get("space") not in encoder_ids):
        raise ModelError(f"{config_path}: not a lexicon config (its spaces and the searched one expected)")
    path = stored_file(directory)
    if path is None:
        raise ModelError(f"{config_path}: must name one lexicon file of this folder; {rebuild}")
    if not path.is_file() or sha256_file(path) != config["files"][path.name]:
        raise ModelError(f"{path}: missing or corrupt (sha256 differs from {LEXICON_CONFIG}'s); {rebuild}")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            data, ends = arrays["words_utf8"].tobytes(), arrays["word_ends"]
            starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
            words = tuple(data[a:b].decode("utf-8") for a, b in zip(starts.tolist(), ends.tolist()))
            zipf = arrays["zipf"].astype(np.float32)
            vectors = {name: StoredVectors(words, arrays[f"{name}_codes"], arrays[f"{name}_scales"])
                       for name in encoder_ids}
            rows = arrays["gloss_rows"].tolist() if "gloss_rows" in arrays else None
            if rows is not None and any(not 0 <= i < len(words) for i in rows):
                raise IndexError("gloss rows outside the words")
            glosses = (StoredVectors([words[i] for i in rows], arrays["gloss_codes"], arrays["gloss_scales"])
                       if rows is not None else None)
    except (OSError, ValueError, KeyError, IndexError, EOFError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: corrupt lexicon ({type(exc).__name__}: {exc})") from None
    _check_arrays(path, words, zipf, [*vectors.values(), *([glosses] if glosses is not None else [])])
    if glosses is not None and "base" in vectors and glosses.codes.shape[1] != vectors["base"].codes.shape[1]:
        raise ModelError(f"{path}: corrupt lexicon (the glosses' vectors are not the base space's width)")
    lexicon = Lexicon(words, zipf, str(config.get("source", "unknown")))
    return StoredLexicon(lexicon, vectors, config["space"], {k: str(v) for k, v in encoder_ids.items()}, glosses)


def _check_arrays(path: Path, words: Sequence[str], zipf: np.ndarray, stored: Sequence[StoredVectors]) -> None:
    """What a hand-made lexicon.npz with its hash recomputed could still get wrong, refused:
    words that could not be options (blank, '|', too long, repeated), frequencies or scales that
    are not finite."""
    from pictorank.lexicon.words import MAX_WORD_CHARACTERS

    bad = next((w for w in words if not w.strip() or "|" in w or len(w) > MAX_WORD_CHARACTERS), None)
    if bad is not None or len(set(words)) != len(words):
        what = f"the word {bad[:40]!r} cannot be an option" if bad is not None else "a word is stored twice"
        raise ModelError(f"{path}: corrupt lexicon ({what})")
    if zipf.shape != (len(words),) or not np.isfinite(zipf).all():
        raise ModelError(f"{path}: corrupt lexicon (the frequencies are not one finite number a word)")
    if any(not np.isfinite(vectors.scales).all() or (vectors.scales <= 0).any() for vectors in stored):
        raise ModelError(f"{path}: corrupt lexicon (scales that are not finite and positive)")


def know_stored(directory: Path, encoders: Mapping[str, Encoder | None]) -> StoredLexicon | None:
    """Hand each of a model's encoders (space -> encoder) the folder's lexicon vectors it made
    itself: a lexicon word then has one vector in every process serving the folder (`predict`,
    the service, the clue-giver), and ranking a found word reads it instead of encoding it.
    The stored lexicon, or None when the folder has none."""
    stored = load(directory)
    if stored is None:
        return None
    for space, vectors in stored.vectors.items():
        encoder = encoders.get(space)
        if encoder is None:
            continue
        if encoder.model_id == stored.encoder_ids[space]:
            encoder.know(vectors)
        else:
            log.warning("the stored lexicon's %s vectors were made by %s, not by the served encoder: its words "
                        "are encoded when ranked", space, stored.encoder_ids[space])
    return stored


def gloss_search_vectors(words: Sequence[str], glosses: StoredVectors, base: Encoder) -> np.ndarray:
    """Each word's gloss vector (base space), for searching by definition; a word without a gloss
    is read by its own base vector, as the clue-giver reads it."""
    vectors, found = glosses.lookup(words)
    if not found.all():
        vectors[~found] = base.encode([w for w, known in zip(words, found) if not known])
    return vectors


def embed_glosses(lexicon: Lexicon, base: Encoder) -> StoredVectors | None:
    """The unit vectors, made by the base encoder, of the glosses of the lexicon's words that
    WordNet defines (pictorank.lexicon.glosses); None when it defines none. The encoder's memo is
    not filled."""
    table = read_glosses()
    defined = [(w, g) for w in lexicon.words if (g := gloss_of(w, table)) is not None]
    if not defined:
        return None
    vectors = embedded(base, [g for _, g in defined])
    return StoredVectors([w for w, _ in defined], vectors.codes, vectors.scales)


def embedded(encoder: Encoder, texts: Sequence[str]) -> StoredVectors:
    """`texts`' unit vectors by `encoder`, int8 with a scale a row as a model folder stores them.

    With a cache folder they are kept there (CACHE_FOLDER), named by the encoder's id and the
    texts: a lexicon is embedded once per encoder, not once per run; a retrain reads it back,
    and the fine-tuning process's spare core can embed it ahead (pictorank.train.fold_encoders).
    An entry that cannot be read is made again; one that cannot be written costs a later run
    the time, never this one."""
    path = _cached_path(encoder, texts)
    if path is not None:
        cached = _read_cached(path, encoder.model_id, texts)
        if cached is not None:
            return cached
    vectors = _encode_all(encoder, texts)
    if path is not None:
        _write_cached(path, encoder.model_id, vectors)
    return vectors


CACHE_FOLDER = "lexicon"  # under an encoder's cache folder: <key>.npz, its encoder's id inside


def _cached_path(encoder: Encoder, texts: Sequence[str]) -> Path | None:
    if encoder.cache_dir is None:
        return None
    digest = hashlib.sha256(encoder.model_id.encode("utf-8"))
    for text in texts:
        digest.update(b"\0" + text.encode("utf-8"))
    return encoder.cache_dir / CACHE_FOLDER / f"{digest.hexdigest()[:32]}.npz"


def _read_cached(path: Path, model_id: str, texts: Sequence[str]) -> StoredVectors | None:
    """The entry at `path` when it is whole and was made by `model_id` for as many texts."""
    try:
        with np.load(path, allow_pickle=False) as arrays:
            if str(arrays["model_id"]) != model_id:
                return None
            return StoredVectors(texts, arrays["codes"], arrays["scales"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, EOFError) as exc:  # a damaged entry is made again
        log.warning("lexicon cache entry %s unreadable (%s); embedding again", path, exc)
        return None


def _write_cached(path: Path, model_id: str, vectors: StoredVectors) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_dead_writers(path.parent, path.stem, ".tmp.npz")
        np.savez(tmp, model_id=np.array(model_id), codes=vectors.codes, scales=vectors.scales)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        log.warning("lexicon vectors not kept in the cache (%s)", exc.strerror or exc)


def _encode_all(encoder: Encoder, texts: Sequence[str]) -> StoredVectors:
    """The int8 vectors of many texts, by the encoder's model directly: its memo is not filled
    (tens of thousands of words would push out what requests need). A text that comes again
    (synonyms share their WordNet gloss) is embedded once: its vector does not depend on its
    batch, so the copies are the same bytes. Each chunk is quantised as it comes (a scale a row:
    the same codes as quantising them all at once), so the float vectors of 75,000 texts are
    never held together."""
    distinct = list(dict.fromkeys(texts))
    batch = 4096
    codes, scales = [], []
    # a bar on stderr whenever there is more than one chunk: a long word list takes minutes at
    # start-up, and a service that says nothing meanwhile looks hung
    with tqdm(total=len(distinct), desc=f"embedding with {encoder.model_id}", unit="text", mininterval=5,
              disable=len(distinct) <= batch) as bar:
        for i in range(0, len(distinct), batch):
            chunk = distinct[i : i + batch]
            part = StoredVectors.quantize(chunk, encoder.model.encode(
                chunk, normalize_embeddings=True, convert_to_numpy=True, batch_size=encoder.batch_size))
            codes.append(part.codes)
            scales.append(part.scales)
            bar.update(len(chunk))
    row = {text: i for i, text in enumerate(distinct)}
    rows = np.fromiter((row[t] for t in texts), dtype=np.int64, count=len(texts))
    return StoredVectors(texts, np.concatenate(codes)[rows], np.concatenate(scales)[rows])
