"""quantized_mlp: a statically quantized model as PT2E writes it for XNNPACK.

What prepare_pt2e(model, XNNPACKQuantizer().set_global(symmetric per-channel config)),
calibration and convert_pt2e(fold_quantize=True) leave before torch.export: every activation is
quantized and dequantized again (quantized_decomposed.quantize_per_tensor then
dequantize_per_tensor, int8, symmetric: zero point 0), the weights are folded int8 constants
(_frozen_paramN) dequantized per output channel (dequantize_per_channel, axis 0, quant range
[-127, 127]), biases stay float32 parameters. Two branches:

    x [2, 8]  -> q/dq -> linear(8 -> 16) -> relu -> q/dq -> linear(16 -> 4) -> q/dq  (out 0)
    y [1, 2, 4, 4] -> q/dq -> conv2d(2 -> 4, 3x3, padding 1) -> relu -> q/dq        (out 1)

The activation scales are the fixed calibration results this file writes down; the weights
are seeded normal values, quantized symmetrically per channel here (scale = max|w| / 127).
"""

import random

from builder import FLOAT, Program
from aten import INT8, LONG

SOURCE = "/home/dev/models/%s.py"
SEED = 31
QMIN, QMAX = -128, 127          # activations: int8
WMIN, WMAX = -127, 127          # weights: symmetric int8 (XNNPACK's per-channel config)
SCALES = {"x": 0.031, "fc1": 0.047, "fc2": 0.052, "y": 0.029, "conv": 0.043}


def _quantize_per_channel(w, rows):
    """Symmetric per-row int8 quantization: (int8 values, scales)."""
    cols = len(w) // rows
    q, scales = [], []
    for r in range(rows):
        row = w[r * cols:(r + 1) * cols]
        s = max(abs(v) for v in row) / WMAX
        scales.append(s)
        q += [max(WMIN, min(WMAX, round(v / s))) for v in row]
    return q, scales


def _qdq(p, x, scale):
    q = p.op("quantize_per_tensor", x, scale, 0, QMIN, QMAX, INT8)
    return p.op("dequantize_per_tensor", q, scale, 0, QMIN, QMAX, INT8)


def quantized_mlp():
    rng = random.Random(SEED)

    def normal(n, std):
        return [rng.gauss(0.0, std) for _ in range(n)]

    p = Program("quantized_mlp", "models.quantized_mlp.QuantizedMLP", SOURCE % "quantized_mlp")
    weights = {}
    for k, (fqn, shape) in enumerate((("fc1", [16, 8]), ("fc2", [4, 16]), ("conv", [4, 2, 3, 3]))):
        n = 1
        for d in shape:
            n *= d
        q, scales = _quantize_per_channel(normal(n, 0.35), shape[0])
        weights[fqn] = (p.constant("_frozen_param%d" % k, INT8, shape, q),
                        p.constant("_scale_%d" % k, FLOAT, [shape[0]], scales),
                        p.constant("_zero_point_%d" % k, LONG, [shape[0]], [0] * shape[0]))
    b1 = p.parameter("fc1.bias", FLOAT, [16], normal(16, 0.1))
    b2 = p.parameter("fc2.bias", FLOAT, [4], normal(4, 0.1))
    bc = p.parameter("conv.bias", FLOAT, [4], normal(4, 0.1))
    x = p.user_input("x", FLOAT, [2, 8])
    y = p.user_input("y", FLOAT, [1, 2, 4, 4])

    def weight(fqn):
        wq, ws, wz = weights[fqn]
        return p.op("dequantize_per_channel", wq, ws, wz, 0, WMIN, WMAX, INT8)

    with p.module("fc1", "torch.nn.modules.linear.Linear"):
        with p.code("h = torch.relu(self.fc1(x))"):
            h = p.op("relu", p.op("linear", _qdq(p, x, SCALES["x"]), weight("fc1"), b1))
    with p.module("fc2", "torch.nn.modules.linear.Linear"):
        with p.code("out = self.fc2(h)"):
            out = p.op("linear", _qdq(p, h, SCALES["fc1"]), weight("fc2"), b2)
    with p.code("out = quantize(out)"):
        out = _qdq(p, out, SCALES["fc2"])
    with p.module("conv", "torch.nn.modules.conv.Conv2d"):
        with p.code("c = torch.relu(self.conv(y))"):
            c = p.op("relu", p.op("conv2d", _qdq(p, y, SCALES["y"]), weight("conv"), bc, [1, 1], [1, 1]))
    with p.code("c = quantize(c)"):
        c = _qdq(p, c, SCALES["conv"])
    p.output(out, c)
    return p
