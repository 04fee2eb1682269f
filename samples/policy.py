"""policy: a small robot policy with action chunking, a few hundred nodes.

Observation normalisation with constant statistics, sinusoidal time features (sin and cos
stay on the CPU and split the graph; the frequency constant is read before and after them),
a residual MLP encoder, an action-chunk decoder, a critic ensemble written the way
run_decompositions writes nn.Linear (permute + addmm), a gripper head and a discrete head
whose constant boolean action mask is used as x[mask].
"""

import random

from aten import CPU, LAYOUT_STRIDED
from builder import BOOL, FLOAT, Program

STATE, GOAL, FREQS, HIDDEN, FFN = 14, 6, 8, 32, 64
CHUNK, ACTION, CRITICS, BLOCKS, DISCRETE = 16, 7, 4, 6, 10
ACTION_MASK = [True, False, True, True, False, True, True, False, True, False]
SEED = 1234


class _Weights:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def normal(self, n, std, mean=0.0):
        return [self.rng.gauss(mean, std) for _ in range(n)]


def _linear_params(p, w, fqn, out_f, in_f, gain=1.0):
    weight = p.parameter(fqn + ".weight", FLOAT, [out_f, in_f],
                         w.normal(out_f * in_f, gain * in_f ** -0.5))
    bias = p.parameter(fqn + ".bias", FLOAT, [out_f], w.normal(out_f, 0.02))
    return weight, bias


