"""Contrastive fine-tuning of the sentence encoder, in a plain PyTorch loop.

Why a hand-written loop: sentence-transformers' `fit()` pulls in `datasets` and `accelerate`,
which we do not want as dependencies. The loss is MultipleNegativesRankingLoss: each clue text
must be closer to its own answer than to every other answer in the batch (in-batch negatives),
optionally plus a few of the row's wrong options as hard negatives.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from pictorank.encoders.threads import torch_threads
from pictorank.memory import freed_memory_kept
from pictorank.query import Query, joined_text

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@dataclass(frozen=True)
class FinetuneParams:
    """Hyper-parameters of one fine-tuning run.

    The reference recipe was 3 epochs, batch 32, lr 3e-5; 1e-4 was chosen by the learned
    ranker's train CV MRR (docs/experiments/learned-ranker.md). Mining hard
    negatives with the base encoder and a symmetric loss were tried and lowered val Hits@1.
    """

    epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 1e-4
    scale: float = 20.0  # inverse temperature of the cosine logits, as in MultipleNegativesRankingLoss
    hard_negatives: int = 1  # wrong options of the row added as extra negatives (0 = in-batch only)
    warmup_fraction: float = 0.1
    seed: int = 13
    chunk_size: int = 16  # texts per forward pass, length-sorted (see `_embed`): the same loss, less padding
    precision: str = "bf16"  # the forward passes' matrix products (PRECISIONS; see `_autocast`)
    # PyTorch's threads while fine-tuning (pictorank.encoders.threads: a count the machine does not
    # choose gives the same weights on every machine). One: a fine-tune's matrix products are small
    # enough that a second thread gains little on a CPU (bench/finetune_threads.py), and a second
    # core does more for work beside it (pictorank.train.fold_encoders).
    threads: int = 1


PRECISIONS = ("fp32", "bf16")


def seed_everything(seed: int) -> None:
    """Fix every random source the loop touches, so two runs give the same weights."""
    import torch  # lazy: torch is slow to import; only fine-tuning needs it here

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def training_pairs(queries: Sequence[Query], hard_negatives: int, seed: int) -> list[tuple[str, str, list[str]]]:
    """(clue text, answer, hard negatives) for each query with an answer."""
    rng = random.Random(seed)
    pairs = []
    for query in queries:
        if query.answer is None:
            continue
        wrong = [o for o in query.options if o != query.answer]
        negatives = rng.sample(wrong, min(hard_negatives, len(wrong)))
        pairs.append((joined_text(query.hints), query.answer, negatives))
    return pairs


def _batches(pairs: list, batch_size: int, rng: random.Random) -> list[list]:
    """Shuffled batches in which no answer occurs twice (a duplicate would be a false negative)."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches: list[list] = []
    current: list = []
    answers: set[str] = set()
    leftovers: list[int] = []
    for i in order:
        if pairs[i][1] in answers:
            leftovers.append(i)
            continue
        current.append(pairs[i])
        answers.add(pairs[i][1])
        if len(current) == batch_size:
            batches.append(current)
            current, answers = [], set()
    current += [pairs[i] for i in leftovers if pairs[i][1] not in answers]
    if len(current) > 1:
        batches.append(current)
    return batches


def finetune(
    model: "SentenceTransformer", queries: Sequence[Query], params: FinetuneParams, log=None
) -> "SentenceTransformer":
    """Fine-tune `model` in place on (joined clue text -> answer) and return it, in eval mode."""
    import torch  # lazy: see seed_everything

    seed_everything(params.seed)
    pairs = training_pairs(queries, params.hard_negatives, params.seed)
    rng = random.Random(params.seed)
    epoch_batches = [_batches(pairs, params.batch_size, rng) for _ in range(int(np.ceil(params.epochs)))]
    per_epoch = len(epoch_batches[0]) if epoch_batches else 0
    steps = int(round(per_epoch * params.epochs))
    schedule = [b for epoch in epoch_batches for b in epoch][:steps]
    if not schedule:
        model.eval()
        return model

    # fused: one kernel for the whole update instead of a loop over tensors, a sixth of a step's time
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.learning_rate, fused=True)
    warmup = max(1, int(steps * params.warmup_fraction))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )

    model.train()
    started = time.perf_counter()
    # each step's activations and the token embeddings' gradient reuse the last step's pages
    with torch_threads(params.threads), freed_memory_kept():
        _steps(model, schedule, params, optimizer, scheduler, log, started)
    model.eval()
    return model


def _steps(model: "SentenceTransformer", schedule: list[list], params: FinetuneParams, optimizer: object,
           scheduler: object, log, started: float) -> None:
    """The optimisation steps, one per batch of `schedule`."""
    import torch  # lazy: see seed_everything
    import torch.nn.functional as F

    steps = len(schedule)
    for step, batch in enumerate(schedule):
        answers = [p[1] for p in batch]
        in_batch = set(answers)
        negatives = [n for p in batch for n in p[2] if n not in in_batch]
        with _autocast(params.precision, model.device.type):
            clues = _embed(model, [p[0] for p in batch], params.chunk_size)
            targets = _embed(model, answers + negatives, params.chunk_size)
        logits = params.scale * clues.float() @ targets.float().T
        loss = F.cross_entropy(logits, torch.arange(len(batch), device=model.device))
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if log is not None and (step + 1) % 20 == 0:
            log(f"  fine-tune step {step + 1}/{steps} loss {loss.item():.3f} ({time.perf_counter() - started:.0f} s)")


def _autocast(precision: str, device: str) -> contextlib.AbstractContextManager[object]:
    """The forward passes' precision. "bf16": PyTorch's autocast runs the matrix products in
    bfloat16 (the weights, their gradients and the optimiser stay fp32: mixed precision), which a
    CPU with bfloat16 instructions computes faster; the loss is taken in fp32. "fp32": as is."""
    if precision not in PRECISIONS:
        raise ValueError(f"fine-tuning precision must be one of {', '.join(PRECISIONS)}, found {precision!r}")
    if precision == "fp32":
        return contextlib.nullcontext()
    import torch  # lazy: see seed_everything

    return torch.autocast(device, dtype=torch.bfloat16)


def _embed(model: "SentenceTransformer", texts: list[str], chunk_size: int) -> "torch.Tensor":
    """Unit vectors of `texts`, in their order, with gradients.

    Why in length-sorted chunks: a batch is padded to its longest text, and clue texts vary widely
    in length, so one forward pass over the batch spends much of its work on padding.
    Masked padding does not change a text's vector, so the chunks give the same embeddings (and
    the same loss) as one pass, in less time on a CPU (docs/experiments/speed.md).
    """
    import torch  # lazy: see seed_everything
    import torch.nn.functional as F

    prepare = getattr(model, "preprocess", None) or model.tokenize
    lengths = [len(ids) for ids in model.tokenizer(texts)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: lengths[i])
    parts = []
    for start in range(0, len(order), max(1, chunk_size)):
        chunk = [texts[i] for i in order[start : start + chunk_size]]
        features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in prepare(chunk).items()}
        parts.append(model(features)["sentence_embedding"])
    back = torch.empty(len(order), dtype=torch.long)
    back[order] = torch.arange(len(order))  # position of each text in the sorted order
    return F.normalize(torch.cat(parts)[back.to(model.device)], dim=-1)


def weights_digest(model: "SentenceTransformer") -> str:
    """A short hash of the weights: the fine-tuned encoder's id in the embedding cache."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]
