#!/usr/bin/env python3
"""Every k-grouped weight-gradient plan of bench/moe_train.py's gate_up wgrad (dW[g] = dY_g^T X_g,
dY [T, 4096], X [T, 7168] bf16) timed beside torch._grouped_mm, at G = 8 and 32 experts, uniform and
skewed, each with the planner's expected tokens and with expected_tokens = the largest group: which
plan loses where (issue 35's wgrad at 0.84x torch at G = 32). One line per plan.
  python3 dev/probes/wgrad_plans.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import tessera  # noqa: E402
from moe_ffn import timed  # noqa: E402
from moe_train import offsets  # noqa: E402

gen = torch.Generator(device="cuda").manual_seed(5)
for groups in (8, 32):
    for skewed in (0, 1):
        offs, total = offsets(groups, skewed, gen)
        dy = torch.randn(total, 4096, device="cuda", dtype=torch.bfloat16, generator=gen)
        x = torch.randn(total, 7168, device="cuda", dtype=torch.bfloat16, generator=gen)
        flops = 2.0 * total * 4096 * 7168
        sizes = torch.diff(offs, prepend=offs.new_zeros(1)).tolist()
        t_ms = timed(lambda: torch._grouped_mm(dy.t(), x, offs=offs))
        print(f"G={groups} skew={skewed} max_group={max(sizes)} torch {t_ms:.3f} ms {flops / t_ms / 1e9:.0f} TF/s")
        for plan in tessera.grouped_wgrad_plans(dy, x, offs):
            ms = timed(lambda: tessera.grouped_mm_wgrad(dy, x, offs, plan=plan))
            print(f"  {plan.name} grid={plan.grid} tiles={plan.tiles} {ms:.3f} ms {flops / ms / 1e9:.0f} TF/s "
                  f"vs torch {t_ms / ms:.3f}")
        del dy, x
