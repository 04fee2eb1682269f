#!/usr/bin/env python3
"""Independent NumPy golden outputs for the sample programs.

    python3 tests/golden/make_golden.py [SAMPLES_DIR [OUT_DIR]]   (defaults: samples, tests/golden)

Each model's forward is written out by hand here, in float64, from the model's definition
(samples/*.py describe the same models as ATen graphs). The archives are opened only to read
weight and constant values; the graphs are never interpreted, so a wrong graph and a wrong
runtime cannot agree by accident. Results are stored as float32 (.npy, format 1.0).

Every forward is also run in float32 and compared with the float64 result at the tolerance
the tests use (rtol 1e-5, atol 1e-6), to show a float32 runtime can meet it.
"""

import json
import math
import os
import sys
import zipfile

try:
    import numpy as np
except ImportError:  # numpy comes from Debian's python3-numpy: use that interpreter
    if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

RTOL, ATOL = 1e-5, 1e-6
NP_DTYPES = {7: "<f4", 5: "<i8", 12: "?", 2: "<i1"}  # torch.export ScalarType codes


class Archive:
    """The weights and constants of a .pt2 archive, by fully qualified name."""

    def __init__(self, path):
        self.tensors = {}
        with zipfile.ZipFile(path) as z:
            root = z.namelist()[0].split("/")[0]
            for folder in ("weights", "constants"):
                config = json.loads(z.read("%s/data/%s/model_%s_config.json"
                                           % (root, folder, folder)))["config"]
                for fqn, meta in config.items():
                    tm = meta["tensor_meta"]
                    shape = [d["as_int"] for d in tm["sizes"]]
                    raw = z.read("%s/data/%s/%s" % (root, folder, meta["path_name"]))
                    arr = np.frombuffer(raw, dtype=NP_DTYPES[tm["dtype"]]).reshape(shape)
                    self.tensors[fqn] = arr.copy()

    def __getitem__(self, fqn):
        return self.tensors[fqn]


def normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- building blocks

def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def gelu(x):
    erf = np.vectorize(math.erf, otypes=[x.dtype])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def rms_norm(x, w, eps=1e-5):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


# ---------------------------------------------------------------- the models

def shared_constant(ar, dt, inputs):
    c, x = ar["c"].astype(dt), inputs["x"].astype(dt)
    return [np.arctan2(c, x), (x + c) * c]


def two_delegates(ar, dt, inputs):
    w, o, s = (ar[n].astype(dt) for n in ("weight", "offset", "scale"))

    def region(h):
        return (((((h + s) * o + w) * s) + o) * w)

    def second_region(h):
        return (((((h - s) / o - w) / s) - o) / w)

    x = inputs["x"].astype(dt)
    h = second_region(np.cos(region(x)))
    return [h, np.arctan2(s, x), np.arctan2(o, x), np.arctan2(w, x)]


def folded_output(ar, dt, inputs):
    return [inputs["x"].astype(dt) + 1, ar["a"].astype(dt) * 2]


def constant_mask(ar, dt, inputs):
    x, x3, x4 = (inputs[n].astype(dt) for n in ("x", "x3", "x4"))
    return [x[ar["mask_1d"]], x3[ar["mask_2d"]], x4[ar["mask_3d"]], x[ar["mask_buf"]],
            x[:, ar["mask_axis1"]], x[x > 0], x[inputs["mask_in"]],
            x3[ar["mask_with_index"], ar["index"]], x[ar["mask_false"]], x[ar["mask_param"]],
            x[ar["mask_pbuf"]], x[ar["mask_mut"]]]


def kv_cache_step(ar, dt, inputs, state):
    cache = state["cache"].astype(dt).copy()
    cache[inputs["input_pos"]] = inputs["k_val"].astype(dt)
    return [cache @ inputs["q"].astype(dt).T], {"cache": cache}


