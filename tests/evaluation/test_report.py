"""The evaluation report from stub rankings: files, JSON content, HTML links, atomic replacement.

No model is loaded: rankings are built by hand so every expected number is known.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pictorank.errors import DataError
from pictorank.puzzles import HintVocabulary, Puzzle
from pictorank.evaluation.report import build_metrics, write_report

VOCAB = HintVocabulary({1: "animal", 2: "water", 3: "hair", 4: "flower", 5: "sun"})
PUZZLES = [
    Puzzle("p1", 1, (1, 2, 3), ("seal", "rose", "car", "tree"), "seal"),
    Puzzle("p2", 1, (4, 5), ("rose", "sunflower", "car", "tree"), "sunflower"),
    Puzzle("p3", 2, (1, 2), tuple(f"w{i}" for i in range(9)) + ("fish",), "fish"),
]
# "good" ranks answers 1st, 2nd, 1st; "bad" ranks them 4th, 1st, 10th.
GOOD = [["seal", "rose", "car", "tree"], ["rose", "sunflower", "car", "tree"], ["fish"] + [f"w{i}" for i in range(9)]]
BAD = [["rose", "car", "tree", "seal"], ["sunflower", "rose", "car", "tree"], [f"w{i}" for i in range(9)] + ["fish"]]
PLOTS = ("metrics.png", "rank_histogram.png", "hits1_by_hints.png", "hits1_by_options.png")


def test_metrics_per_method_and_group():
    metrics = build_metrics(PUZZLES, {"good": GOOD, "bad": BAD}, VOCAB)
    good, bad = metrics["methods"]["good"], metrics["methods"]["bad"]
    assert metrics["rows"] == 3
    assert good["overall"]["hits@1"] == pytest.approx(2 / 3)
    assert good["overall"]["mrr"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert bad["overall"]["hits@1"] == pytest.approx(1 / 3)
    assert set(good["by_subtask"]) == {"1", "2"}
    assert good["by_hint_count"]["2"]["hits@1"] == 0.5 and good["by_hint_count"]["2"]["rows"] == 2
    assert good["by_hint_count"]["3"]["hits@1"] == 1.0
    assert list(bad["by_option_count"]) == ["4", "10"]
    assert bad["by_option_count"]["10"]["hits@1"] == 0.0
    assert good["rank_counts"] == {"1": 2, "2": 1}
    assert bad["ranks"] == {"p1": 4, "p2": 1, "p3": 10}


def test_worst_puzzles_are_last_relative_to_options_with_descriptions():
    worst = build_metrics(PUZZLES, {"bad": BAD}, VOCAB, worst_count=2)["methods"]["bad"]["worst"]
    # p1 (4th of 4) and p3 (10th of 10) are both last; the larger puzzle comes first.
    assert [w["datapointID"] for w in worst] == ["p3", "p1"]
    assert worst[1]["hints"] == ["animal", "water", "hair"]
    assert worst[1]["answer"] == "seal" and worst[1]["answer_rank"] == 4
    assert worst[1]["top"] == ["rose", "car", "tree"]


def test_write_report_files_json_and_html(tmp_path: Path):
    out = tmp_path / "report"
    path = write_report(out, PUZZLES, {"good": GOOD, "bad": BAD}, VOCAB, {"input": "val.csv"})
    assert path == out / "report.html"
    for name in PLOTS:
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000, name
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["methods"]["good"]["overall"] == build_metrics(PUZZLES, {"good": GOOD}, VOCAB)["methods"]["good"]["overall"]
    assert saved["info"]["input"] == "val.csv"
    page = path.read_text()
    links = set(re.findall(r'(?:src|href)="([^"]+)"', page))
    assert links == set(PLOTS) | {"metrics.json"}  # relative, local, nothing from the internet
    assert all((out / link).is_file() for link in links)
    assert "<td>good</td>" in page and "<td>bad</td>" in page
    assert "sunflower" in page and "<li>animal</li>" in page
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_rewrite_replaces_old_report_and_failure_keeps_it(tmp_path: Path, monkeypatch):
    out = tmp_path / "report"
    write_report(out, PUZZLES, {"good": GOOD}, VOCAB)
    (out / "stale.txt").write_text("from an older run")
    write_report(out, PUZZLES, {"bad": BAD}, VOCAB)
    assert not (out / "stale.txt").exists()
    assert list(json.loads((out / "metrics.json").read_text())["methods"]) == ["bad"]

    def broken_html(metrics):
        raise RuntimeError("disk full")

    monkeypatch.setattr("pictorank.evaluation.report.render_html", broken_html)
    with pytest.raises(RuntimeError):
        write_report(out, PUZZLES, {"good": GOOD}, VOCAB)
    assert list(json.loads((out / "metrics.json").read_text())["methods"]) == ["bad"]  # old report intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_bad_destination_and_inputs(tmp_path: Path):
    file = tmp_path / "a_file"
    file.write_text("x")
    with pytest.raises(DataError, match="exists and is not a folder"):
        write_report(file, PUZZLES, {"good": GOOD}, VOCAB)
    with pytest.raises(DataError, match="a_file is a file"):
        write_report(file / "report", PUZZLES, {"good": GOOD}, VOCAB)


def test_a_folder_pictorank_did_not_write_is_kept_unless_forced(tmp_path: Path):
    """--report DIR used to empty DIR first: the user's files there were lost."""
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not written by pictorank.*--force"):
        write_report(keep, PUZZLES, {"good": GOOD}, VOCAB)
    assert (keep / "notes.txt").read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["keep"]
    write_report(keep, PUZZLES, {"good": GOOD}, VOCAB, force=True)
    assert not (keep / "notes.txt").exists() and (keep / "report.html").is_file()
    write_report(keep, PUZZLES, {"good": GOOD}, VOCAB)  # pictorank's own folder: replaced without --force
    empty = tmp_path / "empty"
    empty.mkdir()
    write_report(empty, PUZZLES, {"good": GOOD}, VOCAB)  # an empty folder holds nothing to lose
    with pytest.raises(ValueError, match="2 rankings for 3 puzzles"):
        build_metrics(PUZZLES, {"short": GOOD[:2]}, VOCAB)
    with pytest.raises(ValueError, match="at least one method"):
        build_metrics(PUZZLES, {}, VOCAB)


