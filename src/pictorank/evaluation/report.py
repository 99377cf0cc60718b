"""A visual evaluation report: several methods ranked on the same puzzles, side by side.

`write_report(DIR, puzzles, rankings_by_method, vocab)` writes DIR/report.html, DIR/metrics.json
and PNG plots next to them (relative links, no CDN: the folder can be copied or opened offline).
Everything is written into a temporary folder beside DIR which then replaces DIR, so a crash
half-way never leaves a half report behind.

The metrics come from :func:`pictorank.evaluation.evaluate.evaluate_rankings`; this module only groups,
plots and lays them out.
"""

from __future__ import annotations

import html
import json
import os
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from pictorank.artifacts import check_replaceable, replacing_dir
from pictorank.errors import training_stack
from pictorank.evaluation.evaluate import evaluate_rankings, summarise
from pictorank.evaluation.significance import compare_with_reference, format_interval, format_p_value
from pictorank.puzzles import HintVocabulary, Puzzle

METRIC_NAMES = ("score", "hits@10", "ndcg@10", "hits@1", "mrr")
METRIC_LABELS = {"score": "score", "hits@10": "Hits@10", "ndcg@10": "NDCG@10", "hits@1": "Hits@1", "mrr": "MRR"}
WORST_COUNT = 15


# ----------------------------------------------------------------------------------------------
# Numbers: everything the report shows, as plain JSON-able data
# ----------------------------------------------------------------------------------------------


def _grouped(puzzles: Sequence[Puzzle], ranks: Sequence[int | None], key: Callable[[Puzzle], int]) -> dict[str, dict]:
    """Metrics of the puzzles grouped by `key` (e.g. number of hints), keys sorted numerically."""
    groups: dict[int, list[int | None]] = defaultdict(list)
    for puzzle, rank in zip(puzzles, ranks):
        groups[key(puzzle)].append(rank)
    return {str(k): summarise(groups[k]) for k in sorted(groups)}


def _rank_counts(ranks: Sequence[int | None]) -> dict[str, int]:
    """How often the answer came at each 1-based position; 'absent' when it was not ranked."""
    counts: dict[str, int] = defaultdict(int)
    for rank in ranks:
        counts["absent" if rank is None else str(rank + 1)] += 1
    numeric = sorted((k for k in counts if k != "absent"), key=int)
    ordered = {k: counts[k] for k in numeric}
    if "absent" in counts:
        ordered["absent"] = counts["absent"]
    return ordered


def _worst(
    puzzles: Sequence[Puzzle], rankings: Sequence[Sequence[str]], ranks: Sequence[int | None], vocab: HintVocabulary, count: int
) -> list[dict[str, Any]]:
    """The `count` puzzles whose answer came last, relative to their number of options.

    Sorting by the answer's relative position (rank / options) rather than the raw rank keeps
    4-option puzzles in the list: being 4th of 4 is as wrong as 30th of 30.
    """

    def badness(i: int) -> tuple[float, int]:
        rank = ranks[i]
        n = len(puzzles[i].options)
        return (1.0 if rank is None else rank / max(n - 1, 1), n)

    order = sorted(range(len(puzzles)), key=badness, reverse=True)[:count]
    return [
        {
            "datapointID": puzzles[i].datapoint_id,
            "subtask": puzzles[i].subtask_id,
            "hints": vocab.describe(puzzles[i].hints),
            "answer": puzzles[i].answer,
            "answer_rank": None if ranks[i] is None else ranks[i] + 1,
            "options": len(puzzles[i].options),
            "top": list(rankings[i][:3]),
        }
        for i in order
    ]


def build_metrics(
    puzzles: Sequence[Puzzle],
    rankings_by_method: Mapping[str, Sequence[Sequence[str]]],
    vocab: HintVocabulary,
    worst_count: int = WORST_COUNT,
    against: str | None = None,
) -> dict[str, Any]:
    """All the report's numbers for every method: what metrics.json holds. With two methods or
    more, `paired` compares the others with `against` (default: cosine, when present) puzzle by
    puzzle (`pictorank.evaluation.significance`)."""
    if not rankings_by_method:
        raise ValueError("a report needs at least one method's rankings")
    if against is not None and against not in rankings_by_method:
        raise ValueError(f"against={against!r} is not one of the methods")
    methods: dict[str, Any] = {}
    zero_based: dict[str, list[int | None]] = {}
    for name, rankings in rankings_by_method.items():
        if len(rankings) != len(puzzles):
            raise ValueError(f"method {name!r}: {len(rankings)} rankings for {len(puzzles)} puzzles")
        result = evaluate_rankings(puzzles, rankings)
        ranks = zero_based[name] = result["ranks"]
        methods[name] = {
            "overall": result["overall"],
            "by_subtask": result["by_subtask"],
            "by_hint_count": _grouped(puzzles, ranks, lambda p: len(p.hints)),
            "by_option_count": _grouped(puzzles, ranks, lambda p: len(p.options)),
            "rank_counts": _rank_counts(ranks),
            "worst": _worst(puzzles, rankings, ranks, vocab, worst_count),
            "ranks": {p.datapoint_id: (None if r is None else r + 1) for p, r in zip(puzzles, ranks)},
        }
    paired = [c.to_dict() for c in compare_with_reference(zero_based, against)]
    return {"rows": len(puzzles), "methods": methods, "paired": paired}


