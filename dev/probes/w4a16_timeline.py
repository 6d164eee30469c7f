#!/usr/bin/env python3
"""Per-CTA timeline of the W4A16 decode GEMV: where a call's time goes (needs dev/ab/w4a16_timeline.patch).

With the patch applied and TESS_W4A16_TIMELINE set to a device address, thread 0 of each CTA writes
globaltimer stamps there (8 u64 a CTA, its first row chunk): its SM, its entry, the dependency wait
passed, warp 0's first quad done (its first codes landed and multiplied), warp 0's K part done, every
warp's partial sums stored (the CTA's one barrier), its exit, and the chunks it took.
For each weight (N x K) and M this times the call with events after an L2 flush (median of 5), then
prints medians (p90) over the CTAs, in microseconds:

  entry skew   the CTA's entry after the first CTA's entry (launch and scheduling)
  wait         entry -> the dependency wait passed (griddepcontrol.wait)
  first quad   -> warp 0's first quad done (the first codes' latency from DRAM)
  stream       -> warp 0's K part done (the rest of its quads)
  barrier      -> every warp's partials stored (the slowest warp of the CTA)
  tail         -> exit (the parts' sums added and stored)
  span         first entry -> last exit; event: the event-timed call

    git apply dev/ab/w4a16_timeline.patch && make
    PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so python3 dev/probes/w4a16_timeline.py
"""
import argparse
import os
import statistics

import torch

import tessera

SLOTS = 8


def weight(n, k, g):
    """Packed random codes, bf16 scales and zero points of an n x k weight, group 128."""
    codes = torch.randint(-2**31, 2**31 - 1, (n, k // 8), generator=g, device="cuda", dtype=torch.int32)
    scales = (0.004 + 0.03 * torch.rand(k // 128, n, generator=g, device="cuda")).to(torch.bfloat16)
    zeros = torch.randint(0, 16, (k // 128, n), generator=g, device="cuda").to(torch.uint8)
    return tessera.pack_int4(codes, "rows"), scales, zeros


def cold_ms(fn, flush):
    """Median event time of fn after an L2 flush, 5 runs, in ms."""
    times = []
    for _ in range(5):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def describe(values):
    """'median (p90)' of a list, in us."""
    v = sorted(values)
    return f"{v[len(v) // 2] / 1000:6.2f} ({v[int(0.9 * (len(v) - 1))] / 1000:6.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x7168,2112x7168,7168x2048,7168x7168,28672x4096",
                    help="N x K, comma-separated")
    ap.add_argument("--m", default="1,16")
    a = ap.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    stamps = torch.zeros(SLOTS * 8192, dtype=torch.int64, device="cuda")
    names = ["entry skew", "wait", "first quad", "stream", "barrier", "tail"]
    print(f"{'shape':>12} {'m':>3} {'ctas':>5} {'SMs':>4} | " + " ".join(f"{c:>15}" for c in names)
          + f" | {'span':>6} {'event':>6}  median (p90) us")
    for shape in a.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        packed, scales, zeros = weight(n, k, g)
        for m in (int(v) for v in a.m.split(",")):
            x = torch.randn(m, k, generator=g, device="cuda").to(torch.bfloat16)
            call = lambda: tessera.w4a16_gemm(x, packed, scales, zeros)  # noqa: E731
            os.environ.pop("TESS_W4A16_TIMELINE", None)
            event_us = 1000 * cold_ms(call, flush)
            stamps.zero_()
            os.environ["TESS_W4A16_TIMELINE"] = hex(stamps.data_ptr())
            flush.zero_()
            call()
            torch.cuda.synchronize()
            os.environ.pop("TESS_W4A16_TIMELINE", None)
            rows = [r for r in stamps.view(-1, SLOTS).tolist() if r[1] != 0]
            t0 = min(r[1] for r in rows)
            span = max(r[6] for r in rows) - t0
            # slots: 0 SM, 1 entry, 2 wait passed, 3 first quad done, 4 warp 0's part done, 5 barrier, 6 exit, 7 chunks
            order = [1, 2, 3, 4, 5, 6]
            cols = [[r[1] - t0 for r in rows]] + [[r[b] - r[a] for r in rows] for a, b in zip(order, order[1:])]
            print(f"{shape:>12} {m:>3} {len(rows):>5} {len(set(r[0] for r in rows)):>4} | "
                  + " ".join(f"{describe(c):>15}" for c in cols) + f" | {span / 1000:6.2f} {event_us:6.2f}")


if __name__ == "__main__":
    main()
