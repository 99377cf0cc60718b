"""The clue-giver: pictograms that clue a secret word.

`rules` the game rule and input checks; `parts` which pictograms name parts of a word; `model`
what train clues teach (ClueModel); `tower` the encoder fine-tuned from words to their main
ideas; `suggester` candidate clues and the choice with a guesser; `evaluate` agreement with human
clues and guessability (`pictorank evaluate-suggest`).
"""

from pictorank.suggest.model import ClueModel, fit_or_load
from pictorank.suggest.rules import MAX_AVOID, MAX_CLUE_LENGTH, MAX_TOP, MAX_WORD_LENGTH, is_valid_clue, names_word
from pictorank.suggest.suggester import Pictogram, Suggester, Suggestion

__all__ = [
    "MAX_AVOID", "MAX_CLUE_LENGTH", "MAX_TOP", "MAX_WORD_LENGTH", "ClueModel", "Pictogram", "Suggester", "Suggestion",
    "fit_or_load", "is_valid_clue", "names_word",
]
