#!/usr/bin/env python3
"""One W4A16 weight's decode calls, for a profiler: tessera.w4a16_gemm and tinygemm
(torch._weight_int4pack_mm) on the same codes, each `--calls` times.

    ncu --kernel-name "regex:w4a16_gemv|tinygemm" python3 dev/probes/w4a16_call.py --n 7168 --k 7168 --m 1
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
import torch  # noqa: E402

import tessera  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=7168)
ap.add_argument("--k", type=int, default=7168)
ap.add_argument("--m", type=int, default=1)
ap.add_argument("--calls", type=int, default=3)
a = ap.parse_args()
g = torch.Generator(device="cuda").manual_seed(0)
codes = torch.randint(0, 16, (a.n, a.k), generator=g, device="cuda", dtype=torch.int32)
scales = (0.004 + 0.03 * torch.rand(a.k // 128, a.n, generator=g, device="cuda")).to(torch.bfloat16)
zeros = torch.randint(0, 16, (a.k // 128, a.n), generator=g, device="cuda").to(torch.uint8)
x = torch.randn(a.m, a.k, generator=g, device="cuda").to(torch.bfloat16)
words = (codes.reshape(a.n, a.k // 8, 8).to(torch.int64) << (4 * torch.arange(8, device="cuda"))).sum(-1)
packed = tessera.pack_int4((words - ((words >> 31) << 32)).to(torch.int32), "rows")
tg_w = torch._convert_weight_to_int4pack((codes[:, ::2] << 4 | codes[:, 1::2]).to(torch.uint8), 8)
tg_sz = torch.stack([scales, ((8.0 - zeros.float()) * scales.float()).to(torch.bfloat16)], dim=-1).contiguous()
for _ in range(a.calls):
    tessera.w4a16_gemm(x, packed, scales, zeros)
    torch._weight_int4pack_mm(x, tg_w, 128, tg_sz)
torch.cuda.synchronize()
print("done")
