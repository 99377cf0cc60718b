"""pictorank.memory: what the allocator settings change, measured in fresh processes (the
settings last for a process's life, so they are never made in the test process itself)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pictorank.memory import can_release

# Allocates and frees the same 48 MB block over and over (above glibc's largest mmap threshold,
# as a fine-tuning step's token-embedding gradient is), and prints the page faults it cost.
REPEATED_BLOCKS = """
import resource, sys
import numpy as np
from pictorank.memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    block = np.ones(6_000_000)
    del block
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", REPEATED_BLOCKS, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not can_release(), reason="glibc's allocator only")
def test_kept_memory_is_reused_instead_of_faulted_in_again() -> None:
    fresh, kept = _faults("default"), _faults("keep")
    assert kept * 5 < fresh, (kept, fresh)
