"""The ATen operators the samples use: their schemas and their output metadata.

Schemas are written from pytorch's aten/src/ATen/native/native_functions.yaml. The builder
needs them for what torch.export's serializer needs them for: argument names, which ones
are keyword-only, and how each value is encoded. Output metadata (dtype, shape) stands in for
the FakeTensor propagation torch does while tracing.
"""

import re

# dtypes in torch.export's ScalarType numbering (torch/_export/serde/schema.py)
class DType:
    def __init__(self, name, code, fmt, size):
        self.name, self.code, self.fmt, self.size = name, code, fmt, size

    def __repr__(self):
        return self.name


FLOAT = DType("float32", 7, "f", 4)
LONG = DType("int64", 5, "q", 8)
BOOL = DType("bool", 12, "?", 1)
INT8 = DType("int8", 2, "b", 1)

LAYOUT_STRIDED = 7  # schema.Layout.Strided
INT64_MAX = 9223372036854775807  # what x[a:] puts in slice's `end`


class SymDim:
    """An unbacked size (u0, u1, ...): a dimension whose length depends on data, such as the
    number of True elements of a boolean mask. torch.export records these as SymInt as_expr."""

    def __init__(self, name, max_val):
        self.name, self.max_val = name, max_val

    def __repr__(self):
        return self.name


class Device:
    """A `Device?` argument value (torch.device("cpu"))."""

    def __init__(self, type_="cpu", index=None):
        self.type, self.index = type_, index


CPU = Device()

SCHEMAS = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "div.Tensor(Tensor self, Tensor other) -> Tensor",
    "neg(Tensor self) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "sqrt(Tensor self) -> Tensor",
    "rsqrt(Tensor self) -> Tensor",
    "exp(Tensor self) -> Tensor",
    "sin(Tensor self) -> Tensor",
    "atan2(Tensor self, Tensor other) -> Tensor",
    "cos(Tensor self) -> Tensor",
    "tanh(Tensor self) -> Tensor",
    "sigmoid(Tensor self) -> Tensor",
    "relu(Tensor self) -> Tensor",
    "gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
    "silu(Tensor self) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "gt.Scalar(Tensor self, Scalar other) -> Tensor",
    "le.Tensor(Tensor self, Tensor other) -> Tensor",
    "logical_not(Tensor self) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "mm(Tensor self, Tensor mat2) -> Tensor",
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    # PT2E's quantize / dequantize (torch/ao/quantization/fx/_decomposed.py)
    "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
]


class SchemaArg:
    def __init__(self, name, type_, kwarg_only):
        self.name, self.type, self.kwarg_only = name, type_, kwarg_only


class Schema:
    def __init__(self, text):
        self.namespace = "aten"
        if "::" in text:
            self.namespace, text = text.split("::", 1)
        m = re.match(r"([\w.]+)\((.*)\) -> (.*)$", text)
        self.name = m.group(1)
        self.args = []
        kwarg_only = False
        for part in (p.strip() for p in m.group(2).split(", ")):
            if part == "*":
                kwarg_only = True
                continue
            decl = part.split("=")[0]
            type_, name = decl.rsplit(" ", 1)
            self.args.append(SchemaArg(name, re.sub(r"\(a!?\)", "", type_), kwarg_only))

    @property
    def target(self):
        base, _, overload = self.name.partition(".")
        return "torch.ops.%s.%s.%s" % (self.namespace, base, overload or "default")

    @property
    def packet(self):
        """The node name torch gives a call of this op: the overload packet's name."""
        return self.name.partition(".")[0]


OPS = {}
for _text in SCHEMAS:
    _s = Schema(_text)
    OPS[_s.name if "." in _s.name else _s.name + ".default"] = _s


# ---------------------------------------------------------------- output metadata

def broadcast(*shapes):
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        real = [d for d in dims if not (isinstance(d, int) and d == 1)]
        if not real:
            out.append(1)
            continue
        first = real[0]
        for d in real[1:]:
            if d is not first and d != first:
                raise ValueError("shapes %r do not broadcast" % (shapes,))
        out.append(first)
    return out


def _dim(d, ndim):
    return d + ndim if d < 0 else d


def _reduce(shape, dims, keepdim):
    dims = {_dim(d, len(shape)) for d in dims}
    if keepdim:
        return [1 if i in dims else s for i, s in enumerate(shape)]
    return [s for i, s in enumerate(shape) if i not in dims]


