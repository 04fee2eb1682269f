"""The small scenario programs: each one is a case the passes must get right.

shared_constant, two_delegates: constants read inside and outside delegates (PR #24481,
shared-constant duplication). folded_output: constant_prop_pass folding a user output (the
ATen clone). constant_mask: boolean masks that the mask rewrite may or may not fold.
kv_cache: a KV-cache buffer mutated in place (the Core ML mutable-buffer issue, exir test 10).
"""

from builder import BOOL, FLOAT, LONG, Program

SOURCE = "/home/dev/models/%s.py"


def shared_constant():
    p = Program("shared_constant", "models.shared_constant.SharedConstant",
                SOURCE % "shared_constant")
    # torch would call the placeholder c_c; the scenario names it c, as in the PR's report
    c = p.constant("c", FLOAT, [4], [0.5, -1.0, 2.0, 0.25], name="c")
    x = p.user_input("x", FLOAT, [4])
    # The first reader stays on the CPU (the bundled backend has no trigonometry). It reads x
    # too, so constant propagation cannot fold it away before partitioning.
    with p.code("return torch.atan2(self.c, x), (x + self.c) * self.c"):
        s = p.op("atan2", c, x)
        a = p.op("add.Tensor", x, c)
        m = p.op("mul.Tensor", a, c)
    p.output(s, m)
    return p


def _delegate_region(p, h, scale, offset, weight):
    """Six backend ops reading each constant twice: additions and products."""
    with p.code("h = ((h + self.scale) * self.offset + self.weight) * self.scale"):
        h = p.op("add.Tensor", h, scale)
        h = p.op("mul.Tensor", h, offset)
        h = p.op("add.Tensor", h, weight)
        h = p.op("mul.Tensor", h, scale)
    with p.code("h = (h + self.offset) * self.weight"):
        h = p.op("add.Tensor", h, offset)
        h = p.op("mul.Tensor", h, weight)
    return h


def _second_region(p, h, scale, offset, weight):
    """Six backend ops reading each constant twice: differences and quotients, so that a
    backend taking only additions and products leaves this region to a second backend."""
    with p.code("h = ((h - self.scale) / self.offset - self.weight) / self.scale"):
        h = p.op("sub.Tensor", h, scale)
        h = p.op("div.Tensor", h, offset)
        h = p.op("sub.Tensor", h, weight)
        h = p.op("div.Tensor", h, scale)
    with p.code("h = (h - self.offset) / self.weight"):
        h = p.op("sub.Tensor", h, offset)
        h = p.op("div.Tensor", h, weight)
    return h


def two_delegates():
    p = Program("two_delegates", "models.two_delegates.TwoDelegates", SOURCE % "two_delegates")
    weight = p.parameter("weight", FLOAT, [4], [0.75, -0.5, 1.25, 0.1])
    offset = p.buffer("offset", FLOAT, [4], [0.2, 0.4, -0.6, 0.8])
    scale = p.constant("scale", FLOAT, [4], [1.5, 0.5, -1.0, 2.0])
    x = p.user_input("x", FLOAT, [4])
    # CPU readers first in graph order; they read x too, so constant propagation keeps them
    with p.code("s = [torch.atan2(t, x) for t in (self.scale, self.offset, self.weight)]"):
        readers = [p.op("atan2", scale, x), p.op("atan2", offset, x), p.op("atan2", weight, x)]
    h = _delegate_region(p, x, scale, offset, weight)
    with p.code("h = torch.cos(h)"):
        h = p.op("cos", h)  # not supported by the backend: splits the two regions
    h = _second_region(p, h, scale, offset, weight)
    p.output(h, *readers)
    return p


def folded_output():
    p = Program("folded_output", "models.folded_output.FoldedOutput", SOURCE % "folded_output")
    a = p.parameter("a", FLOAT, [2], [1.5, -2.0])
    x = p.user_input("x", FLOAT, [2])
    with p.code("return x + 1, self.a * 2"):
        y = p.op("add.Tensor", x, 1)
        z = p.op("mul.Tensor", a, 2)
    p.output(y, z)
    return p


def _mask(shape, true_positions):
    n = 1
    for d in shape:
        n *= d
    return [i in true_positions for i in range(n)]


