"""The entry point: a signal while the CLI is still importing ends in one line, not a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pictorank.__main__ as entry
from helpers import PICTORANK, ROOT


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


# From 0.3 s on: before that, on a busy machine, the signal may still meet the interpreter's own
# start-up, the window the entry point cannot cover (see pictorank.__main__).
@pytest.mark.parametrize("delay", [0.3, 1.0])
@pytest.mark.parametrize(("signum", "line", "status"), [(signal.SIGINT, "pictorank: interrupted", 130),
                                                       (signal.SIGTERM, "pictorank: terminated", 143)])
def test_a_signal_soon_after_launch_is_one_line(tmp_path: Path, delay: float, signum: int, line: str,
                                                status: int) -> None:
    """Before the CLI had imported, Ctrl-C gave a traceback and SIGTERM killed silently. The command
    waits on a FIFO nobody writes, so the signal always finds it running."""
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    process = subprocess.Popen([PICTORANK, "validate", "--submission", str(fifo), "--input", str(fifo)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(delay)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (process.returncode, err) == (status, line + "\n")
