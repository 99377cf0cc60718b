"""The ``lex_*`` columns: surface links between the option and the hint descriptions.

Shared words, compounds (sunflower = flower + sun: the share of the option's letters spelled
out by hint words) and rapidfuzz string similarity to the descriptions' synonyms.
"""

from __future__ import annotations

import numpy as np
from rapidfuzz import fuzz

from pictorank.features.text import covered_fraction, synonyms, tokens
from pictorank.query import Query

LEXICAL = ("shared", "shared_frac", "substr_hints", "substr_first", "cover", "fuzz_max", "fuzz_token_set")
NAMES = tuple(f"lex_{n}" for n in LEXICAL)


def columns(q: Query) -> dict[str, np.ndarray]:
    """The lexical columns of `q`'s options, filled option by option (strings do not vectorise)."""
    hint_tokens = [set(tokens(h)) for h in q.hints]
    all_tokens = set().union(*hint_tokens)
    flat_syns = [s for h in q.hints for s in synonyms(h)]
    rows = [_option_values(option, hint_tokens, all_tokens, flat_syns) for option in q.options]
    return {f"lex_{name}": np.array([r[name] for r in rows], dtype=np.float64) for name in LEXICAL}


def _option_values(option: str, hint_tokens: list[set[str]], all_tokens: set[str], flat_syns: list[str]) -> dict[str, float]:
    """One option's values for every name of LEXICAL."""
    lower = option.lower()
    opt_tokens = set(tokens(option))
    shared = opt_tokens & all_tokens
    inside = [any(len(t) >= 3 and t in lower for t in ts) for ts in hint_tokens]
    return {
        "shared": len(shared),
        "shared_frac": len(shared) / max(1, len(opt_tokens)),
        "substr_hints": sum(inside) / len(inside),
        "substr_first": float(inside[0]),
        "cover": covered_fraction(lower, all_tokens),
        "fuzz_max": max(fuzz.ratio(lower, s) for s in flat_syns) / 100 if flat_syns else 0.0,
        "fuzz_token_set": fuzz.token_set_ratio(lower, " ".join(flat_syns)) / 100,
    }
