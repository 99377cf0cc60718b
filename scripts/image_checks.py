"""The image test's HTTP checks, run from outside the container against its port.

Why a separate file: scripts/image_test.sh builds and starts the image; what a client sees is
easier to state (and to read when it fails) in Python. Standard library only, so it runs with any
python3 on the host, without the project installed.

    python3 scripts/image_checks.py http://127.0.0.1:PORT [expected.csv]

expected.csv (datapointID,subtaskID,answer, as `pictorank predict` writes) holds the same model's
rankings made outside the image: the first place of each row must agree.
"""

from __future__ import annotations

import csv
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

VAL = Path(__file__).resolve().parents[1] / "data" / "bliss" / "val.csv"
COMPARED_ROWS = 50
SUGGEST_WAIT = 120.0  # seconds


def request(base: str, path: str, body: Any = None) -> tuple[int, bytes, str]:
    """Status, body and content type of one GET (no body) or POST (a JSON body)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("Content-Type", "")


def post_json(base: str, path: str, body: Any, wait: float = 0.0) -> Any:
    """The JSON answer of a POST that must succeed; a 503 (still loading) is retried for `wait` s."""
    deadline = time.monotonic() + wait
    status, raw, _ = request(base, path, body)
    while status == 503 and time.monotonic() < deadline:
        time.sleep(0.5)
        status, raw, _ = request(base, path, body)
    if status != 200:
        raise AssertionError(f"POST {path}: {status} {raw[:300]!r}")
    return json.loads(raw)


def check(name: str, passed: bool, detail: str = "") -> bool:
    print(f"{'ok  ' if passed else 'FAIL'} {name}{': ' + detail if detail else ''}")
    return passed


def val_rows() -> list[dict[str, str]]:
    with open(VAL, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))[:COMPARED_ROWS]


def same_first_places(base: str, expected_csv: str) -> bool:
    """/rank/batch on val's first rows against the same model's rankings made outside the image."""
    rows = val_rows()
    puzzles = [{"hints": json.loads(r["hints_json"]), "options": json.loads(r["options_json"])} for r in rows]
    answers = post_json(base, "/rank/batch", {"puzzles": puzzles})["results"]
    with open(expected_csv, newline="", encoding="utf-8") as handle:
        expected = {r["datapointID"]: r["answer"].split("|")[0] for r in csv.DictReader(handle)}
    differ = [r["datapointID"] for r, a in zip(rows, answers) if a["ranking"][0] != expected[r["datapointID"]]]
    return check(f"/rank first places equal the model's outside the image ({len(rows)} val rows)", not differ,
                 f"differ: {differ[:5]}" if differ else "")


def open_vocabulary(base: str) -> bool:
    """/rank without options guesses words, from the model folder's lexicon when /health names one."""
    status, raw, _ = request(base, "/health")
    health = json.loads(raw) if status == 200 else {}
    guess = post_json(base, "/rank", {"hint_texts": ["flower", "sun"], "top_k": 5})
    words = guess.get("ranking", [])
    return check("/rank without options", guess.get("mode") == "open_vocabulary" and len(words) == 5,
                 f"guesses {words}; lexicon {health.get('lexicon_size')} words ({health.get('lexicon_source')})")


def main(base: str, expected_csv: str | None) -> int:
    results = []
    rank = post_json(base, "/rank", {"hints": [325, 636], "options": ["sunflower", "tulip", "hammer", "river"]})
    results.append(check("/rank with pictogram ids", len(rank["ranking"]) == 4, f"first {rank['ranking'][0]!r}"))
    text = post_json(base, "/rank", {"hint_texts": ["flower", "sun"], "options": ["sunflower", "moon", "rose"]})
    results.append(check("/rank with free text", text["ranking"][0] == "sunflower", f"ranking {text['ranking']}"))
    # The clue-giver loads after /ready (rankings come first): its own 503 says so until then.
    suggest = post_json(base, "/suggest", {"word": "sunflower", "top": 2}, wait=SUGGEST_WAIT)
    results.append(check("/suggest", len(suggest["suggestions"]) >= 1,
                         f"first clue {[p['description'] for p in suggest['suggestions'][0]['pictograms']]}"))
    results.append(open_vocabulary(base))
    rerank = post_json(base, "/v1/rerank", {"query": "flower; sun", "documents": ["hammer", "sunflower", "river"]})
    order = [result["index"] for result in rerank["results"]]
    results.append(check("/v1/rerank", order[0] == 1, f"documents in order {order}"))
    status, page, kind = request(base, "/")
    results.append(check("game page", status == 200 and "text/html" in kind and b"<html" in page.lower(), f"{status} {kind}"))
    status, icon, kind = request(base, "/hints/325/icon")
    results.append(check("pictogram icon", status == 200 and "svg" in kind and b"<svg" in icon, f"{status} {kind}, {len(icon)} bytes"))
    status, raw, _ = request(base, "/rank", {"hints": "not a list"})
    results.append(check("bad input is a 4xx", 400 <= status < 500, f"{status}"))
    if expected_csv:
        results.append(same_first_places(base, expected_csv))
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
