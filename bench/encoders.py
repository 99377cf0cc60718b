"""The encoders' runtime: one string a run (export format 1, as pictorank ran them before)
against strings of one length batched with row-wise int8 scales (format 2, as it runs them now),
side by side on never-seen text: speed, whether a string's vector depends on what else is
encoded with it, and how close each stays to the PyTorch fp32 model it was exported from.

    .venv/bin/python bench/encoders.py OLD_MODEL [--words 3000] [--glosses 1000]

OLD_MODEL is a model folder trained before format 2 (its onnx/base and onnx/ft exports are
format 1) with its fine-tuned weights in encoder/; the bench exports the same weights again in
format 2 into a temporary folder. For each space and each kind of text (lexicon words, as open
play and the lexicon stage embed them; WordNet glosses, the longest texts a run embeds), on a
fresh session with no memo or cache, both on 2 threads:

- `same vectors, other order` encodes the texts again in reverse order and counts the rows whose
  bytes equal the first pass's;
- `cosine to fp32` is the mean (and lowest) cosine of the vectors to PyTorch's fp32 ones.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from harness import reference_line  # bench/harness.py, beside this file
from pictorank.encoders import export_onnx, load_base_model, load_model_dir
from pictorank.encoders.onnx import OnnxSentenceEncoder
from pictorank.lexicon import load_lexicon
from pictorank.lexicon.glosses import gloss_of, read_glosses


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
    weights = {"base": load_base_model(), "ft": load_model_dir(args.model / "encoder")}
    print(reference_line())
    print("\n| export | texts | runtime | strings/s | same vectors, other order | cosine to fp32: mean / lowest |\n"
          "|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for space, model in weights.items():
            old = OnnxSentenceEncoder(args.model / "onnx" / space, threads=2)
            if old.export_format != 1:
                raise SystemExit(f"{args.model / 'onnx' / space}: format {old.export_format}, not a format 1 export")
            new = OnnxSentenceEncoder(export_onnx(model, Path(scratch) / space, old.quantization), threads=2)
            for kind, sample in texts.items():
                reference = model.encode(sample, normalize_embeddings=True, convert_to_numpy=True, batch_size=32)
                for name, encoder in (("format 1, one string a run", old), ("format 2, batched by length", new)):
                    seconds, vectors, same = measure(encoder.encode, sample)
                    cosine = np.sum(vectors * reference, axis=1)
                    print(f"| {space} ({old.quantization}) | {len(sample)} {kind} | {name} | {len(sample) / seconds:.0f} | "
                          f"{same:.1%} | {cosine.mean():.5f} / {cosine.min():.4f} |")


if __name__ == "__main__":
    main()