# ----------------------------------------------------------------------------------------------
# Plots (matplotlib, Agg backend: no display needed)
# ----------------------------------------------------------------------------------------------


def _pyplot():
    """pyplot on the Agg backend. Lazy: matplotlib is slow to import and only report writing
    needs it (a serving install has none); the backend must be chosen before pyplot is first
    imported."""
    with training_stack("writing a report's figures"):
        import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grouped_bars(ax, groups: Sequence[str], series: Mapping[str, Sequence[float]], ylabel: str) -> list:
    """One cluster of bars per group, one bar per series; returns the series' bars, for the legend."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    handles = []
    for i, values in enumerate(series.values()):
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width)
        handles.append(bars)
        if len(groups) * len(series) <= 24:
            ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.set_xticks(x, groups)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return handles


def _legend_labels(names: Sequence[str]) -> list[str]:
    """Method names as matplotlib must be given them to print them as typed: a `$` would start
    maths notation (a model folder `m$x$`), and labels are passed with their handles, since a
    label of its own starting with `_` (`--model _runs/a`) is left out of a legend."""
    return [name.replace("$", r"\$") for name in names]


def _legend_outside(fig, handles: list, names: Sequence[str]) -> None:
    """The methods' legend to the right of every plot, never over a bar or its value label: the
    figure widens by the legend's width."""
    legend = fig.legend(handles, _legend_labels(names), loc="upper left", bbox_to_anchor=(1.0, 0.98),
                        title="method", fontsize=8, title_fontsize=8, frameon=False)
    fig.canvas.draw()
    extra = legend.get_window_extent().width / fig.dpi + 0.1
    width, height = fig.get_size_inches()
    fig.set_size_inches(width + extra, height)
    fig.subplots_adjust(left=fig.subplotpars.left * width / (width + extra),
                        right=fig.subplotpars.right * width / (width + extra))
    legend.set_bbox_to_anchor((width / (width + extra), 0.98))


def _save(fig, path: Path) -> None:
    """Write the figure (the legend included) and free it."""
    fig.savefig(path, dpi=100)
    _pyplot().close(fig)


