"""Sentence embeddings from an ONNX export of a sentence-transformers model, run by onnxruntime.

Why: the PyTorch path imports torch (slow) and runs MiniLM in eager mode. The same network
exported with `torch.onnx.export` and run by onnxruntime gives the same vectors (fp32) or, with
int8 dynamic quantisation of the weights (per output channel), a clear speed-up on a small
CPU; tokenizing with the `tokenizers` package (the model's own tokenizer.json) means a server or
a `predict` run never imports torch at all. Rankings with the int8 encoders are compared with
the PyTorch ones by bench/quality.py and tests/test_onnx_encoder.py.

An export is a folder:

    model.onnx      the transformer with mean pooling and L2 normalisation inside the graph
    tokenizer.json  the model's tokenizer (truncation and padding are set by this module)
    onnx.json       what it was made from and with: quantisation, max_seq_length, the versions
                    of torch / onnxruntime / onnx / tokenizers, and model.onnx's sha256

Loading checks onnx.json against the installed onnxruntime and tokenizers (major.minor) and
model.onnx against its digest, so a folder made for other numerics or damaged on disk is a
ModelError naming the file, never a silent drift in rankings.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from pictorank.encoders.rowwise import rowwise_activations
from pictorank.errors import ModelError, training_stack

if TYPE_CHECKING:  # only exporting needs torch and sentence-transformers; onnxruntime loads when used
    import onnxruntime as ort
    from sentence_transformers import SentenceTransformer

ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "onnx.json"
# Bump when the folder's layout, the graph's inputs/outputs or its numerics change. Format 2:
# mean pooling as a MatMul and int8 activations scaled row by row (pictorank.encoders.rowwise),
# so strings of one length run batched with the vectors each gets alone. Format 1 exports (a
# model folder trained before) are still read, and run one string at a time.
EXPORT_FORMAT = 2
READABLE_FORMATS = (1, 2)
# The most strings, and tokens, of one length run in one call. Small runs are the fast ones on a
# CPU (their activations stay in cache), and a large run's activations raised a training run's
# peak memory (docs/experiments/speed.md); a text of BATCH_TOKENS tokens or more runs alone.
BATCH_ROWS = 64
BATCH_TOKENS = 256
# int8-ffn: int8 for the feed-forward blocks only (two thirds of a layer's multiply-adds), fp32
# for attention; see `_feed_forward_matmuls`.
QUANTIZATIONS = ("fp32", "int8", "int8-ffn")
CHECKED = ("onnxruntime", "tokenizers")  # their major.minor must match at load time
EXPORTERS = ("torch", "transformers", "onnx")  # what made the graph: a cached export is re-made when one changes
DEFAULT_MAX_SEQ_LENGTH = 256


def _installed(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# -- export (needs torch) ---------------------------------------------------------------------


def export_onnx(model: "SentenceTransformer", directory: str | os.PathLike, quantization: str = "int8") -> Path:
    """Export `model` (a mean-pooled sentence-transformers BERT, as MiniLM is) into `directory`.

    Seconds for the export and for int8 quantisation: cheap enough to run at
    the end of every `pictorank train`.
    """
    if quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {QUANTIZATIONS}, not {quantization!r}")
    with training_stack("exporting an encoder to ONNX"):
        import onnx  # noqa: F401  (torch.onnx.export and the quantiser need it; fail before any work)
        import torch  # noqa: F401
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _save_tokenizer(model, directory)
    fp32 = directory / ("model.fp32.onnx" if quantization != "fp32" else ONNX_FILE)
    _torch_export(model, fp32)
    if quantization != "fp32":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        import onnx

        only = _feed_forward_matmuls(fp32) if quantization == "int8-ffn" else []
        with _without_preprocessing_advice():
            quantize_dynamic(str(fp32), str(directory / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=True,
                             nodes_to_quantize=only)
        fp32.unlink()
        onnx.save(rowwise_activations(onnx.load(str(directory / ONNX_FILE))), str(directory / ONNX_FILE))
    config = {
        "format": EXPORT_FORMAT,
        "quantization": quantization,
        "max_seq_length": int(model.max_seq_length or DEFAULT_MAX_SEQ_LENGTH),
        "dimension": int(model.get_embedding_dimension()),
        "versions": {name: _installed(name) for name in (*EXPORTERS, *CHECKED)},
        "sha256": {ONNX_FILE: _sha256(directory / ONNX_FILE), TOKENIZER_FILE: _sha256(directory / TOKENIZER_FILE)},
    }
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")
    return directory


@contextlib.contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """Drop the quantiser's "consider pre-processing" warning (logged on the root logger at every
    call): it is advice for image models, and a training run exports several encoders."""

    class Drop(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return "pre-processing before quantization" not in record.getMessage()

    root, drop = logging.getLogger(), Drop()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)


def _feed_forward_matmuls(path: Path) -> list[str]:
    """The MatMul nodes of the graph's feed-forward blocks (BERT's `intermediate.dense` and
    `output.dense` of every layer; the exporter names nodes after their modules).

    Why a partial quantisation: int8 everywhere made the fine-tuned encoder's rankings drift past
    the accuracy tolerance on Bliss val (against the unoptimised model), while int8 in
    the feed-forward blocks alone stayed inside it (docs/experiments/speed.md) and still saved
    most of the time: they hold 2 x 384 x 1536 of a layer's 4 x 384 x 384 + 2 x 384 x 1536
    weights. The attention projections stay fp32.
    """
    import re

    import onnx

    pattern = re.compile(r"/layer\.\d+/(intermediate|output)/dense/MatMul$")
    names = [node.name for node in onnx.load(str(path)).graph.node if node.op_type == "MatMul" and pattern.search(node.name)]
    if not names:
        raise ModelError(f"{path}: no BERT feed-forward layers found; use int8 or fp32 for this encoder")
    return names


def _save_tokenizer(model: "SentenceTransformer", directory: Path) -> None:
    """The tokenizer.json the model was loaded with, saved into the export folder."""
    tokenizer = model.tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError("ONNX export needs a fast (tokenizers-backed) tokenizer")
    tokenizer.backend_tokenizer.save(str(directory / TOKENIZER_FILE))


def _torch_export(model: "SentenceTransformer", path: Path) -> None:
    """The transformer plus mean pooling and normalisation, as one graph with dynamic batch and length."""
    import warnings

    import torch

    pooling = model[1].get_config_dict() if len(model) > 1 else {}
    mode = pooling.get("pooling_mode", "mean" if pooling.get("pooling_mode_mean_tokens", True) else None)
    if mode != "mean":
        raise ModelError(f"ONNX export supports mean pooling only, the model uses {mode!r}")
    transformer = model[0].auto_model.eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            tokens = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(1).to(tokens.dtype)  # (batch, 1, tokens)
            # A MatMul, not a sum over the token axis: onnxruntime's ReduceSum adds a lone string's
            # tokens in another order than a batch's, which moved its vector by a rounding step.
            pooled = torch.matmul(mask, tokens).squeeze(1) / mask.sum(2).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    example = torch.ones((2, 8), dtype=torch.long)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about shape checks that hold for any input
        torch.onnx.export(
            MeanPooled(), (example, example), str(path), input_names=["input_ids", "attention_mask"],
            output_names=["embedding"], opset_version=17, dynamo=False,
            dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                          "embedding": {0: "batch"}},
        )


# -- inference (no torch) ---------------------------------------------------------------------


def made_by_installed_exporters(config: dict[str, Any]) -> bool:
    """Whether an export's onnx.json names the torch, transformers and onnx installed now. A
    shipped model need not (it runs without them); a cached export of a training run must, or
    the training's features would come from another exporter's graph than a fresh export."""
    versions = config.get("versions")
    return isinstance(versions, dict) and all(versions.get(name) == _installed(name) for name in EXPORTERS)


def read_export_config(directory: str | os.PathLike) -> dict[str, Any]:
    """onnx.json of an export folder, checked against the installed libraries and the files' digests."""
    directory = Path(directory)
    path = directory / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: missing or corrupt ONNX export config ({exc}); re-export the encoder") from None
    if not isinstance(config, dict) or config.get("format") not in READABLE_FORMATS:
        found = config.get("format") if isinstance(config, dict) else config
        raise ModelError(f"{path}: ONNX export format {found!r}, this pictorank reads {READABLE_FORMATS}; re-export")
    versions = config.get("versions")
    if not isinstance(versions, dict):
        raise ModelError(f"{path}: 'versions' must be a JSON object")
    for package in CHECKED:
        made_with, installed = versions.get(package), _installed(package)
        if made_with and installed and made_with.split(".")[:2] != installed.split(".")[:2]:
            raise ModelError(f"{path}: exported with {package} {made_with}, installed is {installed}; "
                             f"install {package}=={made_with} or re-export (retrain) the model")
    digests = config.get("sha256")
    if not isinstance(digests, dict) or set(digests) != {ONNX_FILE, TOKENIZER_FILE}:
        raise ModelError(f"{path}: 'sha256' must list {ONNX_FILE} and {TOKENIZER_FILE}")
    for name, digest in digests.items():
        file = directory / name
        if not file.is_file():
            raise ModelError(f"{file}: missing from the ONNX export; re-export (retrain) the model")
        if _sha256(file) != digest:
            raise ModelError(f"{file}: corrupt (sha256 differs from the one recorded at export)")
    return config


