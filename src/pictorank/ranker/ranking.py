"""What every ranker's `rank` returns for one query: the `Ranking`."""

from __future__ import annotations

from dataclasses import dataclass, field

from pictorank.ranker.explain import Explanation


@dataclass(frozen=True)
class Ranking:
    """One ranked query: every option most likely first, with its score; the probability that the
    first is the answer; and the explanations of the first options asked for.

    Why one named result rather than tuples of two, three or four items from as many methods: the
    scores, the confidence and the explanations come from the same feature rows (the learned
    ranker builds them once), so one call returns them all, and callers read fields by name
    instead of unpacking positions that differed from method to method.
    """

    options: list[str]  # every option, most likely first (ties keep the input order)
    scores: list[float]  # in the same order
    confidence: float | None = None  # P(first is the answer); None without a calibration
    explanations: list[Explanation] = field(default_factory=list)  # of the first `explain` options
    none_of_these: float | None = None  # P(the answer is none of the options): set by the service
