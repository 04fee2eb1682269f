"""A small graph builder that writes ATen-dialect programs as torch.export.save writes them.

A sample declares its placeholders (parameters, buffers, lifted tensor constants, user
inputs), calls ATen operators, marks buffer mutations and returns user outputs. The builder
names nodes the way torch.fx does, serializes arguments the way
torch/_export/serde/serialize.py does (omitted defaults, keyword-only arguments as kind 2,
Tensor?[] as as_optional_tensors ...), records a TensorMeta for every value and packs the
result into a .pt2 archive laid out like a real one (see pt2zip.py and
shared/data/pt2/linear_3/).
"""

import contextlib
import hashlib
import json
import keyword
import re
import struct
import zlib

import aten
import pt2zip
from aten import BOOL, FLOAT, LONG, SymDim

SCHEMA_VERSION = {"major": 8, "minor": 16}  # the first schema with Node.name is after 8.12
TORCH_VERSION = "2.10.0+cpu"

# Python's builtins as of 3.11 (plus the names site adds): torch.fx never names a node after
# one, so the first `slice` node is `slice_1`, the first `pow` is `pow_1`. Fixed here so the
# output does not depend on the interpreter that runs the generator.
_BUILTINS = set("""
abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod
compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float
format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter
len license list locals map max memoryview min next object oct open ord pow print property
quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type
vars zip __build_class__ __debug__ __doc__ __import__ __loader__ __name__ __package__
__spec__ Ellipsis NotImplemented None True False
""".split())
_FX_CUSTOM_BUILTINS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree", "math"}


class Namespace:
    """torch.fx.graph._Namespace.create_name: unique names, numbered per base name."""

    _suffix = re.compile(r"(.*)_(\d+)$")

    def __init__(self):
        self.used = set()
        self.base_count = {}

    def create(self, candidate):
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = self._suffix.match(candidate)
        if m is None:
            base, num = candidate, None
        else:
            base, num = m.group(1), int(m.group(2))
        candidate = base if num is None else "%s_%d" % (base, num)
        if not num:
            num = self.base_count.get(base, 0)
        while (candidate in self.used or keyword.iskeyword(candidate)
               or candidate in _BUILTINS or candidate in _FX_CUSTOM_BUILTINS):
            num += 1
            candidate = "%s_%d" % (base, num)
        self.used.add(candidate)
        self.base_count[base] = num
        return candidate


class Value:
    """A tensor value of the graph: a placeholder or a node output."""

    def __init__(self, name, dtype, shape, requires_grad=False):
        self.name, self.dtype, self.shape = name, dtype, list(shape)
        self.requires_grad = requires_grad

    def __repr__(self):
        return "%s:%s%s" % (self.name, self.dtype, self.shape)


class Placeholder(Value):
    def __init__(self, name, dtype, shape, kind, target=None, data=None, persistent=None,
                 requires_grad=False):
        super().__init__(name, dtype, shape, requires_grad)
        self.kind, self.target, self.data, self.persistent = kind, target, data, persistent


def tensor_bytes(dtype, values):
    return struct.pack("<%d%s" % (len(values), dtype.fmt), *values)


def _sym_json(d):
    if isinstance(d, SymDim):
        # torch prints unbacked symbols with sympy's srepr
        return {"as_expr": {"expr_str": "Symbol('%s', integer=True)" % d.name, "hint": None}}
    return {"as_int": d}


def _stride(dims):
    """Product of the sizes after a dimension: an int, or a symbol times 1."""
    syms = [d for d in dims if isinstance(d, SymDim)]
    n = aten.numel([d for d in dims if not isinstance(d, SymDim)])
    if not syms:
        return n
    if len(syms) == 1 and n == 1:
        return syms[0]
    raise ValueError("stride of a product with symbols: %r" % (dims,))


def tensor_meta(dtype, shape, requires_grad=False):
    strides = [_stride(shape[i + 1:]) for i in range(len(shape))]
    return {"dtype": dtype.code, "sizes": [_sym_json(d) for d in shape],
            "requires_grad": requires_grad, "device": {"type": "cpu", "index": None},
            "strides": [_sym_json(s) for s in strides], "storage_offset": {"as_int": 0},
            "layout": aten.LAYOUT_STRIDED}


