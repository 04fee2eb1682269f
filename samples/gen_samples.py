#!/usr/bin/env python3
"""Writes the sample programs as .pt2 archives.

    python3 samples/gen_samples.py OUTDIR        (make samples: OUTDIR = samples)

Python standard library only. Deterministic: the same source gives byte-identical archives
(fixed seeds, no clocks, fixed member order).
"""

import os
import sys

sys.dont_write_bytecode = True  # keep samples/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import policy  # noqa: E402
import quantized  # noqa: E402
import scenarios  # noqa: E402
import tiny_llama  # noqa: E402

SAMPLES = [
    scenarios.shared_constant,
    scenarios.two_delegates,
    scenarios.folded_output,
    scenarios.constant_mask,
    scenarios.kv_cache,
    policy.policy,
    tiny_llama.tiny_llama,
    quantized.quantized_mlp,
]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_samples.py OUTDIR\n")
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    for make in SAMPLES:
        program = make()
        data = program.archive()
        path = os.path.join(outdir, program.name + ".pt2")
        with open(path, "wb") as f:
            f.write(data)
        print("%-16s %5d nodes %8d bytes" % (program.name, program.node_count(), len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
