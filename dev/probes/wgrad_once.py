#!/usr/bin/env python3
"""Three calls of the gate_up weight gradient of bench/moe_train.py (uniform, 4096 tokens per
expert) with its first plan, for a profiler: python3 dev/probes/wgrad_once.py GROUPS"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import tessera  # noqa: E402
from moe_train import offsets  # noqa: E402

gen = torch.Generator(device="cuda").manual_seed(5)
offs, total = offsets(int(sys.argv[1]), 0, gen)
dy = torch.randn(total, 4096, device="cuda", dtype=torch.bfloat16, generator=gen)
x = torch.randn(total, 7168, device="cuda", dtype=torch.bfloat16, generator=gen)
plan = tessera.grouped_wgrad_plans(dy, x, offs)[0]
for _ in range(3):
    tessera.grouped_mm_wgrad(dy, x, offs, plan=plan)
torch.cuda.synchronize()
