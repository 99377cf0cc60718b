"""The encoders' runtime: batched (as pictorank ran them before) against one string a run (as it
runs them now), side by side on never-seen text: speed, and whether a string's vector depends on
what else is encoded with it.

    .venv/bin/python bench/encoders.py models/default [--words 3000] [--glosses 1000]

For each of the model folder's exports (onnx/base, onnx/ft) and each kind of text (lexicon
words, as open play and the lexicon stage embed them; WordNet glosses, the longest texts a run
embeds), on a fresh session with no memo or cache:

- batched: 32 strings a run, sorted by length and padded, onnxruntime on 2 threads;
- alone: pictorank.encoders.onnx.OnnxSentenceEncoder (every string alone, 2 strings at once).

`same vectors` encodes the texts again in reverse order and counts the rows whose bytes equal
the first pass's; `vs alone` is the mean cosine of a method's vectors to the one-string vectors.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from harness import reference_line  # bench/harness.py, beside this file
from pictorank.encoders.onnx import OnnxSentenceEncoder
from pictorank.lexicon import load_lexicon
from pictorank.lexicon.glosses import gloss_of, read_glosses


class Batched:
    """The batched runtime pictorank used before: length-sorted batches of 32, padded, on one
    onnxruntime session with 2 intra-op threads."""

    def __init__(self, folder: Path, threads: int = 2) -> None:
        import onnxruntime as ort

        self.encoder = OnnxSentenceEncoder(folder, threads=1)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        ids = [e.ids for e in self.encoder.tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.empty((len(texts), self.encoder.get_embedding_dimension()), np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(ids[r]) for r in rows)
            input_ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.int64)
            for j, r in enumerate(rows):
                input_ids[j, : len(ids[r])] = ids[r]
                mask[j, : len(ids[r])] = 1
            out[rows] = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        return out


def measure(encode, texts: list[str]) -> tuple[float, np.ndarray, float]:
    started = time.perf_counter()
    vectors = encode(texts)
    seconds = time.perf_counter() - started
    again = encode(texts[::-1])[::-1]
    same = float(np.mean([a.tobytes() == b.tobytes() for a, b in zip(vectors, again)]))
    return seconds, vectors, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--words", type=int, default=3000)
    parser.add_argument("--glosses", type=int, default=1000)
    args = parser.parse_args()
    words = list(load_lexicon("wordnet").words)
    table = read_glosses()
    texts = {"words": words[-args.words:],  # the rarest: no run here has met them
             "glosses": [g for w in words[: 4 * args.glosses] if (g := gloss_of(w, table))][: args.glosses]}
    print(reference_line())
    print("\n| export | texts | method | strings/s | same vectors, other order | mean cosine vs alone |\n|---|---|---|---|---|---|")
    for space in ("base", "ft"):
        folder = args.model / "onnx" / space
        alone, batched = OnnxSentenceEncoder(folder, threads=2), Batched(folder)
        for kind, sample in texts.items():
            results = {"alone": measure(alone.encode, sample), "batched": measure(batched.encode, sample)}
            reference = results["alone"][1]
            for method, (seconds, vectors, same) in results.items():
                cosine = float(np.mean(np.sum(vectors * reference, axis=1)))
                print(f"| {space} ({alone.quantization}) | {len(sample)} {kind} | {method} | {len(sample) / seconds:.0f} | "
                      f"{same:.1%} | {cosine:.5f} |")


if __name__ == "__main__":
    main()