def test_cli_compare_writes_report_with_stub_rankers(tmp_path: Path, data_dir: Path, monkeypatch, capsys):
    """`pictorank compare --report` end to end, with the rankers replaced by a cheap stub."""
    from pictorank import cli
    from pictorank.ranker import Ranker

    class ReversedRanker(Ranker):
        method = "stub"

        def score(self, queries):
            return [list(range(len(q.options))) for q in queries]  # last option first

        def encoders(self):
            return []

    monkeypatch.setattr("pictorank.cli.make_ranker", lambda method, encoder=None: ReversedRanker())
    rows = (data_dir / "val.csv").read_text().splitlines()[:13]
    small = tmp_path / "small.csv"
    small.write_text("\n".join(rows) + "\n")
    out = tmp_path / "rep"
    code = cli.main(["compare", "--input", str(small), "--hints", str(data_dir / "hint_descriptions.csv"),
                     "--methods", "seed", "cosine", "--report", str(out), "--quiet", "--no-cache"])
    assert code == 0
    assert "subtask" in capsys.readouterr().out
    saved = json.loads((out / "metrics.json").read_text())
    assert list(saved["methods"]) == ["seed", "cosine"] and saved["rows"] == 12
    assert cli.main(["compare", "--input", str(small), "--hints", str(data_dir / "hint_descriptions.csv")]) == 2
    assert "nothing to compare" in capsys.readouterr().err


def test_paired_comparison_against_cosine_or_the_method_named():
    """Two methods or more: the others against cosine (or `against`) puzzle by puzzle, in JSON and HTML."""
    metrics = build_metrics(PUZZLES, {"good": GOOD, "cosine": BAD}, VOCAB)
    (paired,) = metrics["paired"]
    assert (paired["method"], paired["reference"], paired["rows"]) == ("good", "cosine", 3)
    assert (paired["wins"], paired["losses"]) == (2, 1)  # p1 and p3 only "good" has first; p2 only "cosine"
    assert build_metrics(PUZZLES, {"good": GOOD, "bad": BAD}, VOCAB)["paired"] == []  # no cosine, none named
    named = build_metrics(PUZZLES, {"good": GOOD, "bad": BAD}, VOCAB, against="good")["paired"]
    assert [(c["method"], c["losses"]) for c in named] == [("bad", 2)]
    with pytest.raises(ValueError, match="not one of the methods"):
        build_metrics(PUZZLES, {"good": GOOD}, VOCAB, against="cosine")


def test_report_html_shows_the_paired_table(tmp_path: Path):
    path = write_report(tmp_path / "r", PUZZLES, {"good": GOOD, "cosine": BAD}, VOCAB)
    page = path.read_text()
    assert "Puzzle by puzzle against cosine" in page and "McNemar" in page
    assert json.loads((tmp_path / "r" / "metrics.json").read_text())["paired"][0]["wins"] == 2
    alone = write_report(tmp_path / "alone", PUZZLES, {"good": GOOD}, VOCAB).read_text()
    assert "Puzzle by puzzle" not in alone


@pytest.mark.parametrize("name", ["_runs/a", "m$\\notacommand$"])
def test_method_names_are_drawn_as_typed(tmp_path: Path, monkeypatch, name: str):
    """A model folder named `_runs/a` was left out of the legend (and one method then crashed the
    report: a legend of 0 columns); `$...$` was read as maths notation, and a bad one crashed it."""
    import matplotlib.pyplot as plt

    legends: list[list[str]] = []
    close = plt.close

    def record(fig) -> None:
        found = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
        legends.extend([t.get_text() for t in legend.get_texts()] for legend in found if legend is not None)
        close(fig)

    monkeypatch.setattr(plt, "close", record)
    write_report(tmp_path / "report", PUZZLES, {name: GOOD}, VOCAB, {"input": "val.csv"})
    for fig in plt.get_fignums():
        close(fig)
    assert len(legends) == len(PLOTS)
    assert all([label.replace("\\$", "$") for label in labels] == [name] for labels in legends)


def test_legends_stand_outside_every_plot_and_hide_no_value_label(tmp_path: Path, monkeypatch):
    """Each figure's method legend overlaps no plot (so no bar and no value label) and stays in the figure."""
    from pictorank.evaluation import report

    checked: list[str] = []

    def check(fig, path: Path) -> None:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        [legend] = fig.legends
        box = legend.get_window_extent(renderer)
        labels = [text.get_window_extent(renderer) for ax in fig.axes for text in ax.texts]
        assert labels, "the plots carry value labels"
        for other in [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()] + labels:
            assert not box.overlaps(other), (path.name, box, other)
        assert box.x1 <= fig.bbox.x1 + 1 and box.y1 <= fig.bbox.y1 + 1, path.name
        checked.append(path.name)
        original_save(fig, path)

    original_save = report._save
    monkeypatch.setattr(report, "_save", check)
    names = {"good": GOOD, "bad": BAD, "a-rather-long-model-name": GOOD}
    write_report(tmp_path / "report", PUZZLES, names, VOCAB, {"input": "val.csv"})
    assert sorted(checked) == sorted(PLOTS)
