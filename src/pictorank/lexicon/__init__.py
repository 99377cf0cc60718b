"""The English lexicon of open-vocabulary mode: its words and frequencies (`words`), their
embeddings stored in a model folder (`store`), the game's echo rule (`echo`) and the turning of
the ranker's order into guesses (`guesses`)."""

from pictorank.lexicon.guesses import DEFAULT_PRIOR_WEIGHT, playable, with_prior
from pictorank.lexicon.words import DEFAULT_SOURCE, Lexicon, guess_key, load_lexicon, matches, without_qualifier

__all__ = ["DEFAULT_PRIOR_WEIGHT", "DEFAULT_SOURCE", "Lexicon", "guess_key", "load_lexicon", "matches",
           "playable", "with_prior", "without_qualifier"]
