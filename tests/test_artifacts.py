"""Versions stored with a model and the compatibility check made when loading it."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.artifacts import FORMAT_VERSION, check_files, check_versions, hash_files, library_versions


def test_library_versions() -> None:
    found = library_versions()
    assert found["format"] == FORMAT_VERSION
    assert found["numpy"] == np.__version__
    assert {"pictorank", "sentence-transformers", "lightgbm", "torch"} <= set(found)


def test_same_versions_pass() -> None:
    check_versions(library_versions(), "model/ranker.json")


def test_patch_difference_passes() -> None:
    major, minor = np.__version__.split(".")[:2]
    check_versions(library_versions() | {"numpy": f"{major}.{minor}.999"}, "m")


def test_unknown_package_version_is_not_checked() -> None:
    check_versions(library_versions() | {"lightgbm": None}, "m")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": 0}, f"m: model format 0, this pictorank reads format {FORMAT_VERSION}; retrain"),
        ({"sentence-transformers": "2.0.0"}, "m: made with sentence-transformers 2.0.0, installed is "),
    ],
)
def test_mismatch(change: dict, message: str) -> None:
    with pytest.raises(ModelError) as caught:
        check_versions(library_versions() | change, "m")
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("stored", [None, "1.0", [1]])
def test_not_a_mapping(stored: object) -> None:
    with pytest.raises(ModelError, match="m: versions must be a JSON object"):
        check_versions(stored, "m")  # type: ignore[arg-type]


def test_a_folder_is_replaced_only_by_its_own_kind(tmp_path) -> None:
    from pictorank.artifacts import check_replaceable, marker_kind, replacing_dir
    from pictorank.errors import DataError

    with replacing_dir(tmp_path / "report", kind="report") as staging:
        (staging / "report.html").write_text("<p>")
    assert marker_kind(tmp_path / "report") == "report"
    check_replaceable(tmp_path / "report", kind="report")
    with pytest.raises(DataError, match="holds a pictorank report, which writing a model here would replace"):
        check_replaceable(tmp_path / "report", kind="model")
    check_replaceable(tmp_path / "report", force=True, kind="model")


def test_a_destination_overlapping_an_input_is_refused_even_with_force(tmp_path) -> None:
    from pictorank.artifacts import check_replaceable
    from pictorank.errors import DataError

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.csv").write_text("x")
    for target in (tmp_path / "data", tmp_path, tmp_path / "data" / "train.csv"):
        with pytest.raises(DataError, match="which this command reads"):
            check_replaceable(target, force=True, inputs=[tmp_path / "data" / "train.csv"])
    check_replaceable(tmp_path / "data" / "out", inputs=[tmp_path / "data" / "train.csv"])  # beside it is fine


@pytest.mark.parametrize("force", [False, True])
def test_a_folder_is_replaced_through_a_symlink_to_it(tmp_path, force: bool) -> None:
    """A link to the folder was replaced by a real folder, and a `.NAME.old-*` link left behind."""
    from pictorank.artifacts import MARKER_FILE, replacing_dir

    real, links = tmp_path / "real" / "report", tmp_path / "links"
    real.mkdir(parents=True)
    links.mkdir()
    if force:  # a folder pictorank did not write
        (real / "notes.txt").write_text("foreign")
    else:
        with replacing_dir(real, kind="report") as staging:
            (staging / "report.html").write_text("old")
    (links / "report").symlink_to(real, target_is_directory=True)
    with replacing_dir(links / "report", force=force, kind="report") as staging:
        (staging / "report.html").write_text("new")
    assert (links / "report").is_symlink()
    assert (real / "report.html").read_text() == "new"
    assert sorted(p.name for p in real.iterdir()) == [MARKER_FILE, "report.html"]
    assert [p.name for p in links.iterdir()] == ["report"]
    assert [p.name for p in real.parent.iterdir()] == ["report"]


def test_a_json_file_nested_too_deep_is_a_model_error(tmp_path) -> None:
    from pictorank.artifacts import read_json

    (tmp_path / "clue_model.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelError, match="clue_model.json: missing or corrupt"):
        read_json(tmp_path / "clue_model.json")


def test_files_a_load_does_not_read_may_be_left_out_but_not_damaged(tmp_path) -> None:
    """A serving image leaves out the PyTorch weights an ONNX load does not read; what is there is
    still checked, and nothing outside the named folders may go missing."""
    (tmp_path / "encoder").mkdir()
    (tmp_path / "encoder" / "weights.bin").write_bytes(b"torch")
    (tmp_path / "model-0.txt").write_text("booster")
    hashes = hash_files(tmp_path, skip="ranker.json")
    where = tmp_path / "ranker.json"
    (tmp_path / "encoder" / "weights.bin").unlink()
    with pytest.raises(ModelError, match="weights.bin: missing"):
        check_files(tmp_path, hashes, where)
    check_files(tmp_path, hashes, where, unread=("encoder",))
    (tmp_path / "encoder" / "weights.bin").write_bytes(b"tampered")
    with pytest.raises(ModelError, match="corrupt"):
        check_files(tmp_path, hashes, where, unread=("encoder",))
    (tmp_path / "encoder" / "weights.bin").unlink()
    (tmp_path / "model-0.txt").unlink()
    with pytest.raises(ModelError, match="model-0.txt: missing"):
        check_files(tmp_path, hashes, where, unread=("encoder",))


def test_only_an_onnx_load_of_a_model_with_exports_skips_the_pytorch_weights() -> None:
    from pictorank.ranker.learned import unread_folders

    assert unread_folders({"runtime": {"spaces": {}}}, "onnx") == ("encoder",)
    assert unread_folders({"runtime": {"spaces": {}}}, "torch") == ()
    assert unread_folders({}, "onnx") == ()  # no exports: the PyTorch weights are what it runs on
