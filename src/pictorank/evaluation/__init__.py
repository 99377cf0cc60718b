"""Scoring rankings against known answers: one function per metric (`metrics`), their means
overall and per subtask (`evaluate`), whether two methods differ by more than chance
(`significance`), and the HTML report (`report`)."""

from pictorank.evaluation.evaluate import evaluate_rankings, format_table, summarise

__all__ = ["evaluate_rankings", "format_table", "summarise"]
