"""Large generated XDP programs in C for compile-time scaling: chains of `a || b` conditions over packet bytes."""

from __future__ import annotations

import random

# eBPF instructions per statement of `source` (about 12.8 while clang spills nothing), to size a program
INSNS_PER_STATEMENT = 12.8


def source(statements: int, seed: int = 1) -> str:
    """C text of `statements` conditional updates, each `if (p[i] == k || p[j] > m) { ... }` then a plain update.
    Every condition is a join with its dominator (the shape join hoisting works on) and the rest of the program is
    a side exit of each one, so a pass that walks everything after a join is quadratic on it."""
    rng = random.Random(seed)
    body = []
    for _ in range(statements):
        a, b, c = rng.randrange(4), rng.randrange(4), rng.randrange(4)
        body.append(f"\tif (p[{rng.randrange(56)}] == {rng.randrange(256)} || p[{rng.randrange(56)}] > "
                    f"{rng.randrange(256)}) {{ h{a} = h{b} * {rng.randrange(1, 1 << 16)}u + h{c}; "
                    f"h{c} ^= h{a} >> {rng.randrange(1, 31)}; }}")
        body.append(f"\th{b} += p[{rng.randrange(56)}];")
    return ("#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n"
            "SEC(\"xdp\") int big(struct xdp_md *ctx)\n{\n"
            "\tvolatile unsigned char *p = (void *)(long)ctx->data;\n\tvoid *end = (void *)(long)ctx->data_end;\n"
            "\t__u32 h0 = 1, h1 = 2, h2 = 3, h3 = 4;\n"
            "\tif ((void *)(p + 60) > end) return XDP_DROP;\n" + "\n".join(body) +
            "\n\treturn (h0 ^ h1 ^ h2 ^ h3) & 3;\n}\nchar _license[] SEC(\"license\") = \"GPL\";\n")


def statements_for(insns: int) -> int:
    """Statements of `source` for a program of about `insns` eBPF instructions."""
    return max(1, round(insns / INSNS_PER_STATEMENT))
