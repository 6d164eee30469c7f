#!/usr/bin/env python3
"""Mixture-of-Experts decoding with 4-bit experts: tessera.w4a16_gemm_masked beside tinygemm
called once per active expert, in one process on one GPU.

    python3 bench/w4a16_moe.py --csv bench/results/h100-w4a16-moe.csv

Per expert weight (N x K: DeepSeek-V3's gate_up 4096 x 7168 and down 7168 x 2048), experts E, of
which `active` have tokens (M rows each, the rest none), groups of 128, bf16 scales, uint8 zeros:
  tessera masked   tessera.w4a16_gemm_masked over all E experts: one launch, masked_m on the device
  tinygemm loop    torch._weight_int4pack_mm on each active expert's rows (the host knows which:
                   what an engine without a grouped 4-bit kernel runs, `active` launches)
  copy             a device copy of the active experts' 4-bit bytes (the streaming yardstick)
Each call takes the next of several sets of active experts, together past twice the L2, so each
streams its experts from memory. tessera's rows are checked against float64 of the dequantized
experts first (a FAIL row makes the script exit 1). Timing as bench/w4a16.py; bursts.
"""
import itertools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))  # the repository's package, unless installed

import torch  # noqa: E402

import tessera  # noqa: E402
from grouped import bench_parser, bench_timer, write_csv  # noqa: E402
from training import rel, timed  # noqa: E402

WEIGHTS = [(4096, 7168), (7168, 2048)]
CASES = [(64, 8, 1), (64, 8, 4), (64, 32, 1), (64, 32, 4)]  # (experts, active, rows each)
GROUP = 128
ROTATE_BYTES = 120 << 20  # active sets taken in turn: past twice the H100's 50 MB of L2
COLUMNS = ["n", "k", "experts", "active", "m", "provider", "us", "weight_gbs", "vs_copy", "vs_tinygemm", "rel_error",
           "note"]
COLUMN_DOC = """# columns: n x k each expert's weight; experts E, `active` of them with m rows each; provider as
# bench/w4a16_moe.py says; us = median time; weight_gbs = the active experts' bytes each provider reads (codes,
# and tessera's scales and zeros, tinygemm's (scale, offset) pairs) per second (copy: the codes read + written); vs_copy = weight_gbs / the copy row's; vs_tinygemm = its time / this row's;
# rel_error of tessera's active rows against float64 of the dequantized experts
"""