def cached_export(make_model: Callable[[], "SentenceTransformer"], name: str, quantization: str,
                  cache_dir: str | os.PathLike | None) -> Path:
    """The export folder `<cache_dir>/onnx/<name>` of the model `make_model` returns: reused when
    it is there, sound and made by the exporters installed now (so the model is not even loaded,
    nor torch imported), else exported afresh (seconds). Without a cache folder the export goes to
    a temporary folder removed at exit."""
    root = Path(cache_dir) / "onnx" if cache_dir is not None else _scratch()
    folder = root / name
    _remove_stale_staging(root, name)
    if folder.is_dir():
        if _reusable(folder):
            return folder
        shutil.rmtree(folder, ignore_errors=True)  # made by other library versions, or damaged
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    except OSError:  # the cache folder cannot hold exports (a file named `onnx` in it): export aside
        root = _scratch()
        folder = root / name
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    try:
        export_onnx(make_model(), staging, quantization)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        os.replace(staging, folder)
    except OSError:  # another process made it meanwhile: use theirs
        shutil.rmtree(staging, ignore_errors=True)
    return folder


STALE_STAGING_SECONDS = 3600  # an export takes seconds: a staging folder this old was left by a killed run


def _remove_stale_staging(root: Path, name: str) -> None:
    """Remove what an export killed half-way left (`.<name>.*` staging folders, tens of
    megabytes); a young one may be another process's export under way, and stays."""
    try:
        stale = [p for p in root.glob(f".{name}.*")
                 if p.is_dir() and time.time() - p.stat().st_mtime > STALE_STAGING_SECONDS]
    except OSError:
        return
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)


