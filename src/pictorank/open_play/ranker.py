"""Open play's own ranker: which of a clue's nearest lexicon words is the answer.

The learned ranker was fitted to pick the answer among a puzzle's own options. Open play hands it
something else: the lexicon words nearest to the clue, among them phrases that restate a hint,
rare compounds and words of every frequency. This ranker is a LambdaMART bag fitted on exactly
that (pictorank.train.open_play): each train clue's nearest lexicon words, scored with the columns
of an extractor and an encoder that never saw the clue's fold, plus the words' own columns
(pictorank.features.word: how common, how many words) and, when it was fitted with them, their
glosses' (pictorank.features.gloss: how near the word's definition is to the clue) and what
WordNet files them under (pictorank.features.wordnet: do the hints name the word's kind or
define it). It reads the learned ranker's extractor, encoders and blend, and the glosses' vectors
stored with the lexicon, so it costs a request no more encoding than the learned ranker does.

Saved inside the learned model's folder, which it needs:

    open_play/ranker.json       feature names, booster count, versions, sha256 of each file
    open_play/model-<i>.txt     the LightGBM boosters whose mean is the score
    open_play/metadata.json     how it was fitted (candidates, CV, clues)

A model folder without it (trained before it existed, or with --no-lexicon) ranks open play with
the learned ranker and a frequency prior (pictorank.lexicon.with_prior).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pictorank.artifacts import check_files, check_versions, hash_files, library_versions, read_json, write_json
from pictorank.errors import ModelError
from pictorank.encoders import StoredVectors
from pictorank.features import feature_names
from pictorank.features.gloss import GLOSS_COLUMNS
from pictorank.open_play.columns import OPEN_PLAY_COLUMNS, add_open_play_columns
from pictorank.query import Query
from pictorank.ranker.bag import BoosterBag
from pictorank.ranker.explain import Explanation, short_name
from pictorank.ranker.base import CONFIG_FILE
from pictorank.ranker.learned import METADATA_FILE, LearnedRanker

if TYPE_CHECKING:
    import pandas as pd

OPEN_PLAY_DIR = "open_play"


class OpenPlayRanker(LearnedRanker):
    """LambdaMART over the learned ranker's columns and the words' own, for lexicon candidates.

    Parameters
    ----------
    learned : the model's learned ranker, whose extractor, encoders and blend it shares.
    booster : the fitted boosters (pictorank.train.open_play).
    feature_names : the columns they read: extractor columns and WORD_COLUMNS.
    zipf : each lexicon word's Zipf frequency (the service's lexicon; a word it lacks counts as
        the rarest of the clue's candidates).
    training : how the boosters were fitted, saved as metadata.json.
    glosses : the base encoder's vectors of the lexicon words' glosses (pictorank.lexicon.store),
        for the GLOSS_COLUMNS; a word without one, or every word when None, gets no value there.
    """

    method = "open_play"

    def __init__(self, learned: LearnedRanker, booster: BoosterBag, feature_names: Sequence[str],
                 zipf: Mapping[str, float] | None = None, training: dict[str, Any] | None = None,
                 glosses: StoredVectors | None = None) -> None:
        super().__init__(learned.extractor, booster, feature_names, learned.finetuned_model, learned.num_threads,
                         training, calibrator=None, fallback=learned.fallback, quantization=learned.quantization,
                         finetuned_id=learned.finetuned_id)
        self.zipf: Mapping[str, float] = zipf or {}
        self.glosses = glosses

    def _features(self, queries: Sequence[Query]) -> "pd.DataFrame":
        # the extractor's base encoder: its memo holds the clue's vectors the columns above encoded
        return add_open_play_columns(super()._features(queries), queries, self.zipf, self.extractor.base_encoder,
                                     self.glosses, self.feature_names)

    def _explained(self, queries: Sequence[Query], table: np.ndarray, scores: list[np.ndarray],
                   top_k: int) -> list[list[Explanation]]:
        """The learned ranker's explanations, each sentence led by what singles the guess out among
        the lexicon's candidates (`guess_reasons`): every candidate is near the clue, so the
        hints' pulls alone read the same for all of them."""
        explained = super()._explained(queries, table, scores, top_k)
        start = 0
        for query, query_scores, explanations in zip(queries, scores, explained):
            shown = np.argsort(-query_scores, kind="stable")[:top_k]
            for at, (row, explanation) in enumerate(zip(shown, explanations)):
                values = dict(zip(self.feature_names, table[start + row].tolist()))
                reasons = guess_reasons(values, query.hints)
                if reasons:
                    summary = "; ".join([*reasons, explanation.summary])
                    explanations[at] = Explanation(explanation.option, explanation.hints, explanation.pulls,
                                                   explanation.groups, summary)
            start += len(query.options)
        return explained

    def save(self, directory: str | os.PathLike, metadata: dict[str, Any] | None = None, force: bool = False,
             vocabulary: tuple[Sequence[str], Sequence[str]] = ((), ())) -> None:
        """Write open_play/ into the learned model's `directory` (the encoders and extractor are
        that model's: nothing else is written). `force` and `vocabulary` do not apply."""
        folder = Path(directory) / OPEN_PLAY_DIR
        folder.mkdir(exist_ok=True)
        for stale in folder.glob("*"):
            stale.unlink()
        self.booster.save(folder)
        write_json(folder / METADATA_FILE, {**self.training, **(metadata or {})})
        config = {"method": self.method, "params": {"feature_names": self.feature_names, "boosters": len(self.booster)},
                  "versions": library_versions(), "files": hash_files(folder, skip=CONFIG_FILE)}
        write_json(folder / CONFIG_FILE, config)  # last: a half-written folder has no config and is not read

    @staticmethod
    def reads_glosses(directory: Path) -> bool:
        """Whether the open-play ranker saved in `directory` was fitted with gloss columns, and so
        on candidates found by their glosses too (the service then searches so); False without
        one, or with one it cannot read (loading it says what is wrong)."""
        try:
            names = read_json(directory / OPEN_PLAY_DIR / CONFIG_FILE)["params"]["feature_names"]
        except (OSError, ValueError, KeyError, TypeError, ModelError):
            return False
        return isinstance(names, list) and any(name in GLOSS_COLUMNS for name in names)

    @classmethod
    def load_beside(cls, directory: Path, learned: LearnedRanker, zipf: Mapping[str, float] | None = None,
                    glosses: StoredVectors | None = None) -> "OpenPlayRanker | None":
        """The open-play ranker saved in the learned model's `directory`; None when it has none.
        A damaged or mismatched one is a ModelError."""
        folder = directory / OPEN_PLAY_DIR
        where = folder / CONFIG_FILE
        if not where.exists():
            return None
        config = read_json(where)  # refuses a FIFO or a device rather than hanging on it
        params = config.get("params") if isinstance(config, dict) else None
        if not isinstance(params, dict) or config.get("method") != cls.method:
            raise ModelError(f"{where}: not an open-play ranker config; retrain the model with `pictorank train`")
        check_versions(config.get("versions"), where)
        check_files(folder, config.get("files"), where)
        names = params.get("feature_names")
        known = {*feature_names(), *OPEN_PLAY_COLUMNS}
        if not isinstance(names, list) or not names or any(n not in known for n in names):
            raise ModelError(f"{where}: feature_names must name columns this pictorank computes")
        count = params.get("boosters")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ModelError(f"{where}: params.boosters must be a positive integer, found {count!r}")
        booster = BoosterBag.load(folder, count)
        if booster.feature_name() != names:
            raise ModelError(f"{folder}: the boosters' features differ from {CONFIG_FILE}")
        training = read_json(folder / METADATA_FILE)
        return cls(learned, booster, names, zipf, training if isinstance(training, dict) else {}, glosses)


COMMON, RARE = 1.0, -1.0  # a candidate's frequency this many standard deviations from its clue's others


def guess_reasons(values: Mapping[str, float], hints: Sequence[str]) -> list[str]:
    """What a guess's own columns say of it among a clue's lexicon candidates: WordNet files it
    under the main idea, its definition names the main idea (or other hints), it is a far more
    common or rarer word than the others. Only what the columns hold (NaN: unknown, nothing said)."""
    main = f"'{short_name(hints[0])}'" if hints else "the main idea"
    reasons = []
    if values.get("wn_kind_first") == 1.0:
        reasons.append(f"a kind of {main}")
    if values.get("wn_gloss_first") == 1.0:
        reasons.append(f"its definition names {main}")
    elif (share := values.get("wn_gloss_hints", 0.0)) > 0 and len(hints) > 1:
        reasons.append(f"its definition names {round(share * len(hints))} of the hints")
    frequency = values.get("open_zipf_z", 0.0)
    if frequency >= COMMON:
        reasons.append("a common word")
    elif frequency <= RARE:
        reasons.append("a rare word")
    return reasons
