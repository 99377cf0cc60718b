"""The package's shape as docs/architecture.md describes it: checks a refactor must keep."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pictorank"
SETTINGS_MODULES = {SRC / "settings.py", SRC / "api" / "settings.py"}


def test_the_environment_is_read_only_by_the_settings_modules() -> None:
    """Every PICTORANK_* knob (and what workers inherit) goes through pydantic-settings: a module
    that reads os.environ itself escapes validation, the docs' settings table and the tests."""
    pattern = re.compile(r"\bos\.environ\b|\bgetenv\(|\bfrom os import .*environ")
    readers = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                     if path not in SETTINGS_MODULES and pattern.search(path.read_text(encoding="utf-8")))
    assert readers == []


def test_open_play_lives_in_its_own_package() -> None:
    """Retrieval and the candidate-count rule have one home (pictorank.open_play): the service
    and training call it rather than searching themselves."""
    rule = re.compile(r"\+ 20 \+|IndexFlatIP|IndexScalarQuantizer|omp_set_num_threads")
    elsewhere = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                       if "open_play" not in path.parts and rule.search(path.read_text(encoding="utf-8")))
    assert elsewhere == []
