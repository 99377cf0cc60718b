"""Cosines of many vectors with a table, each row computed on its own."""

from __future__ import annotations

import numpy as np


def row_by_row(vectors: np.ndarray, table: np.ndarray) -> np.ndarray:
    """`vectors @ table.T`, one matrix-vector product per row of `vectors`.

    Why not one matrix product: numpy runs a single row as a matrix-vector product and several
    as a matrix product, whose sums run in another order, so an option's cosines, and the
    features made of them, moved in the last bit with the number of options it came with (and a
    memo kept whichever came first). Row by row, a row's numbers are the same whatever else is
    in the batch.
    """
    out = np.empty((len(vectors), len(table)), dtype=np.result_type(vectors, table))
    for i, vector in enumerate(vectors):
        np.matmul(table, vector, out=out[i])
    return out
