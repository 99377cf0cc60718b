"""FeatureExtractor: the groups' columns composed in a fixed order, saved and loaded faithfully."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pictorank.errors import ModelError, NotFittedError
from pictorank.features import FeatureExtractor, feature_names, selected_features
from pictorank.features import associations, cosine, familiarity, hubness, lexical, query_size
from pictorank.query import Query

QUERIES = [
    Query(("flower", "sun"), ("sunflower", "car", "bread")),
    Query(("vehicle",), ("boat", "car")),  # one hint: no later descriptions
    Query(("planet", "ring", "gas", "giant", "far"), ("saturn", "comet", "boat")),  # past the last position bucket
]


def test_feature_names_are_the_groups_names_in_order():
    expected = [
        *cosine.names("base"), *cosine.names("ft"), *lexical.NAMES, *query_size.NAMES,
        *associations.names(["base", "ft"]), *hubness.NAMES, *hubness.names("ft"), *familiarity.NAMES,
    ]
    assert feature_names() == expected
    assert len(set(expected)) == len(expected) == 91
    assert expected[:2] == ["base_cos_joined", "base_cos_mean"] and expected[-1] == "fam_options_mean"


def test_the_columns_before_issue_10_come_first_so_older_models_still_load():
    """Hubness in the fine-tuned space and familiarity were appended: the first 85 columns are
    the old list in its old order, which is what a model trained before them reads."""
    assert feature_names()[83:87] == ["hub_option", "hub_csls", "hub_ft_option", "hub_ft_csls"]


@pytest.mark.parametrize("q", QUERIES, ids=["two hints", "one hint", "five hints"])
def test_every_group_makes_exactly_its_declared_columns(toy_train, word_encoder, q):
    ext = FeatureExtractor(word_encoder).fit(toy_train)
    encoders = ext.encoders()
    made = {
        "cosine": (cosine.names("ft"), cosine.columns("ft", word_encoder, q, ext.position_weights_)),
        "lexical": (lexical.NAMES, lexical.columns(q)),
        "query_size": (query_size.NAMES, query_size.columns(q)),
        "associations": (
            associations.names(list(encoders)),
            associations.columns(q, encoders, ext.reference_, ext.token_stats_, ext.neighbours, ext.min_pair_count),
        ),
        "hubness": (hubness.NAMES, hubness.columns(q, word_encoder, ext.hubness_["base"])),
        "hubness ft": (hubness.names("ft"), hubness.columns(q, word_encoder, ext.hubness_["ft"])),
        "familiarity": (familiarity.NAMES, familiarity.columns(q, word_encoder, ext.reference_)),
    }
    for group, (names, cols) in made.items():
        assert list(cols) == list(names), group
        assert all(values.shape == (len(q.options),) for values in cols.values()), group


def test_selected_features_drop_whole_groups_by_prefix():
    kept = selected_features(["assoc", "hub", "ft_", "fam_"])
    assert kept == [n for n in feature_names() if n.startswith(("base_", "lex_", "q_"))]
    assert selected_features([]) == feature_names()


def test_transform_returns_the_named_columns_one_row_per_option(toy_train, encoder):
    extractor = FeatureExtractor(encoder).fit(toy_train)
    table = extractor.transform(toy_train[:2])
    assert list(table.columns) == feature_names()
    assert len(table) == 8
    assert np.isfinite(table.to_numpy()).all()
    first = table.iloc[:4]
    assert first["lex_cover"].tolist()[0] == 1.0  # sunflower = sun + flower
    assert first["base_rank_joined"].min() == 0 and first["base_gap_joined"].max() == 0


def test_an_option_that_is_a_train_answer_does_not_see_its_own_clue(toy_train, encoder):
    """On out-of-fold rows the wrong options are answers of the fitted folds: their own rows
    must not count, or 'seen in train' would mean 'wrong' (never true on val/test)."""
    small = dict(min_pair_count=1, neighbours=2, hub_k=2)  # fewer than the 4 rows left
    extractor = FeatureExtractor(encoder, **small).fit(toy_train)
    own = extractor.transform([Query(("flower", "night"), ("night flower", "moon"))])
    fresh = FeatureExtractor(encoder, **small).fit(toy_train[:4])
    without = fresh.transform([Query(("flower", "night"), ("night flower", "moon"))])
    columns = ["assoc_pmi_max", "assoc_answer_token_seen", "hub_option", "assoc_pair_count",
               *(f"assoc_{space}_{name}" for space in ("base", "ft") for name in ("knn_weighted", "hint_first", "rev_hints"))]
    for column in columns:
        assert own[column].iloc[0] == pytest.approx(without[column].iloc[0], abs=1e-6), column


def test_saved_extractor_transforms_identically(toy_train, word_encoder, tmp_path):
    extractor = FeatureExtractor(word_encoder, neighbours=3, hub_k=2, min_pair_count=1).fit(toy_train)
    extractor.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["associations.json", "pooling.json", "reference.npz"]
    loaded = FeatureExtractor.load(tmp_path, word_encoder, None)
    assert (loaded.neighbours, loaded.hub_k, loaded.min_pair_count) == (3, 2, 1)
    assert loaded.position_weights_ == extractor.position_weights_
    assert loaded.transform(QUERIES).equals(extractor.transform(QUERIES))


def test_a_damaged_reference_file_is_a_model_error(toy_train, word_encoder, tmp_path):
    FeatureExtractor(word_encoder).fit(toy_train).save(tmp_path)
    (tmp_path / "reference.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="corrupt feature tables"):
        FeatureExtractor.load(tmp_path, word_encoder, None)


def test_no_queries_make_an_empty_table_with_every_column(toy_train, word_encoder):
    table = FeatureExtractor(word_encoder).fit(toy_train).transform([])
    assert table.shape == (0, 91) and list(table.columns) == feature_names()


def test_transform_and_save_need_fit(word_encoder, tmp_path):
    with pytest.raises(RuntimeError, match="not fitted"):
        FeatureExtractor(word_encoder).transform(QUERIES)
    with pytest.raises(NotFittedError, match="nothing to save"):
        FeatureExtractor(word_encoder).save(tmp_path)


def test_a_query_reads_the_same_numbers_to_the_last_bit_alone_or_in_a_batch(toy_train, word_encoder):
    """Not merely close: numpy runs one row as a matrix-vector product and several as a matrix
    product, so an option met alone (a one-option query, or the one option a memo still lacked)
    got other last bits than in a batch, and the hubness memo kept whichever came first."""
    queries = [Query(("flower", "sun"), ("sunflower", "car", "boat")), Query(("vehicle", "road"), ("car", "bread")),
               Query(("night", "water, sea"), ("water lily",)), Query(("flower", "night"), ("tulip", "night flower"))]
    batch = FeatureExtractor(word_encoder).fit(toy_train).transform(queries)
    alone = pd.concat([FeatureExtractor(word_encoder).fit(toy_train).transform([q]) for q in queries], ignore_index=True)
    np.testing.assert_array_equal(batch.to_numpy(), alone.to_numpy())


def test_a_batch_reads_the_same_columns_as_each_query_alone(toy_train, word_encoder):
    """transform's one option x answer product per batch (issue 11) changes no value."""
    ext = FeatureExtractor(word_encoder).fit(toy_train)
    queries = [Query(("flower", "sun"), ("sunflower", "car", "boat")), Query(("vehicle", "road"), ("car", "bread")),
               Query(("night", "water, sea"), ("water lily", "night flower", "car", "tulip"))]
    batch = ext.transform(queries)
    alone = pd.concat([ext.transform([q]) for q in queries], ignore_index=True)
    np.testing.assert_allclose(batch.to_numpy(), alone.to_numpy(), rtol=1e-5, atol=1e-6)
    per_query = [ext._query_block(q, ext.reference_, ext.hubness_) for q in queries]  # no shared products
    expected = np.vstack([np.column_stack([b[n] for n in feature_names()]) for b in per_query]).astype(np.float32)
    np.testing.assert_allclose(batch.to_numpy(), expected, rtol=1e-5, atol=1e-6)


