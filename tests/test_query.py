"""The clue's text forms: the task's seed template and the joined descriptions."""

from __future__ import annotations

from pictorank.query import joined_text, seed_text


def test_seed_text_template() -> None:
    assert seed_text(["animal", "water mammal", "hair, fur"]) == (
        "The following hints at our target word:\n"
        "<HINT_PRIMARY>animal</HINT_PRIMARY>\n"
        "<HINT>water mammal</HINT>\n"
        "<HINT>hair, fur</HINT>"
    )
    assert seed_text(["flower"]) == "The following hints at our target word:\n<HINT_PRIMARY>flower</HINT_PRIMARY>"


def test_joined_text() -> None:
    assert joined_text(["flower", "sun"]) == "flower; sun"
