"""Row-wise activation scales for an int8 graph, so that a string's vector does not depend on
what else runs in its batch.

onnxruntime's dynamic quantisation (`quantize_dynamic`) quantises each MatMul's input with one
scale and zero point for the whole tensor (`DynamicQuantizeLinear`): a batch's scale comes from
its largest activation, so a short word encoded beside a long gloss gets another vector than
alone. This rewrite gives every token row its own scale and zero point instead:

    x (..., K)  ->  rows (M, K)  ->  per-row min/max  ->  QuantizeLinear(axis=0)  ->  uint8 rows
    MatMulInteger(rows, W) - zero_point[m] * colsum(W)[n]      (exact, in int32)
    reshaped back to (..., N), then scaled by scale[m] * W_scale[n] as before

The weights keep their symmetric per-channel int8 (zero point 0), so subtracting the input's
zero point times each weight column's sum is exact integer arithmetic. A token's row is then
computed from that row alone: batching strings of one length together (pictorank.encoders.onnx)
changes speed, never a vector. Per-row scales also fit each token's range, which keeps the
vectors closer to fp32 than one scale for the whole tensor did (docs/experiments/speed.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pictorank.errors import ModelError

if TYPE_CHECKING:  # onnx is needed to export, never to serve
    from onnx import GraphProto, ModelProto, NodeProto, TensorProto


def rowwise_activations(model: "ModelProto") -> "ModelProto":
    """`model` (a `quantize_dynamic` graph) with every DynamicQuantizeLinear and the
    MatMulIntegers that read it rewritten to row-wise scales (see the module docstring)."""
    import onnx
    from onnx import numpy_helper

    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    readers: dict[str, list[NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    quantised = {node.output[0] for node in graph.node if node.op_type == "DynamicQuantizeLinear"}
    add = _Constants(graph, weights)
    nodes: list[NodeProto] = []
    for node in graph.node:
        if node.op_type == "MatMulInteger" and node.input[0] in quantised:
            continue  # rebuilt beside the quantisation of its input
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        users = readers.get(node.output[0], [])
        if not users or any(u.op_type != "MatMulInteger" for u in users):
            raise ModelError(f"{node.name}: a quantised activation read by something other than MatMulInteger")
        x = node.input[0]
        nodes += _quantise_rows(node, numpy_helper.to_array(weights[users[0].input[1]]).shape[0], add)
        for matmul in users:
            nodes += _integer_matmul(matmul, x, add, weights)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    return model


class _Constants:
    """Initializers added to the graph once each, by name."""

    def __init__(self, graph: "GraphProto", weights: dict[str, "TensorProto"]) -> None:
        self.graph, self.weights = graph, weights

    def __call__(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        if name not in self.weights:
            self.weights[name] = numpy_helper.from_array(np.asarray(value), name)
            self.graph.initializer.append(self.weights[name])
        return name


def _quantise_rows(node: "NodeProto", width: int, add: _Constants) -> list["NodeProto"]:
    """Nodes replacing one DynamicQuantizeLinear: its input's rows quantised to uint8 (output
    `<x>_rows`), each with the scale and zero point of its own range (including 0, as
    DynamicQuantizeLinear's); the scale keeps the input's leading shape, so the graph's
    `scale * weight_scale` product broadcasts over rows."""
    from onnx import TensorProto
    from onnx.helper import make_node

    x, (_, scale, _) = node.input[0], node.output
    p = x + "_rw_"
    zero, top, tiny = add("rw_zero", np.float32(0)), add("rw_255", np.float32(255)), add("rw_tiny", np.float32(1e-12))
    one, first, last = add("rw_one", np.array([1], np.int64)), add("rw_0", np.array([0], np.int64)), add("rw_-1", np.array([-1], np.int64))
    rows = add(f"rw_rows_of_{width}", np.array([-1, width], np.int64))
    return [
        make_node("Shape", [x], [p + "shape"]),
        make_node("Slice", [p + "shape", first, last], [x + "_lead"]),
        make_node("Concat", [x + "_lead", one], [p + "lead1"], axis=0),
        make_node("Reshape", [x, rows], [p + "2d"]),
        make_node("ReduceMin", [p + "2d"], [p + "rmin"], axes=[1], keepdims=0),
        make_node("ReduceMax", [p + "2d"], [p + "rmax"], axes=[1], keepdims=0),
        make_node("Min", [p + "rmin", zero], [p + "min"]),
        make_node("Max", [p + "rmax", zero], [p + "max"]),
        make_node("Sub", [p + "max", p + "min"], [p + "range"]),
        make_node("Div", [p + "range", top], [p + "s0"]),
        make_node("Max", [p + "s0", tiny], [p + "scale"]),
        make_node("Div", [p + "min", p + "scale"], [p + "min_s"]),
        make_node("Neg", [p + "min_s"], [p + "neg_min_s"]),
        make_node("Round", [p + "neg_min_s"], [p + "zr"]),
        make_node("Clip", [p + "zr", zero, top], [p + "zf"]),
        make_node("Cast", [p + "zf"], [p + "zu8"], to=TensorProto.UINT8),
        make_node("Cast", [p + "zf"], [p + "zi"], to=TensorProto.INT32),
        make_node("Unsqueeze", [p + "zi", one], [x + "_zero_col"]),
        make_node("QuantizeLinear", [p + "2d", p + "scale", p + "zu8"], [x + "_rows"], axis=0),
        make_node("Reshape", [p + "scale", p + "lead1"], [scale]),
    ]


def _integer_matmul(matmul: "NodeProto", x: str, add: _Constants,
                    weights: dict[str, "TensorProto"]) -> list["NodeProto"]:
    """One MatMulInteger over `x`'s row-quantised rows (`_quantise_rows`), corrected for each
    row's zero point and reshaped to the original output, under the original output's name."""
    from onnx import numpy_helper
    from onnx.helper import make_node

    _, weight, _, weight_zero = matmul.input
    if numpy_helper.to_array(weights[weight_zero]).any():
        raise ModelError(f"{matmul.name}: asymmetric weights (a non-zero weight zero point) are not supported")
    quantised = numpy_helper.to_array(weights[weight])
    colsum = add(weight + "_colsum", quantised.astype(np.int64).sum(axis=0).astype(np.int32))
    width = add(f"rw_width_{quantised.shape[1]}", np.array([quantised.shape[1]], np.int64))
    out = matmul.output[0]
    return [
        make_node("MatMulInteger", [x + "_rows", weight], [out + "_raw"], name=matmul.name),
        make_node("Mul", [x + "_zero_col", colsum], [out + "_zero"]),
        make_node("Sub", [out + "_raw", out + "_zero"], [out + "_2d"]),
        make_node("Concat", [x + "_lead", width], [out + "_shape"], axis=0),
        make_node("Reshape", [out + "_2d", out + "_shape"], [out]),
    ]
