"""PyTorch's intra-op threads held at a fixed count while a model trains.

Why a fixed count rather than PyTorch's default (one thread per core): a matrix product split
across threads sums its parts in another order, so the same training on a machine with another
number of cores would round differently and end with other weights. A count the code chooses
makes a fit the same wherever it runs, however slowly.
"""

from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """PyTorch's intra-op threads held at `count` within, then given back as they were."""
    import torch  # lazy: torch is slow to import, and only training needs it

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