def policy(ar, dt, inputs):
    P = {k: v.astype(dt) if v.dtype != bool else v for k, v in ar.tensors.items()}
    s = np.clip((inputs["state"].astype(dt) - P["normalize.obs_mean"])
                / P["normalize.obs_std"], -5, 5)
    g = np.clip((inputs["goal"].astype(dt) - P["normalize.goal_mean"])
                / P["normalize.goal_std"], -5, 5)
    freqs = P["time_embed.freqs"]
    phase = inputs["t"].astype(dt) * freqs
    pos = np.concatenate([np.sin(phase), np.cos(phase)], 1)
    vel = np.concatenate([np.cos(phase) * freqs, -np.sin(phase) * freqs], 1)
    h = linear(np.concatenate([s, g, pos, vel], 1), P["in_proj.weight"], P["in_proj.bias"])
    i = 0
    while "encoder.blocks.%d.norm.weight" % i in P:
        f = "encoder.blocks.%d." % i
        y = layer_norm(h, P[f + "norm.weight"], P[f + "norm.bias"])
        y = linear(gelu(linear(y, P[f + "fc1.weight"], P[f + "fc1.bias"])),
                   P[f + "fc2.weight"], P[f + "fc2.bias"])
        h = h + y
        i += 1
    h = layer_norm(h, P["encoder.norm.weight"], P["encoder.norm.bias"])
    steps = []
    for pos_k in P["action_head.chunk_pos"]:
        a = np.maximum(linear(h + pos_k, P["action_head.fc1.weight"],
                              P["action_head.fc1.bias"]), 0)
        a = np.tanh(linear(a, P["action_head.fc2.weight"], P["action_head.fc2.bias"]))
        steps.append(np.clip(a * P["action_head.scale"] + P["action_head.offset"], -1.5, 1.5))
    actions = np.concatenate(steps, 0)
    values = []
    i = 0
    while "critics.%d.fc1.weight" % i in P:
        f = "critics.%d." % i
        y = np.maximum(linear(h, P[f + "fc1.weight"], P[f + "fc1.bias"]), 0)
        values.append(linear(y, P[f + "fc2.weight"], P[f + "fc2.bias"]))
        i += 1
    v = np.concatenate(values, 1)
    grip = 1 / (1 + np.exp(-linear(h, P["gripper_head.weight"], P["gripper_head.bias"])))
    logp = log_softmax(linear(h, P["discrete_head.weight"], P["discrete_head.bias"]))
    mask = P["action_mask"]
    choice = np.where(mask, logp, -1e9).argmax(-1)
    return [actions, actions[1:] - actions[:-1], grip, v.mean(1, keepdims=True),
            v.min(1, keepdims=True), logp.reshape(-1)[mask], choice]


