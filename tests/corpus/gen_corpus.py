#!/usr/bin/env python3
"""Writes the reader's test inputs (python3 standard library only; deterministic).

    python3 tests/corpus/gen_corpus.py

tests/corpus/    hostile files: each is refused with exit code 2 and one message naming the file
                 and the place, or gives what tests/check_corpus.c says (it runs the binary on
                 each; make check also replays every one through the fuzz harnesses).
                 gen_corpus_pte.c writes the .pte ones (make corpus runs both)
tests/programs/  small valid programs for the reader and verifier tests

The files are committed, so the tests need nothing but the binary.
"""

import copy
import io
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = HERE
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")

FLOAT, LONG, BOOL = 7, 5, 12


def sym(v):
    return {"as_int": v}


def tmeta(shape, dtype=FLOAT, strides=None, offset=0, requires_grad=False):
    if strides is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= max(s, 1)
    return {"dtype": dtype, "sizes": [s if isinstance(s, dict) else sym(s) for s in shape],
            "requires_grad": requires_grad, "device": {"type": "cpu", "index": None},
            "strides": [sym(s) for s in strides], "storage_offset": sym(offset), "layout": 7}


def tensor(name):
    return {"as_tensor": {"name": name}}


def node(target, inputs, outputs, metadata=None, name=None):
    n = {"target": target,
         "inputs": [{"name": k, "arg": a, "kind": kind} for (k, a, kind) in inputs],
         "outputs": outputs, "metadata": metadata or {}, "is_hop_single_tensor_return": None}
    if name is not None:
        n["name"] = name
    return n


