"""Features of each (clue, option) pair for the learned ranker, as named columns.

One module per feature group (cosine, lexical, query_size, associations, hubness), each
declaring the columns it makes; `FeatureExtractor` (extractor.py) composes them.
"""

from pictorank.features.extractor import FeatureExtractor, feature_names, selected_features

__all__ = ["FeatureExtractor", "feature_names", "selected_features"]