def policy():
    p = Program("policy", "models.policy.ChunkPolicy", "/home/dev/models/policy.py")
    w = _Weights(SEED)
    linear_t = "torch.nn.modules.linear.Linear"
    # parameters, in registration order
    in_proj = _linear_params(p, w, "in_proj", HIDDEN, STATE + GOAL + 4 * FREQS)
    blocks = []
    for i in range(BLOCKS):
        f = "encoder.blocks.%d." % i
        norm = (p.parameter(f + "norm.weight", FLOAT, [HIDDEN], w.normal(HIDDEN, 0.1, 1.0)),
                p.parameter(f + "norm.bias", FLOAT, [HIDDEN], w.normal(HIDDEN, 0.1)))
        blocks.append((norm, _linear_params(p, w, f + "fc1", FFN, HIDDEN),
                       _linear_params(p, w, f + "fc2", HIDDEN, FFN, gain=0.5)))
    final_norm = (p.parameter("encoder.norm.weight", FLOAT, [HIDDEN], w.normal(HIDDEN, 0.1, 1.0)),
                  p.parameter("encoder.norm.bias", FLOAT, [HIDDEN], w.normal(HIDDEN, 0.1)))
    dec1 = _linear_params(p, w, "action_head.fc1", HIDDEN, HIDDEN)
    dec2 = _linear_params(p, w, "action_head.fc2", ACTION, HIDDEN)
    critics = [(_linear_params(p, w, "critics.%d.fc1" % i, HIDDEN, HIDDEN),
                _linear_params(p, w, "critics.%d.fc2" % i, 1, HIDDEN)) for i in range(CRITICS)]
    gripper = _linear_params(p, w, "gripper_head", 1, HIDDEN)
    discrete = _linear_params(p, w, "discrete_head", DISCRETE, HIDDEN)
    # buffers and constants
    goal_mean = p.buffer("normalize.goal_mean", FLOAT, [GOAL], w.normal(GOAL, 0.5))
    goal_std = p.buffer("normalize.goal_std", FLOAT, [GOAL],
                        [0.5 + abs(v) for v in w.normal(GOAL, 0.5)])
    action_offset = p.buffer("action_head.offset", FLOAT, [ACTION], w.normal(ACTION, 0.1))
    obs_mean = p.constant("normalize.obs_mean", FLOAT, [STATE], w.normal(STATE, 0.5))
    obs_std = p.constant("normalize.obs_std", FLOAT, [STATE],
                         [0.5 + abs(v) for v in w.normal(STATE, 0.5)])
    freqs = p.constant("time_embed.freqs", FLOAT, [FREQS], [2.0 ** k for k in range(FREQS)])
    chunk_pos = p.constant("action_head.chunk_pos", FLOAT, [CHUNK, HIDDEN],
                           w.normal(CHUNK * HIDDEN, 0.5))
    action_scale = p.constant("action_head.scale", FLOAT, [ACTION],
                              [0.5 + 0.25 * k for k in range(ACTION)])
    action_mask = p.constant("action_mask", BOOL, [DISCRETE], ACTION_MASK)
    state = p.user_input("state", FLOAT, [1, STATE])
    goal = p.user_input("goal", FLOAT, [1, GOAL])
    t = p.user_input("t", FLOAT, [1, 1])

    with p.module("normalize", "models.policy.Normalize"):
        with p.code("s = ((state - self.obs_mean) / self.obs_std).clamp(-5.0, 5.0)"):
            s = p.op("clamp", p.op("div.Tensor", p.op("sub.Tensor", state, obs_mean), obs_std),
                     -5.0, 5.0)
        with p.code("g = ((goal - self.goal_mean) / self.goal_std).clamp(-5.0, 5.0)"):
            g = p.op("clamp", p.op("div.Tensor", p.op("sub.Tensor", goal, goal_mean), goal_std),
                     -5.0, 5.0)
    with p.module("time_embed", "models.policy.TimeEmbedding"):
        with p.code("phase = t * self.freqs"):
            phase = p.op("mul.Tensor", t, freqs)
        with p.code("sin, cos = torch.sin(phase), torch.cos(phase)"):
            sin, cos = p.op("sin", phase), p.op("cos", phase)
        with p.code("pos = torch.cat([sin, cos], 1)"):
            pos = p.op("cat", [sin, cos], 1)
        with p.code("vel = torch.cat([cos * self.freqs, -sin * self.freqs], 1)"):
            vel = p.op("cat", [p.op("mul.Tensor", cos, freqs),
                               p.op("mul.Tensor", p.op("neg", sin), freqs)], 1)
    with p.code("h = self.in_proj(torch.cat([s, g, pos, vel], 1))"):
        features = p.op("cat", [s, g, pos, vel], 1)
        with p.module("in_proj", linear_t):
            h = p.op("linear", features, *in_proj)
    for i, (norm, fc1, fc2) in enumerate(blocks):
        f = "encoder.blocks.%d" % i
        with p.module(f, "models.policy.ResidualBlock"):
            with p.module(f + ".norm", "torch.nn.modules.normalization.LayerNorm"):
                with p.code("y = self.norm(x)"):
                    y = p.op("layer_norm", h, [HIDDEN], *norm)
            with p.code("return x + self.fc2(F.gelu(self.fc1(y)))"):
                with p.module(f + ".fc1", linear_t):
                    y = p.op("linear", y, *fc1)
                y = p.op("gelu", y)
                with p.module(f + ".fc2", linear_t):
                    y = p.op("linear", y, *fc2)
                h = p.op("add.Tensor", h, y)
    with p.module("encoder.norm", "torch.nn.modules.normalization.LayerNorm"):
        with p.code("x = self.norm(x)"):
            h = p.op("layer_norm", h, [HIDDEN], *final_norm)

    steps = []
    with p.module("action_head", "models.policy.ChunkDecoder"):
        for k in range(CHUNK):
            with p.code("q = x + self.chunk_pos[%d]" % k):
                q = p.op("add.Tensor", h, p.op("select.int", chunk_pos, 0, k))
            with p.code("a = torch.tanh(self.fc2(F.relu(self.fc1(q))))"):
                with p.module("action_head.fc1", linear_t):
                    q = p.op("linear", q, *dec1)
                q = p.op("relu", q)
                with p.module("action_head.fc2", linear_t):
                    q = p.op("linear", q, *dec2)
                q = p.op("tanh", q)
            with p.code("a = (a * self.scale + self.offset).clamp(-1.5, 1.5)"):
                q = p.op("add.Tensor", p.op("mul.Tensor", q, action_scale), action_offset)
                steps.append(p.op("clamp", q, -1.5, 1.5))
        with p.code("actions = torch.cat(steps, 0)"):
            actions = p.op("cat", steps, 0)
        with p.code("deltas = torch.cat([b - a for a, b in zip(steps, steps[1:])], 0)"):
            deltas = p.op("cat", [p.op("sub.Tensor", b, a) for a, b in zip(steps, steps[1:])], 0)

    values = []
    for i, (fc1, fc2) in enumerate(critics):
        with p.module("critics.%d" % i, "models.policy.Critic"):
            with p.code("return self.fc2(F.relu(self.fc1(x)))"):
                y = h
                for j, (weight, bias) in enumerate((fc1, fc2)):
                    if j:
                        y = p.op("relu", y)
                    with p.module("critics.%d.fc%d" % (i, j + 1), linear_t):
                        y = p.op("addmm", bias, y, p.op("permute", weight, [1, 0]))
                values.append(y)
    with p.code("v = torch.cat(values, 1)"):
        v = p.op("cat", values, 1)
    with p.code("value, value_min = v.mean(1, keepdim=True), v.amin(1, keepdim=True)"):
        value = p.op("mean.dim", v, [1], True)
        value_min = p.op("amin", v, [1], True)
    with p.code("grip = torch.sigmoid(self.gripper_head(x))"):
        with p.module("gripper_head", linear_t):
            grip = p.op("linear", h, *gripper)
        grip = p.op("sigmoid", grip)
    with p.code("logp = F.log_softmax(self.discrete_head(x), -1)"):
        with p.module("discrete_head", linear_t):
            logits = p.op("linear", h, *discrete)
        logp = p.op("_log_softmax", logits, -1, False)
    with p.code("allowed = logp.view(-1)[self.action_mask]"):
        allowed = p.op("index.Tensor", p.op("view", logp, [DISCRETE]), [action_mask])
    with p.code("choice = torch.where(self.action_mask, logp, -1e9).argmax(-1)"):
        floor = p.op("full", [1, DISCRETE], -1e9, dtype=FLOAT, layout=LAYOUT_STRIDED,
                     device=CPU, pin_memory=False)
        choice = p.op("argmax", p.op("where.self", action_mask, logp, floor), -1)
    p.output(actions, deltas, grip, value, value_min, allowed, choice)
    return p
