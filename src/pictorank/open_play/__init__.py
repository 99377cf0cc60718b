"""Open play: guessing a clue's word with no options given, from an English lexicon.

`index` finds a clue's candidates (the one `candidates`), `columns` assembles what open play's
ranker reads beside the learned ranker's columns, and `ranker` is that ranker (fitted by
pictorank.train.open_play, saved in the learned model's folder). The service and training both
come through here, so what is served is what was learned from.
"""

from pictorank.open_play.columns import OPEN_PLAY_COLUMNS, add_open_play_columns, column_names
from pictorank.open_play.index import (DEFAULT_CANDIDATES, VocabularyIndex, data_index, lexicon_index,
                                       lexicon_with_data, search_width, store_lexicon, stored_words, vocabulary_words)
from pictorank.open_play.ranker import OPEN_PLAY_DIR, OpenPlayRanker

__all__ = ["DEFAULT_CANDIDATES", "OPEN_PLAY_COLUMNS", "OPEN_PLAY_DIR", "OpenPlayRanker", "VocabularyIndex",
           "add_open_play_columns", "column_names", "data_index", "lexicon_index", "lexicon_with_data", "search_width", "store_lexicon", "stored_words", "vocabulary_words"]