def constant_mask():
    p = Program("constant_mask", "models.constant_mask.ConstantMask", SOURCE % "constant_mask")
    mask_param = p.parameter("mask_param", BOOL, [4], [True, True, False, False],
                             requires_grad=False)
    mask_buf = p.buffer("mask_buf", BOOL, [4], [False, True, True, False], persistent=False)
    mask_pbuf = p.buffer("mask_pbuf", BOOL, [4], [True, False, False, True])
    mask_mut = p.buffer("mask_mut", BOOL, [4], [False, True, False, True])
    mask_1d = p.constant("mask_1d", BOOL, [4], [True, False, True, False])
    mask_2d = p.constant("mask_2d", BOOL, [4, 5], _mask([4, 5], {1, 7, 18}))
    mask_3d = p.constant("mask_3d", BOOL, [2, 3, 4], _mask([2, 3, 4], {0, 5, 11, 14, 23}))
    mask_axis1 = p.constant("mask_axis1", BOOL, [5], [True, True, False, False, True])
    mask_with_index = p.constant("mask_with_index", BOOL, [4], [True, False, True, False])
    index = p.constant("index", LONG, [2], [1, 3])
    mask_false = p.constant("mask_false", BOOL, [4], [False] * 4)
    x = p.user_input("x", FLOAT, [4, 5])
    x3 = p.user_input("x3", FLOAT, [4, 5, 6])
    x4 = p.user_input("x4", FLOAT, [2, 3, 4, 5])
    mask_in = p.user_input("mask_in", BOOL, [4])
    outs = []
    # folded by the rewrite: constants and non-persistent, non-mutated buffers
    with p.code("a = x[self.mask_1d]"):
        outs.append(p.op("index.Tensor", x, [mask_1d]))
    with p.code("b = x3[self.mask_2d]"):
        outs.append(p.op("index.Tensor", x3, [mask_2d]))
    with p.code("c = x4[self.mask_3d]"):
        outs.append(p.op("index.Tensor", x4, [mask_3d]))
    with p.code("d = x[self.mask_buf]"):
        outs.append(p.op("index.Tensor", x, [mask_buf]))
    with p.code("e = x[:, self.mask_axis1]"):
        outs.append(p.op("index.Tensor", x, [None, mask_axis1]))
    # refused: the mask is not a known constant, or the rewrite cannot express the result
    with p.code("f = x[x > 0]"):
        outs.append(p.op("index.Tensor", x, [p.op("gt.Scalar", x, 0)]))
    with p.code("g = x[mask_in]"):
        outs.append(p.op("index.Tensor", x, [mask_in]))
    with p.code("h = x3[self.mask_with_index, self.index]"):
        outs.append(p.op("index.Tensor", x3, [mask_with_index, index]))
    with p.code("i = x[self.mask_false]"):
        outs.append(p.op("index.Tensor", x, [mask_false]))
    with p.code("j = x[self.mask_param]"):
        outs.append(p.op("index.Tensor", x, [mask_param]))
    with p.code("k = x[self.mask_pbuf]"):
        outs.append(p.op("index.Tensor", x, [mask_pbuf]))
    with p.code("l = x[self.mask_mut]"):
        outs.append(p.op("index.Tensor", x, [mask_mut]))
    with p.code("self.mask_mut.logical_not_()"):
        p.mutate(mask_mut, p.op("logical_not", mask_mut))
    p.output(*outs)
    return p


def kv_cache():
    p = Program("kv_cache", "models.kv_cache.KVCacheStep", SOURCE % "kv_cache")
    cache = p.buffer("cache", FLOAT, [4, 8], [0.0] * 32)
    q = p.user_input("q", FLOAT, [1, 8])
    k_val = p.user_input("k_val", FLOAT, [1, 8])
    input_pos = p.user_input("input_pos", LONG, [1])
    with p.code("q_t = q.transpose(0, 1)"):
        q_t = p.op("permute", q, [1, 0])
    with p.code("self.cache[input_pos] = k_val"):
        updated = p.op("index_put", cache, [input_pos], k_val)
    p.mutate(cache, updated)
    with p.code("return torch.mm(self.cache, q_t)"):
        out = p.op("mm", updated, q_t)
    p.output(out)
    return p
