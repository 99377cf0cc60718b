"""The main-idea tower: a copy of the base encoder fine-tuned so that a word lands next to the
description of its clue's main idea.

Why: the clue model's classifiers see a word only through similarities the frozen base encoder
gives (to descriptions, to train answers, a linear probe on its vector), and with those they pick
the human main idea for under half of Bliss val words, however they are combined
(docs/experiments/clue-giver.md). Which pictogram people make the main idea is a category judgement
(`rose` -> flower, `birch` -> tree, where the classifiers chose `group of`) that the frozen space
does not draw. Fine-tuning the word side against the descriptions, as a classifier whose class
weights are the descriptions' own frozen vectors, draws it, and still reaches pictograms train
rarely used as main ideas, because every class is a description text. On the distinct Bliss val
words the tower alone picks the human main idea about as often as the classifiers do, and their
product (two experts, each with its own view) clearly more often than either. The shipped rate,
4e-4, was chosen on train alone (ClueModel's docstring); through the whole suggester it also
does better on val than 1e-4 (figures: docs/experiments/clue-giver.md).

Only the word side is trained (the descriptions keep the base vectors the clue model already
holds), with a plain PyTorch loop as in pictorank.train.finetune: a softmax over every
description at the logit scale of MultipleNegativesRankingLoss. A fitted tower runs on PyTorch;
a saved one is an int8 ONNX export (SAVED_PRECISION), so a service that loads a clue model never
imports torch. int8, as the served base encoder: a quarter of the fp32 export's size, and on train
folds it ranks the held-out words' main ideas as the fp32 export does (bench/tower_precision.py;
docs/experiments/clue-giver.md). A tower saved in fp32 before loads as it was saved.
"""

from __future__ import annotations

import copy
import os
import random
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np

from pictorank.encoders import load_base_model
from pictorank.encoders.onnx import OnnxSentenceEncoder, export_onnx
from pictorank.encoders.threads import torch_threads
from pictorank.errors import training_stack

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

TOWER_DIR = "main_idea_tower"  # beside clue_model.json
SAVED_PRECISION = "int8"
SCALE = 20.0  # inverse temperature of the cosine logits, as in MultipleNegativesRankingLoss
BATCH_SIZE = 32
WARMUP_FRACTION = 0.1
# PyTorch's threads while the tower trains: a count the machine does not choose, so that the tower
# (and the clues it helps choose) is the same on every machine (pictorank.encoders.threads). Two:
# with one-word inputs a step's products are small, but a second thread still shortens the fit,
# and nothing else runs beside it in the clue-giver's fit.
THREADS = 2


class TextEncoder(Protocol):
    def encode(self, texts: Sequence[str], batch_size: int = 32, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray: ...


def fit_tower(words: Sequence[str], main_ideas: Sequence[int], description_vectors: np.ndarray,
              epochs: float, learning_rate: float, seed: int, threads: int = THREADS) -> "SentenceTransformer":
    """The base encoder fine-tuned so that softmax(SCALE * word . descriptions) puts each word's
    main idea (an index into `description_vectors`) first, on `threads` PyTorch threads; in eval
    mode."""
    with training_stack("fitting the clue-giver's main-idea tower"):
        import torch  # lazy: torch is slow to import, and only fitting needs it
        import torch.nn.functional as F

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = copy.deepcopy(load_base_model())  # a copy: a loader may hand out a shared instance
    targets = torch.tensor(np.asarray(description_vectors, dtype=np.float32))
    labels = torch.tensor(np.asarray(main_ideas, dtype=np.int64))
    steps = int(np.ceil(len(words) / BATCH_SIZE) * epochs)
    # fused: one kernel for the whole update; with one-word inputs the update is most of a step
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, fused=True)
    warmup = max(1, int(steps * WARMUP_FRACTION))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    rng = random.Random(seed)
    prepare = getattr(model, "preprocess", None) or model.tokenize  # `tokenize` before sentence-transformers 5
    model.train()
    with torch_threads(threads):
        for batch in _batches(len(words), steps, rng):
            features = prepare([words[i] for i in batch])
            vectors = F.normalize(model(features)["sentence_embedding"], dim=-1)
            loss = F.cross_entropy(SCALE * vectors @ targets.T, labels[batch])
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    model.eval()
    return model


def _batches(size: int, steps: int, rng: random.Random) -> list[list[int]]:
    """`steps` batches of word indices, epoch after epoch, each epoch in a new random order."""
    batches: list[list[int]] = []
    while len(batches) < steps:
        order = list(range(size))
        rng.shuffle(order)
        batches += [order[i : i + BATCH_SIZE] for i in range(0, size, BATCH_SIZE)]
    return batches[:steps]


def main_idea_probabilities(tower: TextEncoder, word: str, description_vectors: np.ndarray) -> np.ndarray:
    """The tower's softmax over the given descriptions (rows of unit vectors) for `word`."""
    vector = tower.encode([word], convert_to_numpy=True, normalize_embeddings=True)[0]
    logits = SCALE * (np.asarray(description_vectors) @ vector)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def as_saved(tower: "SentenceTransformer") -> OnnxSentenceEncoder:
    """The fitted tower as `save_tower` writes it and `load_tower` reads it back (its int8 export,
    in a private folder removed with the object): a fit used before or without saving gives the
    clues a saved one gives."""
    directory = Path(tempfile.mkdtemp(prefix="pictorank-tower-"))
    try:
        export_onnx(tower, directory / TOWER_DIR, SAVED_PRECISION)
        saved = OnnxSentenceEncoder(directory / TOWER_DIR)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    weakref.finalize(saved, shutil.rmtree, directory, True)
    return saved


def save_tower(tower: "SentenceTransformer | OnnxSentenceEncoder", directory: str | os.PathLike) -> None:
    """Write the tower as an ONNX export (SAVED_PRECISION) into `directory`/TOWER_DIR (copied when it
    already is one)."""
    target = Path(directory) / TOWER_DIR
    if isinstance(tower, OnnxSentenceEncoder) and tower.directory.resolve() == target.resolve():
        return  # saving a loaded model into its own folder: the export is already there
    shutil.rmtree(target, ignore_errors=True)
    if isinstance(tower, OnnxSentenceEncoder):
        shutil.copytree(tower.directory, target)
    else:
        export_onnx(tower, target, SAVED_PRECISION)


def load_tower(directory: str | os.PathLike) -> OnnxSentenceEncoder:
    """The tower `save_tower` wrote (ModelError if it is missing or damaged)."""
    return OnnxSentenceEncoder(Path(directory) / TOWER_DIR)
