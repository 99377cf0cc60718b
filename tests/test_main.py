"""The entry point: a Ctrl-C while the CLI is still importing ends in one line, not a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import pictorank.__main__ as entry


def test_the_entry_point_runs_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.csv")
    monkeypatch.setattr(sys, "argv", ["pictorank", "validate", "--submission", missing, "--input", missing])
    assert entry.main() == 2
    assert capsys.readouterr().err.startswith("pictorank: error:")


def test_ctrl_c_while_the_cli_imports_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(entry.importlib, "import_module", interrupted)
    assert entry.main() == 130
    assert capsys.readouterr().err == "pictorank: interrupted\n"
