"""Row-wise activation scales (pictorank.encoders.rowwise) on a small quantised graph: each row
is quantised by its own range, and a row's output is the same alone or among others."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: E402

from pictorank.encoders.onnx import session_options  # noqa: E402
from pictorank.encoders.rowwise import rowwise_activations  # noqa: E402

IN, OUT = 16, 8


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> tuple[bytes, bytes, np.ndarray]:
    """y = x @ W (x: batch x tokens x IN), quantised by onnxruntime, and its row-wise rewrite."""
    weight = np.random.default_rng(0).normal(size=(IN, OUT)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", OUT])],
        [numpy_helper.from_array(weight, "w")])
    folder = tmp_path_factory.mktemp("rowwise")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(folder / "fp32.onnx"))
    quantize_dynamic(str(folder / "fp32.onnx"), str(folder / "int8.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    quantised = onnx.load(str(folder / "int8.onnx"))
    return quantised.SerializeToString(), rowwise_activations(quantised).SerializeToString(), weight


def _run(model: bytes, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(model, session_options(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_the_rewrite_leaves_no_tensor_wide_scale(graphs):
    ops = [n.op_type for n in onnx.load_from_string(graphs[1]).graph.node]
    assert "DynamicQuantizeLinear" not in ops and "QuantizeLinear" in ops and "MatMulInteger" in ops


def test_a_row_gets_the_same_output_alone_or_beside_a_larger_one(graphs):
    _, rowwise, weight = graphs
    rng = np.random.default_rng(1)
    small = rng.normal(size=(1, 3, IN)).astype(np.float32)
    large = 50 * rng.normal(size=(1, 3, IN)).astype(np.float32)
    alone = _run(rowwise, small)
    together = _run(rowwise, np.concatenate([small, large]))
    assert alone.tobytes() == together[:1].tobytes()
    np.testing.assert_allclose(alone, small @ weight, atol=0.05 * np.abs(small @ weight).max())
    # with one scale for the whole tensor the small row would take the large one's step
    tensor_wide = _run(graphs[0], np.concatenate([small, large]))[:1]
    assert np.abs(tensor_wide - small @ weight).max() > np.abs(alone - small @ weight).max()


def test_each_row_is_quantised_by_its_own_range(graphs):
    """The rewrite equals quantising each row by hand: uint8 with the row's min/max (0 included),
    integer products, then the two scales."""
    _, rowwise, weight = graphs
    x = np.random.default_rng(2).normal(size=(2, 4, IN)).astype(np.float32) * np.array([1, 10], np.float32)[:, None, None]
    w_scale = np.abs(weight).max(axis=0) / 127
    w_q = np.clip(np.round(weight / w_scale), -127, 127)
    rows = x.reshape(-1, IN)
    low, high = np.minimum(rows.min(axis=1), 0), np.maximum(rows.max(axis=1), 0)
    scale = (high - low) / 255
    zero = np.clip(np.round(-low / scale), 0, 255)
    x_q = np.clip(np.round(rows / scale[:, None]) + zero[:, None], 0, 255)
    expected = ((x_q - zero[:, None]) @ w_q) * scale[:, None] * w_scale
    np.testing.assert_allclose(_run(rowwise, x).reshape(-1, OUT), expected, rtol=1e-4, atol=1e-4)


def test_an_integer_matmul_of_an_input_already_quantised_is_kept():
    """Only the MatMulIntegers that read a DynamicQuantizeLinear are rebuilt; another is left as it is."""
    weight = numpy_helper.from_array(np.ones((IN, OUT), np.int8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, ["m", IN])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, ["m", OUT])], [weight])
    model = rowwise_activations(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert [n.op_type for n in model.graph.node] == ["MatMulInteger"]
