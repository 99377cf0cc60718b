"""One request's memory comes back: after a big ranking the service returns the allocator's free
pages to the system (pictorank.memory), so a server does not keep each big request's peak.

The fast tests run on the stub service; its cosine ranking of a batch allocates little, so a
stand-in ranker adds what a real big ranking does: temporaries of many megabytes, freed at its
end, interleaved with small allocations it keeps (as the embedding memo keeps new strings'
vectors). Freed but interleaved, those pages stay with the process until they are released.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

import pytest
from fastapi.testclient import TestClient

from pictorank.api import service as service_module
from pictorank.api.app import create_app
from pictorank.api.service import RELEASE_AFTER_ROWS, RankingService
from pictorank.api.settings import Settings
from pictorank.memory import can_release, release_memory
from pictorank.query import Query
from pictorank.ranker import Ranking

TEMPORARY_MB = 200
CHUNK = 100_000  # bytes: below glibc's mmap threshold, so from the heap, as most of a ranking's are

needs_glibc = pytest.mark.skipif(not can_release(), reason="malloc_trim is glibc's; elsewhere release is a no-op")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def fragment(megabytes: int, kept: list[bytes]) -> list[bytes]:
    """`megabytes` of written temporaries, with a small allocation appended to `kept` after each."""
    temporaries = []
    for _ in range(megabytes * 1_000_000 // CHUNK):
        temporaries.append(b"t" * CHUNK)
        kept.append(b"k" * 600)
    return temporaries


class Fragmenting:
    """The stub service's ranker, with a big ranking's memory pattern (module docstring). It
    records how far RSS rose while its temporaries were alive, so a test knows they were real."""

    def __init__(self, ranker: Any) -> None:
        self.ranker = ranker
        self.kept: list[bytes] = []
        self.rise_mb = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ranker, name)

    def rank(self, queries: Sequence[Query], explain: int = 0) -> list[Ranking]:
        release_memory()  # free pages an earlier test left would take the temporaries without a rise
        before = rss_mb()
        temporaries = fragment(TEMPORARY_MB, self.kept)
        self.rise_mb = max(self.rise_mb, rss_mb() - before)
        del temporaries
        return self.ranker.rank(queries, explain)


@pytest.fixture
def fragmenting(api_service) -> Fragmenting:
    return Fragmenting(api_service.ranker)


@pytest.fixture
def client(api_service, fragmenting: Fragmenting):
    """An app over the stub service's parts with the fragmenting ranker, taking batches of 64
    open-vocabulary clues (the default cap refuses them: each counts as 100 candidate words)."""
    service = RankingService(fragmenting, api_service.vocab, api_service.index, api_service.encoders,  # type: ignore[arg-type]
                             api_service.model_name, api_service.open_vocab_candidates)
    service.ready = True
    with TestClient(create_app(Settings(max_texts_per_request=20_000, max_rows_per_request=20_000), service=service)) as test_client:
        yield test_client


def open_batch(n: int, clues: int = 64) -> dict:
    """`clues` open-vocabulary clues of never-seen hint texts (`n` makes them new each time)."""
    return {"puzzles": [{"hint_texts": [f"unseen {n} {i} {j}" for j in range(3)]} for i in range(clues)]}


def measure_release() -> dict[str, float]:
    """In a thread, as a request runs: how far RSS rose with freed temporaries between kept
    allocations, how much of it stayed after they were freed, and after they were released."""
    kept: list[bytes] = []
    measured: dict[str, float] = {}

    def request() -> None:
        release_memory()  # a reused arena's free pages would hide the rise
        start = rss_mb()
        temporaries = fragment(TEMPORARY_MB, kept)
        measured["rise"] = rss_mb() - start
        del temporaries
        measured["freed"] = rss_mb() - start
        release_memory()
        measured["released"] = rss_mb() - start

    thread = threading.Thread(target=request)
    thread.start()
    thread.join()
    return measured


@needs_glibc
def test_release_memory_returns_the_free_pages_inside_the_heap() -> None:
    """Freed temporaries between kept allocations stay resident until released. Measured in a
    process of its own: RSS is the whole process's, and in a test worker the threads that earlier
    tests' services left running allocate and free beside the measurement."""
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_request_memory as t; "
              "print(json.dumps(t.measure_release()))")
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    assert measured["rise"] > 0.8 * TEMPORARY_MB  # the temporaries were resident
    assert measured["released"] < 0.25 * measured["rise"], measured


@needs_glibc
def test_a_big_open_vocabulary_batch_gives_its_memory_back(client: TestClient, fragmenting: Fragmenting) -> None:
    assert client.post("/rank/batch", json=open_batch(0)).status_code == 200  # first-use costs, not measured
    before = rss_mb()
    reply = client.post("/rank/batch", json=open_batch(1))
    assert reply.status_code == 200 and len(reply.json()["results"]) == 64
    assert fragmenting.rise_mb > 0.8 * TEMPORARY_MB  # the request did hold its temporaries
    assert rss_mb() - before < 0.25 * fragmenting.rise_mb, "the request's memory stayed with the process"


def test_only_a_big_ranking_is_followed_by_a_release(client: TestClient, api_service,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A release walks the whole heap: it follows rankings of RELEASE_AFTER_ROWS candidates or
    more (here a batch of open-vocabulary clues), not every request."""
    calls: list[int] = []
    monkeypatch.setattr(service_module, "release_memory", lambda: calls.append(1) or True)
    small = RELEASE_AFTER_ROWS // api_service.open_vocab_candidates - 1
    assert client.post("/rank/batch", json=open_batch(2, clues=small)).status_code == 200
    assert client.post("/rank", json={"hint_texts": ["sun"], "options": ["moon", "star"]}).status_code == 200
    assert calls == []
    assert client.post("/rank/batch", json=open_batch(3, clues=small + 1)).status_code == 200
    assert calls == [1]


def test_start_up_gives_back_what_it_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the service encodes the vocabulary and builds the index in runs whose buffers,
    freed, would stay with the process: start-up ends with a release."""
    from helpers import DATA, WordHashModel
    from pictorank.encoders import Encoder

    calls: list[int] = []
    monkeypatch.setattr(service_module, "release_memory", lambda: calls.append(1) or True)
    stub = Encoder(model=WordHashModel(), model_id="word-hash-release")
    service_module.build_service(Settings(vocabulary_files=[DATA / "val.csv"]), base=stub)
    assert calls == [1]
