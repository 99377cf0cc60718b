"""Rankers: the interface (`base`), the `seed` and `cosine` baselines (`unlearned`), the
LambdaMART ranker (`learned`), and the registry of methods (`registry`)."""

from pictorank.ranker.base import CONFIG_FILE, Ranker, rank_puzzles
from pictorank.ranker.learned import LearnedRanker
from pictorank.ranker.ranking import Ranking
from pictorank.ranker.registry import DEFAULT_METHOD, METHODS, load_ranker, make_ranker
from pictorank.ranker.unlearned import CosineRanker, SeedRanker

__all__ = [
    "CONFIG_FILE", "DEFAULT_METHOD", "METHODS", "CosineRanker", "LearnedRanker", "Ranker", "Ranking", "SeedRanker",
    "load_ranker", "make_ranker", "rank_puzzles",
]
