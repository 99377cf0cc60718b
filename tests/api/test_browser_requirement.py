"""Issue #12, item 14: with PICTORANK_REQUIRE_BROWSER=1 (set by .ci/run) a missing Chromium fails
the browser test instead of skipping it, so a green CI always includes the browser run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BROWSER_TEST = Path(__file__).with_name("test_game_browser.py")


def _collect(**env: str) -> subprocess.CompletedProcess:
    """Collect (not run) the browser test with Chromium looked for where it is not."""
    environment = {k: v for k, v in os.environ.items() if k != "PICTORANK_REQUIRE_BROWSER"}
    environment.update(PICTORANK_CHROMIUM="/nonexistent/chromium", **env)
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(BROWSER_TEST)],
                          capture_output=True, text=True, timeout=120, env=environment, cwd=BROWSER_TEST.parents[2])


def test_a_missing_browser_fails_when_required() -> None:
    result = _collect(PICTORANK_REQUIRE_BROWSER="1")
    assert result.returncode not in (0, 5), result.stdout[-2000:]
    assert "/nonexistent/chromium" in result.stdout and "PICTORANK_REQUIRE_BROWSER" in result.stdout


def test_a_missing_browser_skips_otherwise() -> None:
    result = _collect()
    assert result.returncode in (0, 5), result.stdout[-2000:]  # 5: nothing collected
    assert "SKIPPED" in result.stdout and "/nonexistent/chromium" in result.stdout
