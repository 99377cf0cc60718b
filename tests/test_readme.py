"""README.md stays a user's guide: its settings table matches the code, it stays short, and it
holds no commit hash or time of day (those belong in docs/history.md and docs/experiments/)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
START = "<!-- settings-table:start -->"
END = "<!-- settings-table:end -->"
MAX_LINES = 300


def _settings_table() -> str:
    spec = importlib.util.spec_from_file_location("settings_table", REPO / "scripts" / "settings_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.settings_table()


def test_settings_table_is_up_to_date() -> None:
    readme = README.read_text(encoding="utf-8")
    assert readme.count(START) == 1 and readme.count(END) == 1, f"README.md needs one {START} and one {END} line"
    between = readme.split(START, 1)[1].split(END, 1)[0]
    assert between.strip() == _settings_table().strip(), "run python scripts/settings_table.py and paste its output"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines, at most {MAX_LINES}: move details to docs/"


def test_readme_has_no_commit_hash_or_time() -> None:
    readme = README.read_text(encoding="utf-8")
    found = re.search(r"[0-9a-f]{7,}|UTC", readme)
    assert found is None, f"README.md holds {found.group()!r}: hashes and times belong in docs/history.md"
