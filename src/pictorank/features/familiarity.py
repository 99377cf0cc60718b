"""The ``fam_*`` columns: how far a clue and its options lie from the training data ("home").

A model trained on one vocabulary meets clues it has never seen: a front-end sending its own
pictogram names, a deployment serving another hint_descriptions.csv, answers that are phrases or
names. These columns let the ranker tell such a clue from a familiar one and weigh the columns
learned from train (the fine-tuned encoder, the association tables) accordingly:

- ``fam_hints_known``: share of the clue's distinct descriptions used by train clues (matched by
  text, as the association tables look them up; 0 for a new vocabulary);
- ``fam_clue_nn``: cosine of the clue (joined text, base encoder) to its nearest train clue;
- ``fam_option_nn``: cosine of the option to its nearest train answer (base encoder);
- ``fam_options_mean``: the row's mean of ``fam_option_nn`` (how familiar the options are as a set).

The base encoder is the yardstick: the fine-tuned one was trained to pull train texts together,
so its distances say less about novelty. Train rows answered by one of the query's options are
left out, as in the association columns (pictorank.features.associations explains why): on
out-of-fold rows the wrong options are answers of the fitted folds, on val/test they never are.
The training side of this (rows built as they look for unseen descriptions and answer kinds) is
in pictorank.train.oof.
"""

from __future__ import annotations

import numpy as np

from pictorank.encoders import Encoder
from pictorank.features.associations import Reference, excluded_rows
from pictorank.features.products import row_by_row
from pictorank.query import Query, joined_text

NAMES = ("fam_hints_known", "fam_clue_nn", "fam_option_nn", "fam_options_mean")


def columns(q: Query, encoder: Encoder, reference: Reference, option_answer: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The familiarity columns of `q`'s options against the train `reference`, computed with the
    base `encoder` (its embeddings of the clue and options are cached by then).

    `option_answer`: the options' cosines to every train answer in the base space, when the caller
    has them (FeatureExtractor.transform computes them for a whole batch at once). Excluded rows
    are masked rather than copied out: copying the reference per query cost more than the products.
    """
    n = len(q.options)
    kept = ~excluded_rows(q, reference)
    descriptions = list(dict.fromkeys(q.hints))
    known = float(np.mean([bool(kept[reference.rows_with_hint(h)].any()) for h in descriptions]))
    if not kept.any():
        return {"fam_hints_known": np.full(n, known), "fam_clue_nn": np.zeros(n), "fam_option_nn": np.zeros(n),
                "fam_options_mean": np.zeros(n)}
    clue = encoder.encode([joined_text(q.hints)])[0]
    clue_nn = float(np.max(np.where(kept, reference.clue_vectors["base"] @ clue, -np.inf)))
    if option_answer is None:
        option_answer = row_by_row(encoder.encode(list(q.options)), reference.answer_vectors["base"])
    option_nn = np.where(kept[None, :], option_answer, -np.inf).max(axis=1)
    return {
        "fam_hints_known": np.full(n, known),
        "fam_clue_nn": np.full(n, clue_nn),
        "fam_option_nn": option_nn,
        "fam_options_mean": np.full(n, float(option_nn.mean())),
    }