def _leaf():
    return {"type": None, "context": None, "children_spec": []}


def _tuple_spec(children):
    return {"type": "builtins.tuple", "context": "null", "children_spec": children}


class Program:
    def __init__(self, name, model_class, source_file):
        self.name, self.model_class, self.source_file = name, model_class, source_file
        self.ns = Namespace()
        self.placeholders = []  # declaration order; sorted into canonical order on output
        self.nodes = []
        self.mutations = []  # (buffer placeholder, value)
        self.outputs = []
        self.modules = []  # (fqn, type) of submodules, for module_call_graph
        self._module_stack = [("", model_class)]
        self._code = None
        self._lines = {}
        self._torch_fn_count = {}
        self.syms = []

    # ------------------------------------------------------------ placeholders
    def _placeholder(self, prefix, fqn, name, **kw):
        if self.nodes:
            raise RuntimeError("declare placeholders before the first op")
        name = self.ns.create(name or prefix + fqn.replace(".", "_"))
        p = Placeholder(name, target=fqn, **kw)
        self.placeholders.append(p)
        return p

    def parameter(self, fqn, dtype, shape, data, name=None, requires_grad=True):
        return self._placeholder("p_", fqn, name, dtype=dtype, shape=shape, kind="parameter",
                                 data=data, requires_grad=requires_grad and dtype is FLOAT)

    def buffer(self, fqn, dtype, shape, data, persistent=True, name=None):
        return self._placeholder("b_", fqn, name, dtype=dtype, shape=shape, kind="buffer",
                                 data=data, persistent=persistent)

    def constant(self, fqn, dtype, shape, data, name=None):
        return self._placeholder("c_", fqn, name, dtype=dtype, shape=shape,
                                 kind="tensor_constant", data=data)

    def user_input(self, name, dtype, shape):
        return self._placeholder("", None, name, dtype=dtype, shape=shape, kind="user_input")

    # ------------------------------------------------------------ source context
    @contextlib.contextmanager
    def module(self, fqn, type_):
        """Ops called inside run in submodule `fqn` (for nn_module_stack)."""
        if fqn not in [m[0] for m in self.modules]:
            self.modules.append((fqn, type_))
        self._module_stack.append((fqn, type_))
        try:
            yield
        finally:
            self._module_stack.pop()

    @contextlib.contextmanager
    def code(self, line):
        """The Python source line the following ops come from (for stack_trace)."""
        saved, self._code = self._code, line
        if line not in self._lines:
            self._lines[line] = 20 + 3 * len(self._lines)
        try:
            yield
        finally:
            self._code = saved

    def _metadata(self, fn_name):
        meta = {}
        if self._code is not None:
            meta["stack_trace"] = 'File "%s", line %d, in forward\n    %s' % (
                self.source_file, self._lines[self._code], self._code)
        stack = []
        for fqn, type_ in self._module_stack:
            stack.append("L__self__%s,%s,%s" % (fqn.replace(".", "_"), fqn, type_))
        meta["nn_module_stack"] = ";".join(stack)
        k = self._torch_fn_count.get(fn_name, 0) + 1
        self._torch_fn_count[fn_name] = k
        meta["torch_fn"] = "%s_%d;builtin_function_or_method.%s" % (fn_name, k, fn_name)
        return meta

    # ------------------------------------------------------------ ops
    def new_sym(self, max_val):
        s = SymDim("u%d" % len(self.syms), max_val)
        self.syms.append(s)
        return s

    def op(self, op, *args, **kwargs):
        """Call ATen op `op` ("add.Tensor", "linear", ...) with positional args and keyword
        args as a Python caller would. Returns the output Value."""
        key = op if "." in op else op + ".default"
        schema = aten.OPS[key]
        given = {}
        inputs = []
        for i, sa in enumerate(schema.args):
            if sa.name in kwargs:
                val, kind = kwargs.pop(sa.name), 2
            elif not sa.kwarg_only and i < len(args):
                val, kind = args[i], 1
            else:
                continue  # torch leaves out arguments that were not given
            given[sa.name] = val
            inputs.append({"name": sa.name, "arg": self._arg(val, sa.type), "kind": kind})
        if kwargs or len(args) > len([a for a in schema.args if not a.kwarg_only]):
            raise TypeError("%s: bad arguments %r %r" % (op, args, kwargs))
        dtype, shape = aten.infer(key, given, self.new_sym)
        name = self.ns.create(schema.packet)
        out = Value(name, dtype, shape)
        self.nodes.append({
            "target": schema.target,
            "inputs": inputs,
            "outputs": [{"as_tensor": {"name": name}}],
            "metadata": self._metadata(schema.packet.lstrip("_")),
            "is_hop_single_tensor_return": None,
            "name": name,
            "_value": out,
        })
        return out

    def _arg(self, val, type_):
        if isinstance(val, Value):
            return {"as_tensor": {"name": val.name}}
        if isinstance(val, (list, tuple)):
            if type_ == "Tensor?[]":
                return {"as_optional_tensors": [
                    {"as_none": True} if v is None else {"as_tensor": {"name": v.name}}
                    for v in val]}
            if type_ == "Tensor[]":
                return {"as_tensors": [{"name": v.name} for v in val]}
            if all(type(v) is int for v in val):
                return {"as_ints": list(val)}
            raise TypeError("list argument %r for %s" % (val, type_))
        if val is None:
            return {"as_none": True}
        if isinstance(val, aten.DType):
            return {"as_scalar_type": val.code}
        if isinstance(val, aten.Device):
            return {"as_device": {"type": val.type, "index": val.index}}
        if type_ == "Layout?":
            return {"as_layout": val}
        if type(val) is bool:
            return {"as_bool": val}
        if type(val) is int:
            return {"as_int": val}
        if type(val) is float:
            return {"as_float": val}
        if type(val) is str:
            return {"as_string": val}
        raise TypeError("argument %r for %s" % (val, type_))

    def mutate(self, buffer, value):
        """The buffer `buffer` holds `value` after the call (a BUFFER_MUTATION output)."""
        assert buffer.kind == "buffer" and value.shape == buffer.shape
        self.mutations.append((buffer, value))

    def output(self, *values):
        self.outputs = list(values)

    # ------------------------------------------------------------ serialization
    def ordered_placeholders(self):
        order = ["parameter", "buffer", "tensor_constant", "user_input"]
        return sorted(self.placeholders, key=lambda p: order.index(p.kind))

    def _input_spec(self, p):
        if p.kind == "parameter":
            return {"parameter": {"arg": {"name": p.name}, "parameter_name": p.target}}
        if p.kind == "buffer":
            return {"buffer": {"arg": {"name": p.name}, "buffer_name": p.target,
                               "persistent": p.persistent}}
        if p.kind == "tensor_constant":
            return {"tensor_constant": {"arg": {"name": p.name},
                                        "tensor_constant_name": p.target}}
        return {"user_input": {"arg": {"as_tensor": {"name": p.name}}}}

    def exported_program(self):
        placeholders = self.ordered_placeholders()
        # graph outputs: mutations first, in the order of the buffers they update
        buffer_order = [p for p in placeholders if p.kind == "buffer"]
        mutations = sorted(self.mutations, key=lambda m: buffer_order.index(m[0]))
        out_values = [v for _, v in mutations] + self.outputs
        tensor_values = {}
        for p in placeholders:
            tensor_values[p.name] = tensor_meta(p.dtype, p.shape, p.requires_grad)
        nodes = []
        for n in self.nodes:
            v = n["_value"]
            tensor_values[v.name] = tensor_meta(v.dtype, v.shape)
            nodes.append({k: n[k] for k in ("target", "inputs", "outputs", "metadata",
                                            "is_hop_single_tensor_return", "name")})
        output_specs = [{"buffer_mutation": {"arg": {"name": v.name}, "buffer_name": b.target}}
                        for b, v in mutations]
        output_specs += [{"user_output": {"arg": {"as_tensor": {"name": v.name}}}}
                         for v in self.outputs]
        user_inputs = [p for p in placeholders if p.kind == "user_input"]
        in_spec = [1, _tuple_spec([_tuple_spec([_leaf() for _ in user_inputs]),
                                   {"type": "builtins.dict", "context": "[]",
                                    "children_spec": []}])]
        out_spec = [1, _tuple_spec([_leaf() for _ in self.outputs])
                    if len(self.outputs) != 1 else _leaf()]
        shown = {id(d) for n in self.nodes for d in n["_value"].shape}
        used_syms = [s for s in self.syms if id(s) in shown]
        graph = {
            "inputs": [{"as_tensor": {"name": p.name}} for p in placeholders],
            "outputs": [{"as_tensor": {"name": v.name}} for v in out_values],
            "nodes": nodes,
            "tensor_values": tensor_values,
            "sym_int_values": {},
            "sym_bool_values": {},
            "is_single_tensor_return": False,
            "custom_obj_values": {},
            "sym_float_values": {},
        }
        call_graph = [{"fqn": "", "signature": {
            "inputs": [], "outputs": [],
            "in_spec": json.dumps(in_spec), "out_spec": json.dumps(out_spec),
            "forward_arg_names": [p.name for p in user_inputs]}}]
        call_graph += [{"fqn": fqn, "signature": None} for fqn, _ in self.modules]
        return {
            "graph_module": {
                "graph": graph,
                "signature": {"input_specs": [self._input_spec(p) for p in placeholders],
                              "output_specs": output_specs},
                "module_call_graph": call_graph,
                "metadata": {},
                "treespec_namedtuple_fields": {},
            },
            "opset_version": {"aten": 10},
            "range_constraints": {s.name: {"min_val": 0, "max_val": s.max_val}
                                  for s in used_syms},
            "schema_version": SCHEMA_VERSION,
            "verifiers": ["ATEN"],
            "torch_version": TORCH_VERSION,
            "guards_code": [],
        }

    def archive(self):
        """The .pt2 archive bytes: members and member order as torch.export.save writes."""
        root = self.name + "/"
        records = []
        weights, constants = {}, {}
        for p in self.placeholders:  # declaration order = state_dict / constants order
            if p.kind == "user_input":
                continue
            in_state_dict = p.kind == "parameter" or (p.kind == "buffer" and p.persistent)
            table, prefix = (weights, "weight_") if in_state_dict else (constants, "tensor_")
            path = "%s%d" % (prefix, len(table))
            data = tensor_bytes(p.dtype, p.data)
            assert len(data) == aten.numel(p.shape) * p.dtype.size, p
            table[p.target] = (path, p, data)
        for folder, table, config_name in (("weights", weights, "model_weights_config.json"),
                                           ("constants", constants,
                                            "model_constants_config.json")):
            config = {}
            for fqn, (path, p, data) in table.items():
                records.append((root + "data/%s/%s" % (folder, path), data))
                config[fqn] = {"path_name": path, "is_param": p.kind == "parameter",
                               "use_pickle": False,
                               "tensor_meta": tensor_meta(p.dtype, p.shape, p.requires_grad)}
            records.append((root + "data/%s/%s" % (folder, config_name),
                            json.dumps({"config": config}).encode()))
        records.append((root + "models/model.json",
                        json.dumps(self.exported_program()).encode()))
        records += [(root + "archive_format", b"pt2"), (root + "archive_version", b"0"),
                    (root + ".data/version", b"6\n"), (root + "byteorder", b"little")]
        # PyTorchFileWriter writes a 40-digit id; derive it from the content so that the
        # same program always gives the same archive.
        crc = 0
        for _, data in records:
            crc = zlib.crc32(data, crc)
        digest = int(hashlib.sha256(b"".join(d for _, d in records)).hexdigest(), 16)
        records.append((root + ".data/serialization_id",
                        ("%020d%020d" % (crc, digest % 10 ** 20)).encode()))
        return pt2zip.zip_bytes(records)

    def node_count(self):
        return len(self.nodes)


__all__ = ["Program", "Value", "FLOAT", "LONG", "BOOL", "tensor_bytes"]