def tiny_llama_step(ar, dt, inputs, state):
    P = {k: v.astype(dt) for k, v in ar.tensors.items()}
    pos = int(inputs["input_pos"][0])
    vocab, dim = P["tok_embeddings.weight"].shape
    max_seq, head_dim = P["freqs_cos"].shape
    heads = dim // head_dim
    # rotary tables: recomputed here and checked against the program's constants
    inv_freq = 10000.0 ** (-np.arange(0, head_dim, 2) / head_dim)
    angles = np.outer(np.arange(max_seq), inv_freq)
    angles = np.concatenate([angles, angles], 1)
    assert np.allclose(np.cos(angles), P["freqs_cos"], atol=1e-6)
    assert np.allclose(np.sin(angles), P["freqs_sin"], atol=1e-6)
    cos, sin = P["freqs_cos"][pos], P["freqs_sin"][pos]

    def rope(x):  # x [heads, head_dim]
        half = head_dim // 2
        return x * cos + np.concatenate([-x[:, half:], x[:, :half]], 1) * sin

    new_state = {}
    h = P["tok_embeddings.weight"][inputs["tokens"]]  # [1, dim]
    layer = 0
    while "layers.%d.attention.wq.weight" % layer in P:
        f = "layers.%d." % layer
        x = rms_norm(h, P[f + "attention_norm.weight"])
        q = rope(linear(x, P[f + "attention.wq.weight"]).reshape(heads, head_dim))
        k = rope(linear(x, P[f + "attention.wk.weight"]).reshape(heads, head_dim))
        v = linear(x, P[f + "attention.wv.weight"])
        k_cache = state[f + "attention.k_cache"].astype(dt).copy()
        v_cache = state[f + "attention.v_cache"].astype(dt).copy()
        k_cache[pos] = k.reshape(dim)
        v_cache[pos] = v.reshape(dim)
        new_state[f + "attention.k_cache"] = k_cache
        new_state[f + "attention.v_cache"] = v_cache
        kh = k_cache.reshape(max_seq, heads, head_dim).transpose(1, 0, 2)  # [heads, seq, hd]
        vh = v_cache.reshape(max_seq, heads, head_dim).transpose(1, 0, 2)
        scores = np.einsum("hd,hsd->hs", q, kh) / math.sqrt(head_dim)
        scores = np.where(np.arange(max_seq) <= pos, scores, -np.inf)
        attn = np.einsum("hs,hsd->hd", softmax(scores), vh).reshape(1, dim)
        h = h + linear(attn, P[f + "attention.wo.weight"])
        x = rms_norm(h, P[f + "ffn_norm.weight"])
        gate = linear(x, P[f + "feed_forward.w1.weight"])
        up = linear(x, P[f + "feed_forward.w3.weight"])
        h = h + linear(gate / (1 + np.exp(-gate)) * up, P[f + "feed_forward.w2.weight"])
        layer += 1
    logits = linear(rms_norm(h, P["norm.weight"]), P["output.weight"])
    return [logits], new_state


def quantize(x, scale, qmin=-128, qmax=127):
    """quantized_decomposed.quantize_per_tensor (zero point 0): round(x * (1 / scale)) in
    float32, as torch computes it (a float32 tensor times a Python float), half to even."""
    v = np.rint((x.astype(np.float32) * np.float32(1.0 / scale)).astype(np.float64))
    return np.clip(v, qmin, qmax)


def dequantize(q, scale):
    """dequantize_per_tensor / per channel (scale broadcast along axis 0): (q - 0) * scale in
    float32."""
    return q.astype(np.float32) * np.asarray(scale, dtype=np.float32)


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), dtype=x.dtype)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = np.tensordot(xp[:, :, i:i + kh, j:j + kw], w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, o, 1, 1)