def program(nodes, inputs, outputs, tvals, in_specs, out_specs, verifier="ATEN"):
    return {
        "graph_module": {
            "graph": {"inputs": [tensor(i) for i in inputs], "outputs": outputs, "nodes": nodes,
                      "tensor_values": tvals, "sym_int_values": {}, "sym_bool_values": {},
                      "is_single_tensor_return": False, "custom_obj_values": {}, "sym_float_values": {}},
            "signature": {"input_specs": in_specs, "output_specs": out_specs},
            "module_call_graph": [{"fqn": "", "signature": None}],
            "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {},
        "schema_version": {"major": 8, "minor": 12}, "verifiers": [verifier],
        "torch_version": "2.9.0"}


def user_input(name):
    return {"user_input": {"arg": tensor(name)}}


def parameter(name, target):
    return {"parameter": {"arg": {"name": name}, "parameter_name": target}}


def constant(name, target):
    return {"tensor_constant": {"arg": {"name": name}, "tensor_constant_name": target}}


def user_output(name):
    return {"user_output": {"arg": tensor(name)}}


ADD = "torch.ops.aten.add.Tensor"
MUL = "torch.ops.aten.mul.Tensor"


def base_program():
    """x + p_w, then + x again: two parameters' worth of structure, four values."""
    nodes = [
        node(ADD, [("self", tensor("x"), 1), ("other", tensor("p_w"), 1)], [tensor("add")]),
        node(ADD, [("self", tensor("add"), 1), ("other", tensor("x"), 1)], [tensor("add_1")]),
    ]
    tvals = {n: tmeta([4]) for n in ("p_w", "x", "add", "add_1")}
    return program(nodes, ["p_w", "x"], [tensor("add_1")], tvals,
                   [parameter("p_w", "w"), user_input("x")], [user_output("add_1")])


def dumps(obj):
    return json.dumps(obj, indent=1, sort_keys=False)


def archive(model_json, weights_config, weight_files, constants_config=None, root="prog", with_model=True,
            header=None):
    """A .pt2 zip laid out like torch.export.save's (members stored, under one root folder);
    header overrides archive_format, archive_version or byteorder (None leaves it out)."""
    head = {"archive_format": b"pt2", "archive_version": b"0", "byteorder": b"little"}
    head.update(header or {})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        def add(name, data):
            info = zipfile.ZipInfo(root + "/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, data)
        for name, value in head.items():
            if value is not None:
                add(name, value)
        if with_model:
            add("models/model.json", dumps(model_json).encode())
        add("data/weights/model_weights_config.json", json.dumps({"config": weights_config}).encode())
        for name, data in weight_files.items():
            add("data/weights/" + name, data)
        add("data/constants/model_constants_config.json",
            json.dumps({"config": constants_config or {}}).encode())
    return buf.getvalue()


def payload(path, meta, is_param=True):
    return {"path_name": path, "is_param": is_param, "use_pickle": False, "tensor_meta": meta}


def floats(*v):
    return struct.pack("<%df" % len(v), *v)


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(folder, name), mode) as f:
        f.write(data)


def without_constant_target(sample):
    """The sample archive with its tensor_constant spec's target left out (its members otherwise
    as they are), and its program as bare JSON. The archive's loader refuses it (the constant's
    data cannot be found); the JSON loads, the verifier rejects it, and no pass may run on it."""
    src = zipfile.ZipFile(sample)
    model = None
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("models/model.json"):
                model = json.loads(data)
                for spec in model["graph_module"]["signature"]["input_specs"]:
                    spec.get("tensor_constant", {}).pop("tensor_constant_name", None)
                data = dumps(model).encode()
            z.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue(), dumps(model)


def npy(descr, fortran, shape, data):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, fortran, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


EVIL = "\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b[2J\u009b31m\x7f\u202egnp.exe\u2066"


def escapes_archive():
    p = base_program()
    text = dumps(p).replace('"add"', json.dumps("add" + EVIL)).replace('"w"', json.dumps("w" + EVIL))
    p = json.loads(text)
    md = p["graph_module"]["graph"]["nodes"][0]["metadata"]
    md["custom"] = json.dumps({"delegation_tag": "tag" + EVIL})
    md["stack_trace"] = "File \"m.py\", line 3, in forward" + EVIL
    md["nn_module_stack"] = "L__self__,," + EVIL
    return archive(p, {"w" + EVIL: payload("weight_0", tmeta([4], requires_grad=True))},
                   {"weight_0": floats(1, 2, 3, 4)})


def local_header(data, name):
    """The offset of a member's local header and of its data."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    off = info.header_offset
    nl, el = struct.unpack("<HH", data[off + 26:off + 30])
    return off, off + 30 + nl + el


def flip_member_byte(data, name, at):
    data = bytearray(data)
    data[local_header(data, name)[1] + at] ^= 0x40
    return bytes(data)


def zip64_directory(data):
    """The same archive with a ZIP64 end of central directory (record and locator, APPNOTE 4.3.14-15)
    and every entry's local header offset moved into a ZIP64 extra field (4.5.3): valid, as
    archives over 4 GiB are written; the members are where they were."""
    eocd = data.rindex(b"PK\x05\x06")
    n, cd_size, cd_off = struct.unpack("<HII", data[eocd + 10:eocd + 20])
    cd, out, p = data[cd_off:cd_off + cd_size], b"", 0
    for _ in range(n):
        nl, el, cl = struct.unpack("<HHH", cd[p + 28:p + 34])
        lho = struct.unpack("<I", cd[p + 42:p + 46])[0]
        head = bytearray(cd[p:p + 46])
        head[42:46] = b"\xff\xff\xff\xff"
        head[30:32] = struct.pack("<H", el + 12)
        name = cd[p + 46:p + 46 + nl]
        extra = cd[p + 46 + nl:p + 46 + nl + el] + struct.pack("<HHQ", 1, 8, lho)
        out += bytes(head) + name + extra + cd[p + 46 + nl + el:p + 46 + nl + el + cl]
        p += 46 + nl + el + cl
    e64_at = cd_off + len(out)
    e64 = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(out), cd_off)
    loc = struct.pack("<IIQI", 0x07064b50, 0, e64_at, 1)
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    return data[:cd_off] + out + e64 + loc + end


def corrupt_local_signature(data, name):
    data = bytearray(data)
    data[local_header(data, name)[0]] ^= 0xff
    return bytes(data)


def deflated(data):
    """The same archive with every member deflated."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), src.read(info),
                       compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def claims_size(data, name, size):
    """A member whose local header and central directory entry both claim `size` bytes."""
    data = bytearray(data)
    off = local_header(data, name)[0]
    struct.pack_into("<I", data, off + 22, size)
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        nl = struct.unpack("<H", data[pos + 28:pos + 30])[0]
        if data[pos + 46:pos + 46 + nl] == name.encode():
            struct.pack_into("<I", data, pos + 24, size)
        pos = data.find(b"PK\x01\x02", pos + 4)
    return bytes(data)


def corpus():
    good = archive(base_program(), {"w": payload("weight_0", tmeta([4], requires_grad=True))},
                   {"weight_0": floats(1, 2, 3, 4)})
    write(CORPUS, "truncated.pt2", good[: len(good) // 2])
    write(CORPUS, "no_model.pt2", archive(base_program(), {}, {}, with_model=False))
    write(CORPUS, "invalid.json", '{"graph_module": {"graph": {"nodes": []} "signature": {}}}\n')

    p = base_program()
    p["schema_version"] = {"major": 99, "minor": 0}
    write(CORPUS, "unknown_schema.json", dumps(p))

    p = base_program()
    p["graph_module"]["graph"]["nodes"][1]["inputs"][1]["arg"] = tensor("x2")
    write(CORPUS, "undefined_value.json", dumps(p))

    p = base_program()
    p["graph_module"]["graph"]["nodes"][1]["inputs"][1]["arg"] = None
    write(CORPUS, "null_arg.json", dumps(p))

    write(CORPUS, "missing_weight.pt2",
          archive(base_program(), {"v": payload("weight_0", tmeta([4]))}, {"weight_0": floats(1, 2, 3, 4)}))
    write(CORPUS, "short_weight.pt2",
          archive(base_program(), {"w": payload("weight_0", tmeta([4]))}, {"weight_0": floats(1, 2)}))
    # the config names a member the archive lacks: the message named the archive twice
    write(CORPUS, "weight_member_missing.pt2",
          archive(base_program(), {"w": payload("weight_0", tmeta([4]))}, {}))

    # a member of the wrong type: said so (a number target read as "no target", a list of
    # tensor_values as no metadata at all)
    p = base_program()
    p["graph_module"]["graph"]["nodes"][0]["target"] = 5
    write(CORPUS, "target_not_a_string.json", dumps(p))
    p = base_program()
    p["graph_module"]["graph"]["tensor_values"] = []
    write(CORPUS, "tensor_values_list.json", dumps(p))
    # found by a tester: raw control bytes, which JSON allows nowhere; a NUL in a name cut it
    # short ("arg0<NUL>_1" read as "arg0"), an ESC was kept, a NUL between tokens was whitespace
    text = dumps(base_program())
    write(CORPUS, "raw_nul_in_a_name.json", text.replace('"add_1"', '"add\x00_1"', 1))
    write(CORPUS, "raw_escape_in_a_name.json", text.replace('"add_1"', '"add\x1b[2J_1"', 1))

    # the archive's own members, as torch checks them: another format, another version, big-endian
    for name, header in (("archive_format_zip.pt2", {"archive_format": b"zip"}),
                         ("archive_version_99.pt2", {"archive_version": b"99"}),
                         ("byteorder_big.pt2", {"byteorder": b"big"}),
                         ("archive_format_missing.pt2", {"archive_format": None}),
                         ("archive_version_missing.pt2", {"archive_version": None})):
        write(CORPUS, name, archive(base_program(), {"w": payload("weight_0", tmeta([4]))},
                                    {"weight_0": floats(1, 2, 3, 4)}, header=header))

    # found by a tester: a Tensor argument written as None (torch's deserializer lets as_none
    # through); it verified, exported, and failed only when run
    p = base_program()
    p["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"] = {"as_none": True}
    write(CORPUS, "tensor_argument_none.json", dumps(p))

    p = base_program()
    p["graph_module"]["graph"]["nodes"][1]["outputs"] = [tensor("add")]
    p["graph_module"]["graph"]["outputs"] = [tensor("add")]
    write(CORPUS, "duplicate_names.json", dumps(p))

    p = base_program()
    p["graph_module"]["graph"]["tensor_values"]["x"] = tmeta([-3])
    write(CORPUS, "negative_size.json", dumps(p))

    p = base_program()
    p["graph_module"]["graph"]["tensor_values"]["x"] = tmeta([1000000, 1000000])
    write(CORPUS, "huge_shape.json", dumps(p))

    text = dumps(base_program())
    depth = 5000
    text = text.replace('"range_constraints": {}', '"range_constraints": ' + "[" * depth + "]" * depth, 1)
    write(CORPUS, "deep_nesting.json", text)

    # What fuzzing found (issue 12). tests/check_corpus.c says what each must give.
    p = base_program()
    p["graph_module"]["graph"]["nodes"][0]["outputs"] = [{"as_tensor": {}}]
    write(CORPUS, "output_without_name.json", dumps(p))
    write(CORPUS, "output_without_name.pt2", archive(p, {"w": payload("weight_0", tmeta([4], requires_grad=True))},
                                                      {"weight_0": floats(1, 2, 3, 4)}))
    archived, bare = without_constant_target(
        os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "shared_constant.pt2"))
    write(CORPUS, "constant_without_target.pt2", archived)
    write(CORPUS, "constant_without_target.json", bare)
    # Fortran order, a zero dimension last: no data, but the other sizes' product overflows int64
    write(CORPUS, "fortran_zero_dim.npy", npy("<f4", True, (2 ** 61, 4, 0), b""))

    # Text that would drive a terminal, in every string a command prints: the title (OSC 0), the
    # clipboard (OSC 52), a clear screen (CSI 2J), a C1 CSI, DEL, a right-to-left override and
    # an isolate. It loads, lowers, runs and exports; every command shows it escaped.
    write(CORPUS, "escapes.pt2", escapes_archive())

    # A ';' inside module names: torch's serialize_metadata joins "key,path,type" entries with
    # ';' unescaped, so only a ';' after an entry's second comma ends it (a strict export's
    # getattr path, a non-strict key and path). It loads; node and the node pane list 3 modules.
    p = base_program()
    p["graph_module"]["graph"]["nodes"][0]["metadata"]["nn_module_stack"] = (
        "L__self__,,m.M;L__self___blocks_a_b,getattr(L['self'].blocks, 'a;b'),m.Block;"
        "blocks.c;d,blocks.c;d,m.Inner")
    write(CORPUS, "module_stack_semicolon.json", dumps(p))

    # A source_fn_stack of two entries: serialize_metadata joins "name,target" entries with ';'
    # (ST_DELIMITER), as deserialize_metadata splits them; torch_fn is one (name, qualified
    # name) pair joined the same way. node and the node pane list two source_fn lines, and
    # torch_fn as one.
    p = base_program()
    meta = p["graph_module"]["graph"]["nodes"][0]["metadata"]
    meta["source_fn_stack"] = "l__self___block,m.Block;add,torch.add"
    meta["torch_fn"] = "add_1;builtin_function_or_method.add"
    write(CORPUS, "source_fn_stack_entries.json", dumps(p))

    # Names the UI cuts to their columns: one of 1500 characters keeps its end; on an ASCII
    # terminal wide characters and combining accents are measured as they are drawn
    write(CORPUS, "long_name.json", dumps(base_program()).replace('"x"', json.dumps("A" * 1500 + "_TAILEND")))
    wide = dumps(base_program()).replace('"x"', json.dumps("\u4e2d" * 20 + "_E"))
    write(CORPUS, "wide_names.json", wide.replace('"p_w"', json.dumps("e\u0301" * 25 + "_END")))

    # Strict where torch is strict: torch decodes the JSON as UTF-8 before parsing it
    text = dumps(base_program()).encode().replace(b'"add"', b'"ad\x9bd"', 1)
    write(CORPUS, "invalid_utf8.json", text)
    write(CORPUS, "nul_in_name.json", dumps(base_program()).replace('"add"', '"add\\u0000_evil"'))
    # Archives: a flipped byte in a stored weight (the CRC says so), a corrupt local header
    # signature (the central directory says otherwise), a member that claims 2.5 GiB
    good = archive(base_program(), {"w": payload("weight_0", tmeta([4], requires_grad=True))},
                   {"weight_0": floats(1, 2, 3, 4)})
    write(CORPUS, "crc_mismatch.pt2", flip_member_byte(good, "prog/data/weights/weight_0", 1))
    write(CORPUS, "bad_local_header.pt2", corrupt_local_signature(good, "prog/data/weights/weight_0"))
    # the model JSON is mapped from the file when it is stored (zip_map.c): a damaged one falls
    # back to the read through libzip, which reports it; a ZIP64 directory maps the same
    write(CORPUS, "json_crc_mismatch.pt2", flip_member_byte(good, "prog/models/model.json", 2))
    write(CORPUS, "zip64_directory.pt2", zip64_directory(good))
    write(CORPUS, "huge_member.pt2", claims_size(deflated(good), "prog/models/model.json", 5 << 29))

    write(CORPUS, "weights_config.json", json.dumps({"config": {}}))
    write(CORPUS, "empty.json", "")
    write(CORPUS, "not_a_program.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(24))
    # one byte: the message showed four, three of them from past the end of the file
    write(CORPUS, "one_byte.pte", b"E")


def programs():
    # two placeholders naming one constant target: unlifting fails with "`c` is not a buffer"
    nodes = [
        node(MUL, [("self", tensor("x"), 1), ("other", tensor("c_c"), 1)], [tensor("mul")]),
        node(MUL, [("self", tensor("mul"), 1), ("other", tensor("c_c_copy_0"), 1)], [tensor("mul_1")]),
    ]
    tv = {n: tmeta([4]) for n in ("c_c", "c_c_copy_0", "x", "mul", "mul_1")}
    write(PROGRAMS, "listed_twice.json", dumps(program(
        nodes, ["c_c_copy_0", "c_c", "x"], [tensor("mul_1")], tv,
        [constant("c_c_copy_0", "c"), constant("c_c", "c"), user_input("x")], [user_output("mul_1")])))

    # an Edge clone inside an ATen program
    nodes = [node("executorch.exir.dialects.edge.ops.aten.clone.default",
                  [("self", tensor("x"), 1)], [tensor("clone")])]
    tv = {n: tmeta([4]) for n in ("x", "clone")}
    write(PROGRAMS, "edge_in_aten.json", dumps(program(
        nodes, ["x"], [tensor("clone")], tv, [user_input("x")], [user_output("clone")])))

    # delegation tags in custom metadata (as a partitioner leaves them), an unknown op, kwargs
    nodes = [
        node(ADD, [("self", tensor("x"), 1), ("other", tensor("x"), 1), ("alpha", {"as_int": 2}, 2)],
             [tensor("add")], {"custom": json.dumps({"delegation_tag": "tag0"}),
                               "stack_trace": "File \"m.py\", line 3, in forward",
                               "nn_module_stack": "L__self__,,m.M", "debug_handle": "7"}),
        node(MUL, [("self", tensor("add"), 1), ("other", tensor("x"), 1)], [tensor("mul")],
             {"custom": json.dumps({"delegation_tag": "tag1", "note": "kept"})}),
        node("torch.ops.mylib.frobnicate.default",
             [("input", tensor("mul"), 1), ("scale", {"as_float": 0.5}, 2)], [tensor("frobnicate")]),
    ]
    tv = {n: tmeta([4]) for n in ("x", "add", "mul", "frobnicate")}
    write(PROGRAMS, "tagged.json", dumps(program(
        nodes, ["x"], [tensor("frobnicate")], tv, [user_input("x")], [user_output("frobnicate")])))

    # multi-output nodes: a Tensor[] return (as_tensors) and a tuple (several as_tensor), symbolic sizes
    s0 = {"as_expr": {"expr_str": "s0", "hint": {"as_int": 6}}}
    nodes = [
        node("torch.ops.aten.split_with_sizes.default",
             [("self", tensor("x"), 1), ("split_sizes", {"as_ints": [2, 4]}, 1)],
             [{"as_tensors": [{"name": "getitem"}, {"name": "getitem_1"}]}]),
        node("torch.ops.aten.native_layer_norm.default",
             [("input", tensor("getitem_1"), 1), ("normalized_shape", {"as_ints": [4]}, 1),
              ("weight", {"as_none": True}, 1), ("bias", {"as_none": True}, 1), ("eps", {"as_float": 1e-5}, 1)],
             [tensor("getitem_2"), tensor("getitem_3"), tensor("getitem_4")], name="native_layer_norm"),
        node("torch.ops.aten.slice.Tensor",
             [("self", tensor("y"), 1), ("dim", {"as_int": 0}, 1), ("start", {"as_int": 1}, 1),
              ("end", {"as_int": 9223372036854775807}, 1)], [tensor("slice_1")]),
    ]
    tv = {"x": tmeta([6]), "getitem": tmeta([2]), "getitem_1": tmeta([4]), "getitem_2": tmeta([4]),
          "getitem_3": tmeta([1]), "getitem_4": tmeta([1]), "y": tmeta([s0, 3], strides=[3, 1]),
          "slice_1": tmeta([{"as_expr": {"expr_str": "s0 - 1", "hint": {"as_int": 5}}}, 3], strides=[3, 1])}
    write(PROGRAMS, "multi_output.json", dumps(program(
        nodes, ["x", "y"], [tensor("getitem"), tensor("getitem_2"), tensor("slice_1")], tv,
        [user_input("x"), user_input("y")],
        [user_output("getitem"), user_output("getitem_2"), user_output("slice_1")])))

    # a buffer mutation pointing at a buffer the program does not have (the Core ML issue's error)
    nodes = [node(ADD, [("self", tensor("x"), 1), ("other", tensor("x"), 1)], [tensor("add")])]
    tv = {n: tmeta([4]) for n in ("x", "add")}
    write(PROGRAMS, "mutation_without_buffer.json", dumps(program(
        nodes, ["x"], [tensor("add"), tensor("add")], tv, [user_input("x")],
        [{"buffer_mutation": {"arg": {"name": "add"}, "buffer_name": "state_1"}}, user_output("add")])))

    # weights sharing one file: w is stored transposed (strides [1, 2]), b starts at element 6
    p = base_program()
    g = p["graph_module"]["graph"]
    g["tensor_values"]["p_w"] = tmeta([2, 3], requires_grad=True)
    g["tensor_values"]["p_b"] = tmeta([3], requires_grad=True)
    g["tensor_values"]["x"] = tmeta([2, 3])
    g["tensor_values"]["add"] = tmeta([2, 3])
    g["tensor_values"]["add_1"] = tmeta([2, 3])
    g["inputs"].insert(1, tensor("p_b"))
    p["graph_module"]["signature"]["input_specs"].insert(1, parameter("p_b", "b"))
    config = {"w": payload("weight_0", tmeta([2, 3], strides=[1, 2], requires_grad=True)),
              "b": payload("weight_0", tmeta([3], offset=6, requires_grad=True))}
    write(PROGRAMS, "strided.pt2", archive(p, config, {"weight_0": floats(0, 1, 2, 3, 4, 5, 10, 11, 12)}))

    # the same program repacked with every member deflated (zip -r does that): it loads as it is
    write(PROGRAMS, "deflated.pt2", deflated(archive(p, config, {"weight_0": floats(0, 1, 2, 3, 4, 5, 10, 11, 12)})))

    # a lowered program as ExecuTorch's serializer writes it: the call_delegate's first input holds
    # the LoweredBackendModule as a JSON string
    inner = program([node("executorch.exir.dialects.edge.ops.aten.add.Tensor",
                          [("self", tensor("x"), 1), ("other", tensor("x"), 1)], [tensor("aten_add_tensor")])],
                    ["x"], [tensor("aten_add_tensor")], {n: tmeta([4]) for n in ("x", "aten_add_tensor")},
                    [user_input("x")], [user_output("aten_add_tensor")], verifier="EDGE")
    inner["schema_version"] = {"major": -1, "minor": -1}
    lowered = {"backend_id": "BundledBackend", "processed_bytes": "AAEC",
               "compile_specs": [{"key": "level", "value": "Mw=="}], "original_module": inner,
               "original_state_dict": ""}
    nodes = [
        node("torch.ops.higher_order.executorch_call_delegate",
             [("lowered_module_0", {"as_string": json.dumps(lowered)}, 1), ("delegate_arg_0", tensor("x"), 1)],
             [{"as_tensors": [{"name": "getitem"}]}]),
        node("torch.ops.higher_order.executorch_call_delegate",
             [("lowered_module_1", {"as_string": "not a module"}, 1), ("delegate_arg_0", tensor("getitem"), 1)],
             [tensor("executorch_call_delegate_1")]),
    ]
    tv = {n: tmeta([4]) for n in ("x", "getitem", "executorch_call_delegate_1")}
    write(PROGRAMS, "lowered.json", dumps(program(
        nodes, ["x"], [tensor("executorch_call_delegate_1")], tv, [user_input("x")],
        [user_output("executorch_call_delegate_1")], verifier="EDGE")))

    # the good archive, for the metadata-only and folder tests
    write(PROGRAMS, "base.pt2", archive(base_program(), {"w": payload("weight_0", tmeta([4], requires_grad=True))},
                                        {"weight_0": floats(1, 2, 3, 4)}))
    write(PROGRAMS, "base.json", dumps(base_program()))


if __name__ == "__main__":
    corpus()
    programs()
