"""Why an option ranks where it does: how much each hint pulled it up, in readable groups, and
one short sentence ("sun + flower spell it; closest to 'flower'").

- `seed` / `cosine` score an option by its similarity to the whole clue, so their explanation is
  each hint's own cosine similarity to the option (`similarity_explanation`).
- The learned ranker's explanation is LightGBM's own per-feature contributions
  (`Booster.predict(..., pred_contrib=True)`: exact SHAP values of the trees, which add up to the
  score), summed into groups (`learned_explanation`):

      similarity   the base_* / ft_* cosine columns, split over the hints (below)
      spelling     lex_*: shared words, compounds spelled by the hint words, string likeness
      train_clues  assoc_* / hub_* / fam_*: what the training clues taught (fam_*: how familiar
                   the clue and options are to them)
      clue_size    q_*: how many hints and options
      word         open_*: how common the word is and how many words it has (open play's
                   ranker only: pictorank.features.word)
      dictionary   gloss_* / wn_*: how the word's WordNet entry meets the clue (its gloss, its
                   kinds; open play's ranker only: pictorank.features.gloss and .wordnet)
      baseline     the trees' expected score (the same for every option)

  The similarity group is split over the hints: `*_hint_first` columns go to the first hint,
  `*_hint_last` to the last, and the columns of the whole clue (joined text, poolings, ranks) in
  proportion to each hint's positive cosine to the option. Group totals are exact; the split of
  the whole-clue columns is an allocation, chosen because those columns move with the hints'
  similarities.

A pictogram a clue repeats ("intensity, intensity": very intense) is one hint of the
explanation: its pulls are added up (the learned ranker's) or taken once (a cosine, the same for
each), so the sentence and the arrows beside it always speak of the same pull.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from pictorank.features.text import covered_fraction, synonyms, tokens

GROUPS = ("similarity", "spelling", "train_clues", "clue_size", "baseline")
SPELLED = 0.75  # share of the option's letters the hint words must spell to say "spell it"
PREFIX_GROUPS = (("base_", "similarity"), ("ft_", "similarity"), ("lex_", "spelling"),
                 ("assoc_", "train_clues"), ("hub_", "train_clues"), ("fam_", "train_clues"), ("q_", "clue_size"), ("open_", "word"),
                 ("gloss_", "dictionary"), ("wn_", "dictionary"))


@dataclass(frozen=True)
class Explanation:
    """One ranked option's explanation.

    hints : the clue's hint descriptions, in order.
    pulls : how much each hint pulled the option up (cosine similarity for the unlearned
        rankers; its share of the score for the learned one).
    groups : contribution of each group of GROUPS the ranker uses (cosine: `similarity` only,
        the option's score).
    summary : one short sentence for a player.
    """

    option: str
    hints: tuple[str, ...]
    pulls: tuple[float, ...]
    groups: dict[str, float] = field(default_factory=dict)
    summary: str = ""


def feature_group(name: str) -> str:
    """The readable group of a feature column (by its prefix)."""
    return next((group for prefix, group in PREFIX_GROUPS if name.startswith(prefix)), "other")


def hint_similarities(option_vectors: np.ndarray, hint_vectors: np.ndarray) -> np.ndarray:
    """Options x hints cosine similarities of unit vectors."""
    return np.asarray(option_vectors, dtype=np.float64) @ np.asarray(hint_vectors, dtype=np.float64).T


def merged_hints(hints: Sequence[str], pulls: Sequence[float], add: bool) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Each distinct hint once, in its first place, with its pulls added up (`add`) or its first
    pull (a cosine, the same wherever the hint stands)."""
    merged: dict[str, float] = {}
    for hint, pull in zip(hints, pulls):
        merged[hint] = merged.get(hint, 0.0) + float(pull) if add else merged.get(hint, float(pull))
    return tuple(merged), tuple(merged.values())


def similarity_explanation(option: str, hints: Sequence[str], sims: np.ndarray, score: float) -> Explanation:
    """The unlearned rankers' explanation: each hint's cosine to the option."""
    shown, pulls = merged_hints(hints, sims, add=False)
    return Explanation(option, shown, pulls, {"similarity": float(score)}, summary_sentence(option, shown, pulls))


def learned_explanation(
    option: str, hints: Sequence[str], names: Sequence[str], contributions: np.ndarray, sims: np.ndarray
) -> Explanation:
    """The learned ranker's explanation from one row of `pred_contrib` (features..., bias)."""
    groups = dict.fromkeys(GROUPS, 0.0)
    pulls = np.zeros(len(hints))
    share = _similarity_shares(sims)
    for name, value in zip(names, contributions[:-1]):
        group = feature_group(name)
        groups[group] = groups.get(group, 0.0) + float(value)
        if group == "similarity":
            pulls += _hint_allocation(name, len(hints), share) * float(value)
    groups["baseline"] = float(contributions[-1])
    taught = groups["train_clues"] > max(groups["similarity"], groups["spelling"], 0.0)
    shown, merged = merged_hints(hints, pulls, add=True)
    summary = summary_sentence(option, shown, merged, taught=taught, spelling=groups["spelling"])
    return Explanation(option, shown, merged, {k: round(v, 6) for k, v in groups.items()}, summary)


def _similarity_shares(sims: np.ndarray) -> np.ndarray:
    """Each hint's share of the whole-clue similarity: its positive cosine, or equal shares."""
    positive = np.clip(np.asarray(sims, dtype=np.float64), 0.0, None)
    total = positive.sum()
    return positive / total if total > 0 else np.full(len(positive), 1.0 / max(1, len(positive)))


def _hint_allocation(name: str, n_hints: int, share: np.ndarray) -> np.ndarray:
    """Which hints a similarity column is about: the first, the last, or all (by `share`)."""
    allocation = np.zeros(n_hints)
    if name.endswith("_hint_first"):
        allocation[0] = 1.0
    elif name.endswith("_hint_last"):
        allocation[-1] = 1.0
    else:
        allocation[:] = share
    return allocation


def spelling_words(option: str, hints: Sequence[str]) -> list[str]:
    """The hint words that spell the option (sunflower: ['sun', 'flower']), in the option's
    letter order, when together they spell most of it; [] otherwise."""
    letters = option.lower().replace(" ", "")
    found: dict[str, int] = {}
    for hint in hints:
        for token in tokens(hint):
            if len(token) >= 3 and token in letters and token not in found:
                found[token] = letters.find(token)
    # A word inside a longer found word (sun in sunflower's 'sunflower' hint) adds nothing.
    words = [w for w in found if not any(w != other and w in other for other in found)]
    if not words or covered_fraction(letters, set(words)) < SPELLED:
        return []
    return sorted(words, key=lambda w: found[w])


def summary_sentence(
    option: str, hints: Sequence[str], pulls: Sequence[float], taught: bool = False, spelling: float = 0.0
) -> str:
    """'sun + flower spell it; closest to "flower"': what links the option to the clue, in a few
    words. A sentence names a reason only when its contribution pulled the option up, so that it
    never contradicts the numbers beside it: spelling when the hint words spell the option and
    the spelling group's contribution (`spelling`) is positive (the unlearned rankers give none);
    the closest hint when its pull is positive; the training clues when `taught` (the caller's
    check that their positive contribution is the largest)."""
    parts = []
    spelled = spelling_words(option, hints)
    if spelling > 0 and (len(spelled) > 1 or (spelled and spelled[0] != option.lower())):
        parts.append(f"{' + '.join(spelled)} spell it")
    if len(pulls) and max(pulls) > 0:
        parts.append(f"closest to '{short_name(hints[int(np.argmax(pulls))])}'")
    if taught:
        parts.append("train clues like this one point to it")
    return "; ".join(parts) or "nothing in the clue pulls it up much"


def short_name(description: str) -> str:
    """A description's first synonym ('container, bowl, holder' -> 'container')."""
    names = synonyms(description)
    return names[0] if names else description.strip()
