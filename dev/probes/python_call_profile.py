#!/usr/bin/env python3
"""Where tessera.gemm's host time goes: cProfile over many calls of a decode
GEMM (1x4096x4096 bf16), the top entries by own time, on the GPU.
  TESSERA_LIBRARY=... PYTHONPATH=python python3 dev/probes/python_call_profile.py"""
import cProfile
import pstats

import torch

import tessera

a = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(50):
    tessera.gemm(a, b)
torch.cuda.synchronize()
prof = cProfile.Profile()
prof.enable()
for _ in range(2000):
    tessera.gemm(a, b)
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats("tottime").print_stats(25)
