"""How a model's encoders are exported for inference: one ONNX quantisation per space.

A learned model has two encoders ("spaces"): the base model and the one fine-tuned on train's
clues. Each is exported to ONNX at its own precision, because the fine-tuned encoder carries the
most weight in the ranker and loses more to full int8 than the base one does.
"""

from __future__ import annotations

from dataclasses import dataclass

from pictorank.encoders.onnx import QUANTIZATIONS as KINDS  # int8-ffn: int8 feed-forward, fp32 attention

SPACES = ("base", "ft")


@dataclass(frozen=True)
class Quantization:
    """The export precision of each space, written as 'int8' (both alike) or 'base=int8,ft=fp32'."""

    base: str
    ft: str

    def __post_init__(self) -> None:
        for space, kind in (("base", self.base), ("ft", self.ft)):
            if kind not in KINDS:
                raise ValueError(f"unknown quantisation {kind!r} for the {space} encoder: use one of {', '.join(KINDS)}")

    @classmethod
    def parse(cls, text: str) -> "Quantization":
        """'int8' (both spaces), or one per space: 'base=int8,ft=int8-ffn'. ValueError otherwise."""
        if "=" not in text:
            return cls(text, text)
        pairs = [part.split("=", 1) for part in text.split(",")]
        found = {pair[0].strip(): pair[1].strip() for pair in pairs if len(pair) == 2}
        if len(pairs) != len(SPACES) or set(found) != set(SPACES):
            raise ValueError(f"{text!r}: name both encoders once, as base=int8,ft=int8-ffn")
        return cls(found["base"], found["ft"])

    def of(self, space: str) -> str:
        """The quantisation of one space ('base' or 'ft')."""
        if space not in SPACES:
            raise ValueError(f"no encoder space {space!r}: use one of {', '.join(SPACES)}")
        return self.base if space == "base" else self.ft

    def __str__(self) -> str:
        return self.base if self.base == self.ft else f"base={self.base},ft={self.ft}"


# int8 for the base encoder; for the fine-tuned one int8 in the feed-forward blocks only, fp32
# attention: full int8 for both drifted past the accuracy tolerance on Bliss val (against the
# unoptimised model; bench/runtime.py), this mix stays inside it and makes the fine-tuned encoder,
# the costliest part of a never-seen request, faster than fp32 (docs/experiments/speed.md).
DEFAULT_QUANTIZATION = Quantization("int8", "int8-ffn")