def test_without_the_seed_columns_the_template_is_never_encoded(toy_train, word_encoder):
    ext = FeatureExtractor(word_encoder).fit(toy_train)
    needed = [n for n in feature_names() if not n.endswith("_seed")]
    table = ext.transform([Query(("a clue never seen", "sun"), ("car", "boat"))], needed=needed)
    assert not any(t.startswith("The following hints") and "never seen" in t for t in word_encoder._vectors)
    full = ext.transform([Query(("a clue never seen", "sun"), ("car", "boat"))])
    np.testing.assert_array_equal(table[needed].to_numpy(), full[needed].to_numpy())


class _SlowModel:
    """Records which thread encoded what, and sleeps so that side-by-side runs overlap."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.threads: set[str] = set()

    def get_embedding_dimension(self) -> int:
        return 4

    def encode(self, texts, **kwargs):
        import threading
        import time

        self.threads.add(threading.current_thread().name)
        time.sleep(0.2)
        if self.fail:
            raise RuntimeError("encoder broke")
        return np.tile(np.eye(4, dtype=np.float32)[0], (len(texts), 1))


def test_two_encoders_encode_side_by_side_and_an_error_reaches_the_caller():
    import time

    from pictorank.encoders import Encoder
    from pictorank.features.extractor import encode_side_by_side

    first, second = _SlowModel(), _SlowModel()
    encoders = [Encoder(model=first, model_id="a"), Encoder(model=second, model_id="b")]
    started = time.perf_counter()
    encode_side_by_side(encoders, ["x", "y"])
    assert time.perf_counter() - started < 0.35  # overlapped, not 2 x 200 ms one after the other
    assert first.threads != second.threads
    assert all(e.encode(["x", "y"]).shape == (2, 4) for e in encoders) and all(e.encoded_count == 2 for e in encoders)
    broken = Encoder(model=_SlowModel(fail=True), model_id="c")
    with pytest.raises(RuntimeError, match="encoder broke"):
        encode_side_by_side([encoders[0], broken], ["z"])


def test_one_encoder_serving_both_spaces_encodes_once():
    from pictorank.encoders import Encoder
    from pictorank.features.extractor import encode_side_by_side

    model = _SlowModel()
    encoder = Encoder(model=model, model_id="one")
    encode_side_by_side([encoder, encoder], ["x"])
    assert encoder.encoded_count == 1