def _reusable(folder: Path) -> bool:
    """A cached export is sound and was made by the exporters installed now in this format (a
    fresh export would give the same graph), or no exporter is installed to make it again."""
    try:
        config = read_export_config(folder)
    except ModelError:
        return False
    return (config.get("format") == EXPORT_FORMAT and made_by_installed_exporters(config)) or not can_export()


def can_export() -> bool:
    """Whether the exporters are installed. A serving install has none: a sound export made at
    build time is then the only one there can be, so it is kept rather than re-made."""
    return all(_installed(name) is not None for name in EXPORTERS)


@functools.cache
def _scratch() -> Path:
    """Where exports go without a cache directory: a temporary folder removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="pictorank-exports-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def session_options() -> "ort.SessionOptions":
    """How an encoder's onnxruntime session runs: one intra-op thread, no CPU memory arena.

    One thread a run: a run's floating-point sums are then always split the same way, whatever
    the machine's cores or PICTORANK_ONNX_THREADS, and several batches run side by side instead
    (`OnnxSentenceEncoder.encode`). The arena keeps every buffer it ever grew to for the life of
    the session, so one request of long texts left a server holding its peak for good; without it
    the buffers go back to the C allocator, whose free pages a service returns to the system
    after a big ranking.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = False
    return options


