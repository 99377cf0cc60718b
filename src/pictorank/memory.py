"""Give the C allocator's free memory back to the system after big work.

A big ranking (a batch of open-vocabulary clues: 100 candidates each) or a training stage builds
feature tables, encoder buffers and booster inputs of hundreds of megabytes, almost all of it
through malloc, from whichever of glibc's per-thread arenas the working thread uses. Freed, that
memory stays with the process: glibc gives back only the top of the main heap by itself, never
the free pages inside an arena, so a server kept each big request's peak for good, and a training
run carried one stage's leftovers into the next stage's peak. `malloc_trim(0)` hands those pages
back. It exists in glibc only: elsewhere (musl, macOS) this is a no-op.

A process that allocates and frees the same big blocks over and over (fine-tuning: each step's
activations and the token embeddings' gradient) meets the opposite cost: glibc serves every block
above its mmap threshold with a fresh mapping and unmaps it when freed, so the kernel zero-fills
its pages again on every step. `freed_memory_kept` turns that off for such a loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import sys
from pathlib import Path
from typing import Callable, Iterator


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this process already runs on
    except (OSError, AttributeError):  # no such symbol: not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


# mallopt's parameters and glibc's defaults for them (malloc.h, malloc.c)
_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD = -1, 128 * 1024
_M_MMAP_MAX, _DEFAULT_MMAP_MAX = -4, 65536


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's mallopt, or None where the C library is not glibc."""
    if _malloc_trim() is None:
        return None
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt


@contextlib.contextmanager
def freed_memory_kept() -> Iterator[bool]:
    """Within: glibc keeps freed memory in the heap for the next allocation (no block gets a
    mapping of its own, the heap's top is not returned), for a loop whose steps repeat the same
    big allocations (a fine-tuning loop): each step reuses the pages the last one freed instead of
    faulting fresh zeroed ones in. On the way out glibc's default limits come back and the free
    pages are returned (`release_memory`), so what follows (saving, exporting) keeps no more than
    before; glibc's mmap threshold, which it otherwise raises as big blocks come and go, stays
    where it is for the rest of the process. Yields whether anything changed (glibc only)."""
    mallopt = _mallopt()
    if mallopt is None:
        yield False
        return
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    try:
        yield True
    finally:
        mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
        release_memory()


def can_release() -> bool:
    """Whether release_memory can do anything here (glibc)."""
    return _malloc_trim() is not None


def release_memory() -> bool:
    """Return the allocator's free pages to the system; True when some were returned. It walks
    every arena, so it costs milliseconds on a big heap: call it after big work, not after each
    request."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def peak_rss_mb() -> int | None:
    """This process's highest resident memory so far, in MB (Linux's VmHWM); None elsewhere.
    Not `getrusage`'s ru_maxrss: Linux carries that over from the process a command was started
    from (its memory when it forked), so a command run from a big process reported that one's."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