def experts_data(experts, n, k, g):
    """Each expert's packed codes, scales and zeros for tessera, and tinygemm's weights and (scale,
    offset) pairs; made one expert at a time (the codes of all at once would not fit)."""
    packed = torch.empty(experts, n, k // 2, dtype=torch.uint8, device="cuda")
    scales = (0.004 + 0.03 * torch.rand(experts, k // GROUP, n, generator=g, device="cuda")).to(torch.bfloat16)
    zeros = torch.randint(0, 16, (experts, k // GROUP, n), generator=g, device="cuda").to(torch.uint8)
    offsets = ((8.0 - zeros.float()) * scales.float()).to(torch.bfloat16)
    tg_w, tg_sz = [], []
    for e in range(experts):
        codes = torch.randint(0, 16, (n, k), generator=g, device="cuda", dtype=torch.int32)
        words = (codes.reshape(n, k // 8, 8).to(torch.int64) << (4 * torch.arange(8, device="cuda"))).sum(-1)
        packed[e] = tessera.pack_int4((words - ((words >> 31) << 32)).to(torch.int32), "rows")
        tg_w.append(torch._convert_weight_to_int4pack((codes[:, ::2] << 4 | codes[:, 1::2]).to(torch.uint8), 8))
        tg_sz.append(torch.stack([scales[e], offsets[e]], dim=-1).contiguous())
    return packed, scales, zeros, tg_w, tg_sz


def main():
    ap = bench_parser(__doc__, reps=30, warmup=5, rounds=3)
    args = ap.parse_args()
    timer, device = bench_timer(args)
    g = torch.Generator(device="cuda").manual_seed(0)
    rows, failed = [], False
    for n, k in WEIGHTS:
        experts = max(e for e, _, _ in CASES)
        packed, scales, zeros, tg_w, tg_sz = experts_data(experts, n, k, g)
        for e_count, active, m in CASES:
            expert_bytes = n * k // 2 + scales[0].numel() * 2 + zeros[0].numel()
            sets = max(1, -(-ROTATE_BYTES // (active * expert_bytes)))
            chosen = [torch.randperm(e_count, generator=g, device="cuda")[:active].sort().values.tolist()
                      for _ in range(sets)]
            masks = []
            for pick in chosen:
                mask = torch.zeros(e_count, dtype=torch.int32, device="cuda")
                mask[pick] = m
                masks.append(mask)
            x = torch.randn(e_count, m, k, generator=g, device="cuda").to(torch.bfloat16)
            w, s, z = packed[:e_count], scales[:e_count], zeros[:e_count]
            turn = {name: itertools.cycle(range(sets)) for name in ("t", "g", "c")}
            src = torch.empty(sets, active * (n * k // 2), dtype=torch.uint8, device="cuda")
            dst = torch.empty(active * (n * k // 2), dtype=torch.uint8, device="cuda")

            def tessera_masked():
                return tessera.w4a16_gemm_masked(x, w, s, masks[next(turn["t"])], z, expected_experts=active)

            def tinygemm_loop():
                pick = chosen[next(turn["g"])]
                return [torch._weight_int4pack_mm(x[e], tg_w[e], GROUP, tg_sz[e]) for e in pick]

            def copy():
                return dst.copy_(src[next(turn["c"])])

            first = tessera.w4a16_gemm_masked(x, w, s, masks[0], z, expected_experts=active)
            got = torch.stack([first[e] for e in chosen[0]])
            want = torch.stack([x[e].double() @ tessera.dequantize_int4(w[e], s[e], z[e]).double().t()
                                for e in chosen[0]])
            error = rel(got, want)
            for name in turn:  # the timed calls start from the first set again
                turn[name] = itertools.cycle(range(sets))
            fns = {"tessera masked": tessera_masked, "tinygemm loop": tinygemm_loop, "copy": copy}
            result = timed(timer, fns, args.rounds)
            ms = {name: t for name, (t, _) in result.items()}
            tinygemm_bytes = n * k // 2 + (k // GROUP) * n * 4  # its (scale, offset) pairs: 4 bytes a group row
            nbytes = {"tessera masked": active * expert_bytes, "tinygemm loop": active * tinygemm_bytes,
                      "copy": 2 * active * (n * k // 2)}
            copy_gbs = nbytes["copy"] / ms["copy"] / 1e6
            bad = error > 1e-2
            failed |= bad
            for name, t in ms.items():
                gbs = nbytes[name] / t / 1e6
                rows.append({"n": n, "k": k, "experts": e_count, "active": active, "m": m, "provider": name,
                             "us": f"{t * 1e3:.2f}", "weight_gbs": f"{gbs:.0f}",
                             "vs_copy": f"{gbs / copy_gbs:.3f}" if name != "copy" else "",
                             "vs_tinygemm": f"{ms['tinygemm loop'] / t:.3f}" if name != "copy" else "",
                             "rel_error": f"{error:.2e}" if name == "tessera masked" else "",
                             "note": "FAIL" if bad and name == "tessera masked" else ""})
                r = rows[-1]
                print(f"{n:>5}x{k:<5} E={e_count:<3} active={active:<3} m={m:<2} {name:15} {r['us']:>9} us "
                      f"{r['weight_gbs']:>6} GB/s copy {r['vs_copy']:>6} tinygemm {r['vs_tinygemm']:>6}x "
                      f"{r['rel_error']} {r['note']}", flush=True)
            write_csv(args.csv, device, rows, COLUMNS, COLUMN_DOC)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
