"""ONNX models of issue 18's acceptance workloads, for `benchmarks/llvm.py`.

Each builder returns a `Workload`: an `onnx.ModelProto` (opset 17, weights as
initializers drawn from a fixed seed), the input feeds by name and the FLOPs of one
run counted from the shapes (multiply-add = 2) where the row reports GFLOPS. Both
runtimes are given this same model: onnxruntime directly, relaylang through
`rl.frontend.from_onnx(model, freeze_params=True)`.

* resnet50: onnx's light ResNet-50 (onnx/backend/test/data/light, weights made by
  ConstantOfShape), batch 1, 3x224x224, input arange(n)/n as ONNX's runner feeds it.
* conv_bn_relu: Conv 3x3 stride 2 pad 1, 64->128 channels, 1x64x56x56 input,
  BatchNormalization, Relu.
* mobilenet: a MobileNet-v1-style stack at 112/56/28 spatial: stem conv 3x3/s2 3->32,
  then depthwise 3x3 (stride 1 or 2) + BN + Clip(0, 6) and pointwise 1x1 + BN + Clip(0, 6)
  blocks 32->64 (112), 64->128 s2 (56), 128->128 (56), 128->256 s2 (28), 256->256 (28).
* mnist: ONNX model zoo's MNIST CNN shapes: Conv 5x5 1->8 pad 2, Relu, MaxPool 2x2,
  Conv 5x5 8->16 pad 2, Relu, MaxPool 3x3/s3, Flatten, MatMul 256->10, Add.
* mlp / mlp_b64: 784-128-10 (MatMul, Add, Relu, MatMul, Add), batch 1 / 64.
* gemm: MatMul 1024x1024 by a 1024x1024 weight, fp32.
* gpt2: 2 pre-norm transformer layers, sequence 64, hidden 256, 4 heads:
  LayerNormalization, MatMul+Add for Q, K, V, scaled dot product with Softmax (no
  mask), output projection, residual add, LayerNormalization, MLP 256->1024->256 with
  the tanh approximation of Gelu, residual add; a final LayerNormalization.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17


@dataclass
class Workload:
    name: str
    model: Any                       # onnx.ModelProto
    feeds: dict[str, np.ndarray]
    flops: int | None = None         # per run; None where GFLOPS are not reported


class _Builder:
    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.n = 0

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}_{self.n}"

    def const(self, value: np.ndarray, prefix: str = "w") -> str:
        from onnx import numpy_helper
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def weight(self, shape: tuple[int, ...], scale: float | None = None) -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.const(self.rng.normal(0, s, shape).astype(np.float32))

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        from onnx import helper
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0,
             group: int = 1, bias: bool = False) -> str:
        w = self.weight((cout, cin // group, k, k))
        ins = [x, w] + ([self.const(self.rng.normal(0, 0.1, cout).astype(np.float32))]
                        if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group)

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        scale = self.const(r.uniform(0.5, 1.5, c).astype(np.float32))
        b = self.const(r.normal(0, 0.1, c).astype(np.float32))
        mean = self.const(r.normal(0, 0.1, c).astype(np.float32))
        var = self.const(r.uniform(0.5, 1.5, c).astype(np.float32))
        return self.op("BatchNormalization", [x, scale, b, mean, var], epsilon=1e-5)

    def relu6(self, x: str) -> str:
        return self.op("Clip", [x, self.const(np.array(0, np.float32)),
                                self.const(np.array(6, np.float32))])

    def dense(self, x: str, n_in: int, n_out: int) -> str:
        y = self.op("MatMul", [x, self.weight((n_in, n_out), 1.0 / np.sqrt(n_in))])
        return self.op("Add", [y, self.const(self.rng.normal(0, 0.1, n_out).astype(np.float32))])

    def model(self, name: str, inputs: dict[str, tuple[int, ...]], output: str,
              out_shape: tuple[int, ...]) -> Any:
        from onnx import TensorProto, checker, helper
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v))
             for k, v in inputs.items()],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, list(out_shape))],
            self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="relaylang-benchmarks")
        m.ir_version = 8
        checker.check_model(m)
        return m


def _feed(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-1, 1, shape).astype(np.float32)


def conv_flops(n: int, cout: int, oh: int, ow: int, cin_per_group: int, k: int) -> int:
    return 2 * n * cout * oh * ow * cin_per_group * k * k


def _light_models() -> Any:
    """benchmarks/onnx_import.py (where the light models are found and fed), loaded from
    its file: benchmarks/ is not a package."""
    import importlib.util
    import sys
    if "onnx_import_bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "onnx_import_bench", Path(__file__).resolve().with_name("onnx_import.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["onnx_import_bench"] = module
        spec.loader.exec_module(module)
    return sys.modules["onnx_import_bench"]


def light_path(name: str) -> Path:
    return _light_models().light_dir() / f"light_{name}.onnx"


def resnet50() -> Workload:
    import onnx
    model = onnx.load(str(light_path("resnet50")))
    feeds = _light_models().dummy_inputs(model)     # ONNX's runner's input
    # FLOPs of the convolutions and the final dense, from ONNX's inferred shapes
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(inferred.graph.value_info) + list(inferred.graph.input)
              + list(inferred.graph.output)}
    flops = 0
    for node in inferred.graph.node:
        if node.op_type == "Conv":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            out = shapes.get(node.output[0])
            xin = shapes.get(node.input[0])
            k = attrs.get("kernel_shape", [1, 1])
            group = attrs.get("group", 1)
            if out and xin:
                flops += 2 * int(np.prod(out)) * (xin[1] // group) * int(np.prod(k))
        elif node.op_type == "Gemm":
            out = shapes.get(node.output[0])
            xin = shapes.get(node.input[0])
            if out and xin:
                flops += 2 * int(np.prod(out)) * xin[-1]
    return Workload("resnet50", model, feeds, flops or None)


def conv_bn_relu(seed: int = 0) -> Workload:
    b = _Builder(seed)
    y = b.op("Relu", [b.bn(b.conv("x", 64, 128, 3, stride=2, pad=1), 128)])
    model = b.model("conv_bn_relu", {"x": (1, 64, 56, 56)}, y, (1, 128, 28, 28))
    return Workload("conv_bn_relu", model, {"x": _feed(b.rng, (1, 64, 56, 56))},
                    conv_flops(1, 128, 28, 28, 64, 3))


# (cin, cout, stride of the depthwise conv, input spatial size)
MOBILENET_BLOCKS = [(32, 64, 1, 112), (64, 128, 2, 112), (128, 128, 1, 56),
                    (128, 256, 2, 56), (256, 256, 1, 28)]


def mobilenet(seed: int = 0) -> Workload:
    b = _Builder(seed)
    x = b.relu6(b.bn(b.conv("x", 3, 32, 3, stride=2, pad=1), 32))
    flops = conv_flops(1, 32, 112, 112, 3, 3)
    for cin, cout, stride, size in MOBILENET_BLOCKS:
        out = size // stride
        x = b.relu6(b.bn(b.conv(x, cin, cin, 3, stride=stride, pad=1, group=cin), cin))
        x = b.relu6(b.bn(b.conv(x, cin, cout, 1), cout))
        flops += conv_flops(1, cin, out, out, 1, 3) + conv_flops(1, cout, out, out, cin, 1)
    model = b.model("mobilenet", {"x": (1, 3, 224, 224)}, x, (1, 256, 28, 28))
    return Workload("mobilenet", model, {"x": _feed(b.rng, (1, 3, 224, 224))}, flops)


def mnist(seed: int = 0) -> Workload:
    b = _Builder(seed)
    x = b.op("Relu", [b.conv("x", 1, 8, 5, pad=2, bias=True)])
    x = b.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.op("Relu", [b.conv(x, 8, 16, 5, pad=2, bias=True)])
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[3, 3])
    x = b.op("Flatten", [x], axis=1)
    y = b.dense(x, 256, 10)
    model = b.model("mnist", {"x": (1, 1, 28, 28)}, y, (1, 10))
    flops = (conv_flops(1, 8, 28, 28, 1, 5) + conv_flops(1, 16, 14, 14, 8, 5)
             + 2 * 256 * 10)
    return Workload("mnist", model, {"x": _feed(b.rng, (1, 1, 28, 28))}, flops)


def mlp(batch: int = 1, seed: int = 0) -> Workload:
    """784-128-10 at `batch`; the initializers are W1, b1, W2, b2 in this order
    (`mlp_weights`, the NumPy baseline's operands)."""
    b = _Builder(seed)
    h = b.op("Relu", [b.dense("x", 784, 128)])
    y = b.dense(h, 128, 10)
    model = b.model("mlp", {"x": (batch, 784)}, y, (batch, 10))
    flops = 2 * batch * (784 * 128 + 128 * 10)
    return Workload("mlp" if batch == 1 else f"mlp_b{batch}", model,
                    {"x": _feed(b.rng, (batch, 784))}, flops)


def mlp_weights(w: Workload) -> list[np.ndarray]:
    """W1, b1, W2, b2 of an `mlp` workload."""
    from onnx import numpy_helper
    return [numpy_helper.to_array(i) for i in w.model.graph.initializer]


def gemm(n: int = 1024, seed: int = 0) -> Workload:
    b = _Builder(seed)
    y = b.op("MatMul", ["x", b.weight((n, n), 1.0 / np.sqrt(n))])
    model = b.model("gemm", {"x": (n, n)}, y, (n, n))
    return Workload("gemm", model, {"x": _feed(b.rng, (n, n))}, 2 * n ** 3)


def gemm_weight(w: Workload) -> np.ndarray:
    from onnx import numpy_helper
    return numpy_helper.to_array(w.model.graph.initializer[0])


def gpt2(layers: int = 2, seq: int = 64, hidden: int = 256, heads: int = 4,
         seed: int = 0) -> Workload:
    b = _Builder(seed)
    hd = hidden // heads

    def layer_norm(x: str) -> str:
        g = b.const((1 + b.rng.normal(0, 0.1, hidden)).astype(np.float32))
        beta = b.const(b.rng.normal(0, 0.1, hidden).astype(np.float32))
        return b.op("LayerNormalization", [x, g, beta], axis=-1, epsilon=1e-5)

    def shape(*dims: int) -> str:
        return b.const(np.array(dims, np.int64), "shape")

    def gelu(x: str) -> str:
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        c = lambda v: b.const(np.array(v, np.float32), "c")
        x3 = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Mul", [b.op("Add", [x, b.op("Mul", [x3, c(0.044715)])]),
                             c(float(np.sqrt(2 / np.pi)))])
        return b.op("Mul", [b.op("Mul", [x, c(0.5)]),
                            b.op("Add", [b.op("Tanh", [inner]), c(1.0)])])

    x = "x"
    flops = 0
    for _ in range(layers):
        h = layer_norm(x)
        qkv = []
        for _ in range(3):
            t = b.dense(h, hidden, hidden)
            t = b.op("Reshape", [t, shape(1, seq, heads, hd)])
            qkv.append(b.op("Transpose", [t], perm=[0, 2, 1, 3]))   # 1, heads, seq, hd
        q, k, v = qkv
        kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = b.op("Mul", [b.op("MatMul", [q, kt]),
                         b.const(np.array(1 / np.sqrt(hd), np.float32), "c")])
        p = b.op("Softmax", [s], axis=-1)
        a = b.op("MatMul", [p, v])
        a = b.op("Reshape", [b.op("Transpose", [a], perm=[0, 2, 1, 3]), shape(1, seq, hidden)])
        x = b.op("Add", [x, b.dense(a, hidden, hidden)])
        h = gelu(b.dense(layer_norm(x), hidden, 4 * hidden))
        x = b.op("Add", [x, b.dense(h, 4 * hidden, hidden)])
        flops += 2 * seq * hidden * hidden * 4 + 2 * 2 * seq * seq * hidden \
            + 2 * 2 * seq * hidden * 4 * hidden
    y = layer_norm(x)
    model = b.model("gpt2", {"x": (1, seq, hidden)}, y, (1, seq, hidden))
    return Workload("gpt2", model, {"x": _feed(b.rng, (1, seq, hidden))}, flops)


BUILDERS = {
    "resnet50": resnet50,
    "conv_bn_relu": conv_bn_relu,
    "mobilenet": mobilenet,
    "mnist": mnist,
    "mlp": mlp,
    "mlp_b64": lambda: mlp(64),
    "gemm": gemm,
    "gpt2": gpt2,
}
