"""tiny_llama: one decode step of a tiny Llama-style decoder with a KV cache.

Token embedding, RMSNorm, attention with rotary embeddings (cos/sin tables are lifted tensor
constants), per-layer k/v cache buffers written with index_put at input_pos (mutated
buffers), a causal mask computed from input_pos (arange + le + where), softmax, a SiLU MLP,
a final norm and the logits. Attention is unrolled per head (slices of q/k/v and of the
caches) so the program reaches the size of a real exported model without big weights.
"""

import math
import random

from aten import CPU, INT64_MAX, LAYOUT_STRIDED
from builder import FLOAT, LONG, Program

VOCAB, DIM, HEADS, LAYERS, FFN, MAX_SEQ = 64, 32, 8, 7, 64, 8
HEAD_DIM = DIM // HEADS
EPS = 1e-05
ROPE_THETA = 10000.0
MASK_MIN = -3.4028234663852886e+38  # torch.finfo(torch.float32).min, as HF models use
SEED = 2024


def rope_tables():
    """cos/sin tables [MAX_SEQ, HEAD_DIM], rotate-half layout (each half repeated)."""
    inv_freq = [ROPE_THETA ** (-2.0 * i / HEAD_DIM) for i in range(HEAD_DIM // 2)]
    cos, sin = [], []
    for pos in range(MAX_SEQ):
        angles = [pos * f for f in inv_freq] * 2
        cos += [math.cos(a) for a in angles]
        sin += [math.sin(a) for a in angles]
    return cos, sin


def _rms_norm(p, x, weight, fqn):
    with p.module(fqn, "models.tiny_llama.RMSNorm"):
        with p.code("v = x.pow(2).mean(-1, keepdim=True)"):
            v = p.op("mean.dim", p.op("pow.Tensor_Scalar", x, 2), [-1], True)
        with p.code("x = x * torch.rsqrt(v + self.eps)"):
            x = p.op("mul.Tensor", x, p.op("rsqrt", p.op("add.Tensor", v, EPS)))
        with p.code("return self.weight * x"):
            return p.op("mul.Tensor", weight, x)


def _linear(p, x, weight, fqn):
    with p.module(fqn, "torch.nn.modules.linear.Linear"):
        return p.op("linear", x, weight)


def _rope(p, x, cos, sin):
    with p.code("x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]"):
        x1 = p.op("slice.Tensor", x, 1, 0, HEAD_DIM // 2)
        x2 = p.op("slice.Tensor", x, 1, HEAD_DIM // 2, INT64_MAX)
    with p.code("return x * cos + torch.cat((-x2, x1), dim=-1) * sin"):
        rotated = p.op("cat", [p.op("neg", x2), x1], -1)
        return p.op("add.Tensor", p.op("mul.Tensor", x, cos), p.op("mul.Tensor", rotated, sin))


def _attention(p, x, layer, weights, caches, ctx):
    f = "layers.%d.attention" % layer
    wq, wk, wv, wo = weights
    k_cache, v_cache = caches
    with p.module(f, "models.tiny_llama.Attention"):
        with p.code("q, k, v = self.wq(x), self.wk(x), self.wv(x)"):
            q = _linear(p, x, wq, f + ".wq")
            k = _linear(p, x, wk, f + ".wk")
            v = _linear(p, x, wv, f + ".wv")
        q_heads, k_heads = [], []
        for h in range(HEADS):
            lo, hi = h * HEAD_DIM, (h + 1) * HEAD_DIM
            with p.code("q_h, k_h = q[:, %d:%d], k[:, %d:%d]" % (lo, hi, lo, hi)):
                q_h = p.op("slice.Tensor", q, 1, lo, hi)
                k_h = p.op("slice.Tensor", k, 1, lo, hi)
            q_heads.append(_rope(p, q_h, ctx["cos"], ctx["sin"]))
            k_heads.append(_rope(p, k_h, ctx["cos"], ctx["sin"]))
        with p.code("self.k_cache[input_pos] = torch.cat(k_heads, -1)"):
            k_all = p.op("index_put", k_cache, [ctx["input_pos"]], p.op("cat", k_heads, -1))
        p.mutate(k_cache, k_all)
        with p.code("self.v_cache[input_pos] = v"):
            v_all = p.op("index_put", v_cache, [ctx["input_pos"]], v)
        p.mutate(v_cache, v_all)
        outs = []
        for h in range(HEADS):
            lo, hi = h * HEAD_DIM, (h + 1) * HEAD_DIM
            with p.code("k_h, v_h = self.k_cache[:, %d:%d], self.v_cache[:, %d:%d]"
                        % (lo, hi, lo, hi)):
                k_h = p.op("slice.Tensor", k_all, 1, lo, hi)
                v_h = p.op("slice.Tensor", v_all, 1, lo, hi)
            with p.code("s = (q_h @ k_h.transpose(0, 1)) * self.scale"):
                s = p.op("mul.Tensor", p.op("mm", q_heads[h], p.op("permute", k_h, [1, 0])),
                         HEAD_DIM ** -0.5)
            with p.code("s = torch.where(mask, s, torch.finfo(s.dtype).min)"):
                s = p.op("where.self", ctx["mask"], s, ctx["floor"])
            with p.code("out_h = F.softmax(s, dim=-1) @ v_h"):
                outs.append(p.op("mm", p.op("_softmax", s, -1, False), v_h))
        with p.code("return self.wo(torch.cat(outs, -1))"):
            return _linear(p, p.op("cat", outs, -1), wo, f + ".wo")


def tiny_llama():
    p = Program("tiny_llama", "models.tiny_llama.TinyLlama", "/home/dev/models/tiny_llama.py")
    rng = random.Random(SEED)

    def normal(n, std):
        return [rng.gauss(0.0, std) for _ in range(n)]

    def ones_ish(n):
        return [1.0 + rng.gauss(0.0, 0.05) for _ in range(n)]

    embed = p.parameter("tok_embeddings.weight", FLOAT, [VOCAB, DIM], normal(VOCAB * DIM, 1.0))
    layers = []
    for i in range(LAYERS):
        f = "layers.%d." % i
        attn = [p.parameter(f + "attention.%s.weight" % n, FLOAT, [DIM, DIM],
                            normal(DIM * DIM, DIM ** -0.5)) for n in ("wq", "wk", "wv", "wo")]
        ffn = [p.parameter(f + "feed_forward.w1.weight", FLOAT, [FFN, DIM],
                           normal(FFN * DIM, DIM ** -0.5)),
               p.parameter(f + "feed_forward.w2.weight", FLOAT, [DIM, FFN],
                           normal(FFN * DIM, FFN ** -0.5)),
               p.parameter(f + "feed_forward.w3.weight", FLOAT, [FFN, DIM],
                           normal(FFN * DIM, DIM ** -0.5))]
        norms = [p.parameter(f + "attention_norm.weight", FLOAT, [DIM], ones_ish(DIM)),
                 p.parameter(f + "ffn_norm.weight", FLOAT, [DIM], ones_ish(DIM))]
        layers.append((attn, ffn, norms))
    norm = p.parameter("norm.weight", FLOAT, [DIM], ones_ish(DIM))
    output = p.parameter("output.weight", FLOAT, [VOCAB, DIM], normal(VOCAB * DIM, DIM ** -0.5))
    caches = [(p.buffer("layers.%d.attention.k_cache" % i, FLOAT, [MAX_SEQ, DIM],
                        [0.0] * (MAX_SEQ * DIM)),
               p.buffer("layers.%d.attention.v_cache" % i, FLOAT, [MAX_SEQ, DIM],
                        [0.0] * (MAX_SEQ * DIM))) for i in range(LAYERS)]
    cos_table, sin_table = rope_tables()
    freqs_cos = p.constant("freqs_cos", FLOAT, [MAX_SEQ, HEAD_DIM], cos_table)
    freqs_sin = p.constant("freqs_sin", FLOAT, [MAX_SEQ, HEAD_DIM], sin_table)
    tokens = p.user_input("tokens", LONG, [1])
    input_pos = p.user_input("input_pos", LONG, [1])

    with p.module("tok_embeddings", "torch.nn.modules.sparse.Embedding"):
        with p.code("h = self.tok_embeddings(tokens)"):
            h = p.op("embedding", embed, tokens)
    ctx = {"input_pos": input_pos}
    with p.code("mask = torch.arange(self.max_seq_len) <= input_pos"):
        arange = p.op("arange.start", 0, MAX_SEQ, dtype=LONG, layout=LAYOUT_STRIDED,
                      device=CPU, pin_memory=False)
        ctx["mask"] = p.op("le.Tensor", arange, input_pos)
    with p.code("floor = torch.full((1, self.max_seq_len), torch.finfo(torch.float32).min)"):
        ctx["floor"] = p.op("full", [1, MAX_SEQ], MASK_MIN, dtype=FLOAT,
                            layout=LAYOUT_STRIDED, device=CPU, pin_memory=False)
    with p.code("cos, sin = self.freqs_cos[input_pos], self.freqs_sin[input_pos]"):
        ctx["cos"] = p.op("index.Tensor", freqs_cos, [input_pos])
        ctx["sin"] = p.op("index.Tensor", freqs_sin, [input_pos])

    for i, (attn, ffn, norms) in enumerate(layers):
        f = "layers.%d" % i
        with p.module(f, "models.tiny_llama.TransformerBlock"):
            with p.code("h = h + self.attention(self.attention_norm(h), input_pos)"):
                x = _rms_norm(p, h, norms[0], f + ".attention_norm")
                h = p.op("add.Tensor", h, _attention(p, x, i, attn, caches[i], ctx))
            with p.code("return h + self.feed_forward(self.ffn_norm(h))"):
                x = _rms_norm(p, h, norms[1], f + ".ffn_norm")
                with p.module(f + ".feed_forward", "models.tiny_llama.FeedForward"):
                    with p.code("return self.w2(F.silu(self.w1(x)) * self.w3(x))"):
                        gate = p.op("silu", _linear(p, x, ffn[0], f + ".feed_forward.w1"))
                        up = _linear(p, x, ffn[2], f + ".feed_forward.w3")
                        x = _linear(p, p.op("mul.Tensor", gate, up), ffn[1],
                                    f + ".feed_forward.w2")
                h = p.op("add.Tensor", h, x)
    with p.code("return self.output(self.norm(h))"):
        logits = _linear(p, _rms_norm(p, h, norm, "norm"), output, "output")
    p.output(logits)
    return p
