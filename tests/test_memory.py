"""pictorank.memory: what the allocator settings change, measured in fresh processes (glibc's
settings belong to a whole process, so they are never changed in the test process itself)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pictorank.memory import can_release

# Allocates and frees the same 48 MB block over and over (above glibc's largest mmap threshold,
# as a fine-tuning step's token-embedding gradient is), and prints the page faults that cost
# before, within and after `freed_memory_kept`.
REPEATED_BLOCKS = """
import json, resource
import numpy as np
from pictorank.memory import freed_memory_kept

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        block = np.ones(6_000_000)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

outside = faults()
with freed_memory_kept() as changed:
    within = faults()
print(json.dumps({"changed": changed, "before": outside, "within": within, "after": faults()}))
"""


@pytest.mark.skipif(not can_release(), reason="glibc's allocator only")
def test_freed_memory_is_reused_within_and_given_back_after() -> None:
    out = subprocess.run([sys.executable, "-c", REPEATED_BLOCKS], capture_output=True, text=True, check=True)
    faults = json.loads(out.stdout)
    assert faults["changed"]
    assert faults["within"] * 5 < faults["before"], faults
    assert faults["after"] > faults["within"] * 5, faults  # glibc's defaults are back
