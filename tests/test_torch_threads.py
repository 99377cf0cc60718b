"""pictorank.encoders.threads: training holds PyTorch at a thread count the code chooses."""

from __future__ import annotations

import pytest

from pictorank.encoders.threads import torch_threads

torch = pytest.importorskip("torch")


def test_the_count_holds_within_and_the_old_one_comes_back():
    before = torch.get_num_threads()
    other = 1 if before != 1 else 2
    with torch_threads(other):
        assert torch.get_num_threads() == other
    assert torch.get_num_threads() == before


def test_the_old_count_comes_back_when_the_training_fails():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="diverged"):
        with torch_threads(1 if before != 1 else 2):
            raise RuntimeError("diverged")
    assert torch.get_num_threads() == before


def test_the_tower_trains_on_its_fixed_count(monkeypatch):
    """fit_tower's loop runs under THREADS whatever the machine's default (checked on a stub
    model: the loop, not the weights)."""
    from pictorank.suggest import tower

    seen: list[int] = []

    class Stub(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(1, 3))

        def tokenize(self, words):
            seen.append(torch.get_num_threads())
            return {"n": len(words)}

        def forward(self, features):
            return {"sentence_embedding": self.weight.expand(features["n"], 3)}

    monkeypatch.setattr(tower, "load_base_model", Stub)
    default = torch.get_num_threads()
    other = 1 if tower.THREADS != 1 else 2  # a machine whose default is not the tower's count
    torch.set_num_threads(other)
    try:
        tower.fit_tower(["a", "b"], [0, 1], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], epochs=2, learning_rate=0.1, seed=0)
        assert seen and set(seen) == {tower.THREADS}
        assert torch.get_num_threads() == other
    finally:
        torch.set_num_threads(default)