def plot_metrics(metrics: dict[str, Any], path: Path) -> None:
    """Grouped bars of every metric per method: overall, then one panel per subtask."""
    plt = _pyplot()
    methods = metrics["methods"]
    first = next(iter(methods.values()))
    subsets = [("all puzzles", "overall", None)] + [(f"subtask {s}", "by_subtask", s) for s in first["by_subtask"]]
    cols = 2 if len(subsets) > 1 else 1
    rows = (len(subsets) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.2 * rows), squeeze=False)
    labels = [METRIC_LABELS[m] for m in METRIC_NAMES]
    handles: list = []
    for ax, (title, field, key) in zip(axes.flat, subsets):
        series = {}
        for name, data in methods.items():
            values = data[field] if key is None else data[field][key]
            series[name] = [values[m] for m in METRIC_NAMES]
        rows_in = (first[field] if key is None else first[field][key])["rows"]
        bars = _grouped_bars(ax, labels, series, "mean over puzzles")
        handles = handles or bars  # every panel has the same series: the first one's make the legend
        ax.set_ylim(0, 1.12)
        ax.set_title(f"{title} ({rows_in} puzzles)")
        ax.set_xlabel("metric")
    for ax in list(axes.flat)[len(subsets) :]:
        ax.set_visible(False)
    fig.suptitle("Metrics per method (higher is better)", x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    _legend_outside(fig, handles, list(methods))
    _save(fig, path)


def _position_group(position: str) -> str:
    """Positions 1-10 one by one (they decide the task's score), later ones in tens."""
    if position == "absent" or int(position) <= 10:
        return position
    low = (int(position) - 1) // 10 * 10 + 1
    return f"{low}-{low + 9}"


def plot_rank_histogram(metrics: dict[str, Any], path: Path) -> None:
    """How often the answer came 1st, 2nd, ... for each method (bars side by side)."""
    plt = _pyplot()
    methods = metrics["methods"]
    counts: dict[str, dict[str, int]] = {}
    for name, data in methods.items():
        counts[name] = defaultdict(int)
        for position, n in data["rank_counts"].items():
            counts[name][_position_group(position)] += n
    seen = {g for c in counts.values() for g in c}
    groups = sorted((g for g in seen if g != "absent"), key=lambda g: int(g.split("-")[0]))
    groups += ["absent"] if "absent" in seen else []
    series = {name: [counts[name].get(g, 0) for g in groups] for name in methods}
    fig, ax = plt.subplots(figsize=(10, 4.5))
    handles = _grouped_bars(ax, groups, series, "number of puzzles")
    ax.set_xlabel("position of the answer in the ranking (1 = ranked first; past 10 grouped by tens)")
    ax.set_title(f"Where the answer was ranked ({metrics['rows']} puzzles)")
    fig.tight_layout()
    _legend_outside(fig, handles, list(series))
    _save(fig, path)


def plot_hits1_by(metrics: dict[str, Any], field: str, xlabel: str, path: Path) -> None:
    """Hits@1 per method for each group of `field` (by_hint_count / by_option_count)."""
    plt = _pyplot()
    methods = metrics["methods"]
    first = next(iter(methods.values()))[field]
    groups = list(first)
    series = {name: [data[field][g]["hits@1"] for g in groups] for name, data in methods.items()}
    fig, ax = plt.subplots(figsize=(max(6.5, 1.1 * len(groups) * max(len(series), 1) / 2 + 3), 4.2))
    handles = _grouped_bars(ax, [f"{g}\n(n={first[g]['rows']})" for g in groups], series, "Hits@1 (answer ranked first)")
    ax.set_ylim(0, 1.12)
    ax.set_xlabel(xlabel)
    ax.set_title(f"Hits@1 by {xlabel}")
    fig.tight_layout()
    _legend_outside(fig, handles, list(series))
    _save(fig, path)


PLOTS = {
    "metrics.png": lambda m, p: plot_metrics(m, p),
    "rank_histogram.png": lambda m, p: plot_rank_histogram(m, p),
    "hits1_by_hints.png": lambda m, p: plot_hits1_by(m, "by_hint_count", "number of hints", p),
    "hits1_by_options.png": lambda m, p: plot_hits1_by(m, "by_option_count", "number of options", p),
}


# ----------------------------------------------------------------------------------------------
# HTML
# ----------------------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { font-weight: bold; background: #e8f4e8; }
th { background: #f2f2f2; }
img { max-width: 100%; height: auto; border: 1px solid #eee; margin: 0.5rem 0 1rem; }
.meta { color: #555; font-size: 0.9rem; }
ol.hints { margin: 0; padding-left: 1.2rem; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _metrics_table(metrics: dict[str, Any]) -> str:
    """Every method and subset in one table; the best value of each subset and metric in bold."""
    methods = metrics["methods"]
    first = next(iter(methods.values()))
    subsets = [("all", lambda d: d["overall"])] + [
        (f"subtask {s}", lambda d, s=s: d["by_subtask"][s]) for s in first["by_subtask"]
    ]
    head = "".join(f"<th>{METRIC_LABELS[m]}</th>" for m in METRIC_NAMES)
    lines = [f"<table><tr><th>subset</th><th>method</th><th>rows</th>{head}</tr>"]
    for label, pick in subsets:
        best = {m: max(pick(d)[m] for d in methods.values()) for m in METRIC_NAMES}
        for name, data in methods.items():
            values = pick(data)
            cells = "".join(
                f'<td class="num{" best" if len(methods) > 1 and values[m] == best[m] else ""}">{values[m]:.4f}</td>'
                for m in METRIC_NAMES
            )
            lines.append(f'<tr><td>{_e(label)}</td><td>{_e(name)}</td><td class="num">{values["rows"]}</td>{cells}</tr>')
    lines.append("</table>")
    return "\n".join(lines)


def _paired_section(paired: Sequence[dict[str, Any]]) -> str:
    """Each method against the reference, puzzle by puzzle (empty without a reference)."""
    if not paired:
        return ""
    lines = [
        f"<h2>Puzzle by puzzle against {_e(paired[0]['reference'])}</h2>",
        "<p>First places only one of the two methods got (an exact McNemar test: how likely a split at "
        "least this uneven is by chance), and the mean differences of Hits@1 and of the task's score with "
        "their 95% bootstrap intervals (how large a loss or gain these puzzles still allow). A gap of means "
        "on a few hundred puzzles is often chance.</p>",
        "<table><tr><th>method</th><th>rows</th><th>first places won</th><th>first places lost</th>"
        "<th>McNemar p</th><th>Hits@1 difference [95% interval]</th><th>score difference [95% interval]</th></tr>",
    ]
    for c in paired:
        hits1 = format_interval(c["hits1_difference"], c["hits1_low"], c["hits1_high"], 3)
        score = format_interval(c["score_difference"], c["score_low"], c["score_high"])
        p_value = _e(format_p_value(c["p_value"]))
        lines.append(f'<tr><td>{_e(c["method"])}</td><td class="num">{c["rows"]}</td><td class="num">{c["wins"]}</td>'
                     f'<td class="num">{c["losses"]}</td><td class="num">{p_value}</td><td class="num">{hits1}</td>'
                     f'<td class="num">{score}</td></tr>')
    lines.append("</table>")
    return "\n".join(lines)


def _worst_table(worst: Sequence[dict[str, Any]]) -> str:
    lines = [
        "<table><tr><th>puzzle</th><th>subtask</th><th>hints (main idea first)</th><th>answer</th>"
        "<th>answer's position</th><th>ranked first (top 3)</th></tr>"
    ]
    for row in worst:
        hints = "".join(f"<li>{_e(h)}</li>" for h in row["hints"])
        position = "absent" if row["answer_rank"] is None else f"{row['answer_rank']} of {row['options']}"
        lines.append(
            f"<tr><td>{_e(row['datapointID'])}</td><td class=\"num\">{row['subtask']}</td>"
            f'<td><ol class="hints">{hints}</ol></td><td><b>{_e(row["answer"])}</b></td>'
            f'<td class="num">{position}</td><td>{_e(", ".join(row["top"]))}</td></tr>'
        )
    lines.append("</table>")
    return "\n".join(lines)


def render_html(metrics: dict[str, Any]) -> str:
    """The report page; images are referenced by relative path so the folder stays portable."""
    info = metrics.get("info", {})
    meta = "".join(f"<li>{_e(k)}: {_e(v)}</li>" for k, v in info.items())
    worst_sections = "\n".join(
        f"<h3>{_e(name)}</h3>\n{_worst_table(data['worst'])}" for name, data in metrics["methods"].items()
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pictorank evaluation report</title>
<style>{STYLE}</style>
</head>
<body>
<h1>pictorank evaluation report</h1>
<ul class="meta">{meta}<li>puzzles: {metrics['rows']}</li><li>methods: {_e(', '.join(metrics['methods']))}</li></ul>
<p>score = 0.9 &times; Hits@10 + 0.1 &times; NDCG@10 (the task's metric). With 10 options or fewer Hits@10 is
always 1, so Hits@1 and MRR separate methods there. The numbers are also in
<a href="metrics.json">metrics.json</a>.</p>

<h2>Metrics per method</h2>
{_metrics_table(metrics)}
<img src="metrics.png" alt="Grouped bar chart of every metric per method, overall and per subtask">
{_paired_section(metrics.get("paired", []))}

<h2>Where the answer was ranked</h2>
<img src="rank_histogram.png" alt="Histogram of the answer's position in the ranking, per method">

<h2>Hits@1 by number of hints and of options</h2>
<img src="hits1_by_hints.png" alt="Hits@1 per method by number of hints">
<img src="hits1_by_options.png" alt="Hits@1 per method by number of options">

<h2>Worst-ranked puzzles</h2>
<p>Per method, the {WORST_COUNT} puzzles whose answer came furthest down relative to the number of
options, with the hint descriptions in clue order and what was ranked first instead.</p>
{worst_sections}
</body>
</html>
"""


# ----------------------------------------------------------------------------------------------
# Writing the folder
# ----------------------------------------------------------------------------------------------


def write_report(
    directory: str | os.PathLike,
    puzzles: Sequence[Puzzle],
    rankings_by_method: Mapping[str, Sequence[Sequence[str]]],
    vocab: HintVocabulary,
    info: Mapping[str, Any] | None = None,
    force: bool = False,
    against: str | None = None,
) -> Path:
    """Write report.html, metrics.json and the plots into `directory`; returns the report's path.

    `rankings_by_method` maps a method's display name to its full ranking of every puzzle (in the
    order of `puzzles`); `info` adds free key/value lines (input file, timings...) to the page.
    A folder pictorank did not write is only replaced with `force` (see `check_replaceable`).
    `against` names the method the others are compared with puzzle by puzzle (see build_metrics).
    """
    target = Path(directory)
    check_replaceable(target, force, kind="report")
    metrics = build_metrics(puzzles, rankings_by_method, vocab, against=against)
    metrics["info"] = {"generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), **dict(info or {})}
    with replacing_dir(target, force, kind="report") as work:
        for name, plot in PLOTS.items():
            plot(metrics, work / name)
        (work / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
        (work / "report.html").write_text(render_html(metrics), encoding="utf-8")
    return target / "report.html"