class OnnxSentenceEncoder:
    """A stand-in for SentenceTransformer's `encode` (the part pictorank.encoders.Encoder calls),
    backed by onnxruntime and the tokenizers package.

    A string's vector is a function of the string only, whatever is encoded beside it: a cache
    may keep whichever came first. An export of this format runs strings of one token length
    together, unpadded (its int8 activations are scaled row by row: pictorank.encoders.rowwise),
    at most BATCH_ROWS strings and BATCH_TOKENS tokens a run; a format 1 export (one scale for
    the whole batch) runs every string alone. Speed comes from batching and from running `threads` batches side by
    side, each on one onnxruntime thread.

    Parameters
    ----------
    directory : an export folder written by `export_onnx`.
    threads : batches run at once, each on its own onnxruntime thread (default: the machine's
        cores, at most 4; the entry points pass `PICTORANK_ONNX_THREADS`). It changes speed only,
        never a vector.
    verify : check onnx.json's versions and digests (hashing the model file takes a moment; a caller
        that has already checked the files, e.g. a model directory's own hashes, may skip it).
    """

    def __init__(self, directory: str | os.PathLike, threads: int | None = None, verify: bool = True) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        self.config = read_export_config(self.directory) if verify else json.loads(
            (self.directory / CONFIG_FILE).read_text(encoding="utf-8"))
        self.max_seq_length = int(self.config.get("max_seq_length", DEFAULT_MAX_SEQ_LENGTH))
        self.threads = max(1, threads or min(os.cpu_count() or 1, 4))
        self.batch_rows = BATCH_ROWS if self.config.get("format") == EXPORT_FORMAT else 1
        try:
            self.tokenizer = Tokenizer.from_file(str(self.directory / TOKENIZER_FILE))
            self.session = ort.InferenceSession(str(self.directory / ONNX_FILE), session_options(),
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # any failure to read the files is a broken export
            raise ModelError(f"{self.directory}: cannot load the ONNX encoder ({type(exc).__name__}: {exc})") from None
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.tokenizer.enable_truncation(self.max_seq_length)
        self._pool: ThreadPoolExecutor | None = None

    @property
    def quantization(self) -> str:
        return str(self.config.get("quantization"))

    @property
    def export_format(self) -> int:
        return int(self.config.get("format", 1))

    def get_embedding_dimension(self) -> int:
        return int(self.config.get("dimension", 384))

    def encode(self, texts: Sequence[str], batch_size: int = 1, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Unit-length embeddings of `texts`, in order (the graph pools and normalises); strings of
        one token length run together. `batch_size` is accepted for SentenceTransformer's
        signature only: a batch's make-up never changes a vector."""
        del batch_size, convert_to_numpy, normalize_embeddings, show_progress_bar  # always numpy, unit length
        out = np.zeros((len(texts), self.get_embedding_dimension()), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        batches = self._batches(ids)
        if self.threads == 1 or len(batches) == 1:
            results = map(self._run, batches)
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="pictorank-onnx")
            results = self._pool.map(self._run, batches)
        for (rows, _), vectors in zip(batches, results):
            out[rows] = vectors
        return out

    def _batches(self, ids: list[list[int]]) -> list[tuple[list[int], np.ndarray]]:
        """(positions, token ids) of each run: strings of one length together, at most
        `batch_rows` and BATCH_TOKENS tokens a run."""
        by_length: dict[int, list[int]] = {}
        for position, tokens in enumerate(ids):
            by_length.setdefault(len(tokens), []).append(position)
        batches = []
        for length, positions in by_length.items():
            size = max(1, min(self.batch_rows, BATCH_TOKENS // max(1, length)))
            for start in range(0, len(positions), size):
                rows = positions[start : start + size]
                batches.append((rows, np.asarray([ids[r] for r in rows], dtype=np.int64)))
        return batches

    def _run(self, batch: tuple[list[int], np.ndarray]) -> np.ndarray:
        input_ids = batch[1]
        return self.session.run(None, {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)})[0]