def _index_shape(self_shape, indices, new_sym):
    """aten.index.Tensor: boolean masks become (data-dependent) nonzero positions; integer
    indices broadcast together and replace the dimensions they index."""
    expanded = []  # one entry per indexed dim of self: None or ("int", shape)
    for idx in indices:
        if idx is None:
            expanded.append(None)
        elif idx.dtype is BOOL:
            n = new_sym(numel(idx.shape))
            for _ in idx.shape:
                expanded.append(("int", [n]))
        else:
            expanded.append(("int", list(idx.shape)))
    expanded += [None] * (len(self_shape) - len(expanded))
    positions = [i for i, e in enumerate(expanded) if e is not None]
    index_shapes = [expanded[i][1] for i in positions]
    # A mask used with another index: torch broadcasts the mask's count against the other
    # index and asserts they agree at run time; the result takes the static length.
    static = [s for s in index_shapes if all(isinstance(d, int) for d in s)]
    if static and len(static) < len(index_shapes):
        index_shapes = static
    result = broadcast(*index_shapes)
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    rest = [self_shape[i] for i in range(len(self_shape)) if expanded[i] is None]
    if adjacent:
        before = [self_shape[i] for i in range(positions[0])]
        after = [self_shape[i] for i in range(positions[-1] + 1, len(self_shape))]
        return before + result + after
    return result + rest


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _promote(*vals):
    dtypes = [v.dtype for v in vals if hasattr(v, "dtype")]
    for dt in (FLOAT, LONG, BOOL):
        if dt in dtypes:
            if dt is not FLOAT and any(isinstance(v, float) for v in vals):
                return FLOAT
            return dt
    return FLOAT


def _shape(v):
    return list(v.shape) if hasattr(v, "shape") else []


def infer(op, args, new_sym):
    """(dtype, shape) of the output of `op` (a key of OPS) called with schema-ordered args
    (a dict name -> value)."""
    a = args
    name = op.split(".")[0]
    if name in ("add", "sub", "mul", "div", "atan2"):
        return _promote(a["self"], a["other"]), broadcast(_shape(a["self"]), _shape(a["other"]))
    if name in ("gt", "le"):
        return BOOL, broadcast(_shape(a["self"]), _shape(a["other"]))
    if name == "logical_not":
        return BOOL, _shape(a["self"])
    if name in ("neg", "pow", "sqrt", "rsqrt", "exp", "sin", "cos", "tanh", "sigmoid", "relu",
                "gelu", "silu", "clamp", "_softmax", "_log_softmax", "layer_norm"):
        src = a.get("self", a.get("input"))
        return src.dtype, _shape(src)
    if name == "where":
        return _promote(a["self"], a["other"]), broadcast(
            _shape(a["condition"]), _shape(a["self"]), _shape(a["other"]))
    if name in ("mean", "amin"):
        return a["self"].dtype, _reduce(a["self"].shape, a["dim"], a.get("keepdim", False))
    if name == "argmax":
        return LONG, _reduce(a["self"].shape, [a["dim"]], a.get("keepdim", False))
    if name == "mm":
        return FLOAT, [a["self"].shape[0], a["mat2"].shape[1]]
    if name == "addmm":
        return FLOAT, [a["mat1"].shape[0], a["mat2"].shape[1]]
    if name == "linear":
        return FLOAT, list(a["input"].shape[:-1]) + [a["weight"].shape[0]]
    if name == "view":
        size = list(a["size"])
        if -1 in size:
            known = numel([d for d in size if d != -1])
            size[size.index(-1)] = numel(a["self"].shape) // known
        assert numel(size) == numel(a["self"].shape), (size, a["self"].shape)
        return a["self"].dtype, size
    if name == "permute":
        return a["self"].dtype, [a["self"].shape[d] for d in a["dims"]]
    if name == "unsqueeze":
        shape = list(a["self"].shape)
        shape.insert(_dim(a["dim"], len(shape) + 1), 1)
        return a["self"].dtype, shape
    if name == "slice":
        shape = list(a["self"].shape)
        d = _dim(a.get("dim", 0), len(shape))
        start = a.get("start", 0) or 0
        end = min(a.get("end", INT64_MAX), shape[d])
        start, end = (_dim(start, shape[d]), _dim(end, shape[d]))
        step = a.get("step", 1)
        shape[d] = max(0, (end - start + step - 1) // step)
        return a["self"].dtype, shape
    if name == "select":
        shape = list(a["self"].shape)
        del shape[_dim(a["dim"], len(shape))]
        return a["self"].dtype, shape
    if name == "cat":
        ts = a["tensors"]
        d = _dim(a.get("dim", 0), len(ts[0].shape))
        shape = list(ts[0].shape)
        shape[d] = sum(t.shape[d] for t in ts)
        return ts[0].dtype, shape
    if name == "index":
        return a["self"].dtype, _index_shape(list(a["self"].shape), a["indices"], new_sym)
    if name == "index_put":
        return a["self"].dtype, list(a["self"].shape)
    if name == "embedding":
        return a["weight"].dtype, list(a["indices"].shape) + [a["weight"].shape[1]]
    if name == "full":
        return a.get("dtype", FLOAT), list(a["size"])
    if name == "arange":
        return a.get("dtype", LONG), [a["end"] - a["start"]]
    if name == "conv2d":
        n, _, h, w = a["input"].shape
        o, _, kh, kw = a["weight"].shape
        st, pad, dil = (list(a.get(k, d)) if isinstance(a.get(k, d), (list, tuple)) else [a.get(k, d)] * 2
                        for k, d in (("stride", 1), ("padding", 0), ("dilation", 1)))
        return a["input"].dtype, [n, o, (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // st[0] + 1,
                                  (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // st[1] + 1]
    if name == "quantize_per_tensor":
        return a["dtype"], _shape(a["input"])
    if name in ("dequantize_per_tensor", "dequantize_per_channel"):
        return a.get("out_dtype") or FLOAT, _shape(a["input"])
    raise KeyError("no output metadata rule for " + op)
