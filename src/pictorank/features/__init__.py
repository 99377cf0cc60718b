"""Features of each (clue, option) pair for the learned ranker, as named columns."""

from pictorank.features.extractor import FeatureExtractor, feature_names, selected_features

__all__ = ["FeatureExtractor", "feature_names", "selected_features"]
