from __future__ import annotations

import numpy as np
import pytest

from helpers import puzzle_row, write_rows
from pictorank.cli import main
from pictorank.lexicon import store
from pictorank.ranker.unlearned import CosineRanker


@pytest.mark.slow
def test_the_lexicon_command_stores_a_word_list_and_the_data_words(tmp_path, base_model, capsys) -> None:
    model_dir = tmp_path / "model"
    CosineRanker().save(model_dir)
    words = tmp_path / "words.tsv"
    words.write_text("okapi\t2.9\nzebra\t3.4\n", encoding="utf-8")
    data = write_rows(tmp_path / "data.csv", [puzzle_row(choices=("seal", "fish"))])
    args = ["lexicon", "--model", str(model_dir), "--lexicon", str(words), "--space", "base",
            "--vocabulary", str(data), "--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 0
    assert "stored 4 words and 4 glosses" in capsys.readouterr().out  # WordNet defines all four
    stored = store.load(model_dir)
    assert stored is not None and stored.lexicon.words == ("okapi", "zebra", "fish", "seal")
    assert stored.lexicon.source == str(words) and stored.space == "base"
    expected = base_model.encode(list(stored.lexicon.words), normalize_embeddings=True)
    assert np.abs(stored.vectors["base"].all() - expected).max() < 0.02
    assert stored.glosses is not None and set(stored.glosses.texts) == set(stored.lexicon.words)


def test_the_lexicon_command_refuses_a_missing_model_or_a_fine_tuned_space_it_lacks(tmp_path, capsys) -> None:
    assert main(["lexicon", "--model", str(tmp_path / "none")]) == 2
    assert "model directory not found" in capsys.readouterr().err
    CosineRanker().save(tmp_path / "model")
    assert main(["lexicon", "--model", str(tmp_path / "model"), "--space", "ft", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "no fine-tuned encoder" in err and len(err.strip().splitlines()) == 1


def test_a_read_only_model_folder_is_refused_before_any_embedding(tmp_path, monkeypatch, capsys) -> None:
    """On a read-only folder `pictorank lexicon` worked for minutes, then ended in an OSError
    traceback: it is refused up front, in one line (exit 2). (Root may write anywhere, so the
    folder's read-only state is what os.access reports.)"""
    import os

    from pictorank.cli import main

    model = tmp_path / "model"
    model.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(model) else real_access(path, mode))
    assert main(["lexicon", "--model", str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read-only" in err