def quantized_mlp(ar, dt, inputs):
    """samples/quantized.py: every activation through quantize/dequantize (int8, scales as
    that file writes them), weights dequantized per output channel."""
    scales = {"x": 0.031, "fc1": 0.047, "fc2": 0.052, "y": 0.029, "conv": 0.043}

    def weight(k):
        w = ar["_frozen_param%d" % k].astype(np.float32)
        s = ar["_scale_%d" % k].astype(np.float32)
        return (w * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(dt)

    def qdq(v, name):
        return dequantize(quantize(v, scales[name]), scales[name]).astype(dt)

    x, y = inputs["x"].astype(dt), inputs["y"].astype(dt)
    h = np.maximum(linear(qdq(x, "x"), weight(0), ar["fc1.bias"].astype(dt)), 0)
    out = qdq(linear(qdq(h, "fc1"), weight(1), ar["fc2.bias"].astype(dt)), "fc2")
    c = np.maximum(conv2d(qdq(y, "y"), weight(2), ar["conv.bias"].astype(dt), 1), 0)
    return [out, qdq(c, "conv")]


# ---------------------------------------------------------------- driver

def check_float32(name, outs64, outs32):
    for i, (a, b) in enumerate(zip(outs64, outs32)):
        if a.dtype.kind != "f":
            assert np.array_equal(a, b), "%s out %d: float32 run differs" % (name, i)
            continue
        if a.size and not np.allclose(b, a, rtol=RTOL, atol=ATOL):
            err = np.max(np.abs(b - a) / (ATOL + RTOL * np.abs(a)))
            raise SystemExit("%s out %d: a float32 run misses the tolerance (x%.2f)"
                             % (name, i, err))


def as_stored(arr):
    return arr.astype(np.float32) if arr.dtype.kind == "f" else arr


def write(outdir, name, arr):
    np.save(os.path.join(outdir, name), as_stored(np.asarray(arr)))


def single(name, forward, inputs, samples, out):
    ar = Archive(os.path.join(samples, name + ".pt2"))
    outs = forward(ar, np.float64, inputs)
    check_float32(name, outs, forward(ar, np.float32, inputs))
    os.makedirs(out, exist_ok=True)
    for k, v in inputs.items():
        write(out, "in_%s.npy" % k, v)
    for i, v in enumerate(outs):
        write(out, "out_%d.npy" % i, v)


def stepped(name, forward, make_inputs, buffers, steps, samples, out, save_state):
    ar = Archive(os.path.join(samples, name + ".pt2"))
    state64 = {b: ar[b] for b in buffers}
    state32 = dict(state64)
    os.makedirs(out, exist_ok=True)
    for k in range(steps):
        inputs = make_inputs(k)
        outs, state64 = forward(ar, np.float64, inputs, state64)
        outs32, state32 = forward(ar, np.float32, inputs, state32)
        check_float32("%s step %d" % (name, k), outs, outs32)
        for n, v in inputs.items():
            write(out, "step%d_in_%s.npy" % (k, n), v)
        for i, v in enumerate(outs):
            write(out, "step%d_out_%d.npy" % (k, i), v)
        if save_state:
            for b, v in state64.items():
                write(out, "step%d_state_%s.npy" % (k, b), v)
        # the next step starts from the float32 state a runtime would have kept
        state64 = {b: v.astype(np.float32) for b, v in state64.items()}


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    samples = argv[1] if len(argv) > 1 else os.path.join(root, "samples")
    outdir = argv[2] if len(argv) > 2 else here
    step = np.array  # integer inputs carry the step number
    single("shared_constant", shared_constant, {"x": normal(1, [4])}, samples,
           os.path.join(outdir, "shared_constant"))
    single("two_delegates", two_delegates, {"x": normal(2, [4])}, samples,
           os.path.join(outdir, "two_delegates"))
    single("folded_output", folded_output, {"x": normal(3, [2])}, samples,
           os.path.join(outdir, "folded_output"))
    single("constant_mask", constant_mask,
           {"x": normal(4, [4, 5]), "x3": normal(5, [4, 5, 6]), "x4": normal(6, [2, 3, 4, 5]),
            "mask_in": np.array([True, False, False, True])},
           samples, os.path.join(outdir, "constant_mask"))
    single("policy", policy,
           {"state": normal(7, [1, 14]), "goal": normal(8, [1, 6]), "t": normal(9, [1, 1])},
           samples, os.path.join(outdir, "policy"))
    single("quantized_mlp", quantized_mlp, {"x": normal(10, [2, 8]), "y": normal(11, [1, 2, 4, 4])},
           samples, os.path.join(outdir, "quantized_mlp"))
    stepped("kv_cache", kv_cache_step,
            lambda k: {"q": normal(100 + k, [1, 8]), "k_val": normal(200 + k, [1, 8]),
                       "input_pos": step([k], dtype=np.int64)},
            ["cache"], 3, samples, os.path.join(outdir, "kv_cache"), save_state=True)
    llama = Archive(os.path.join(samples, "tiny_llama.pt2"))
    caches = sorted(n for n in llama.tensors if n.endswith("_cache"))
    stepped("tiny_llama", tiny_llama_step,
            lambda k: {"tokens": step([k], dtype=np.int64),
                       "input_pos": step([k], dtype=np.int64)},
            caches, 3, samples, os.path.join(outdir, "tiny_llama"), save_state=False)
    print("golden files written under", outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
