#!/usr/bin/env python3
"""Which GPU kernels one call of each peer launches, and how long each runs, for fp8.py's cases.

For each case (fp8.py's labels): the same inputs fp8.py makes; DeepGEMM's and tessera's calls run
`--reps` times under torch.profiler (no L2 flush, back to back), and the kernels each call launched
are listed with their mean device time, beside the call's CUDA-event time measured the same way.
A kernel time well under the event time says the call costs more than its GEMM kernel (an extra
kernel, a host gap between launches); equal kernel times with unequal event times say the same.

    python3 dev/probes/fp8_kernels.py --peers .peers --case "masked G=1 x 1024 n=7168 k=2048"
"""
import argparse
import collections
import os
import sys


def event_ms(torch, fn, reps):
    """Mean CUDA-event time of fn over reps back-to-back calls (after one warm-up call)."""
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def kernels_of(torch, fn, reps):
    """{kernel name: (launches per call, mean device us)} of fn's calls, by torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    count, total = collections.Counter(), collections.Counter()
    for ev in prof.events():
        if ev.device_type.name == "CUDA":
            count[ev.name] += 1
            total[ev.name] += ev.device_time
    return {k: (count[k] / reps, total[k] / count[k]) for k in count}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=".peers")
    ap.add_argument("--case", action="append", required=True)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.peers))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fp8  # noqa: E402
    import torch
    from fp8_every_plan import parse_case  # noqa: E402
    libs, why = fp8.import_libs(argparse.Namespace(no_torch=True, no_deepgemm=False, no_tessera=False))
    opts = argparse.Namespace(seed=0, ragged=False, masked_exact=False)
    print(f"device={torch.cuda.get_device_name()} tessera_commit={fp8.tessera_commit()} ({why or 'all peers'})")
    for label in args.case:
        case = parse_case(fp8, label)
        inp = fp8.make_inputs(case, opts)
        calls = fp8.make_calls(case, inp, libs, {})
        rows = getattr(inp, "sizes", None)
        print(f"== {label}" + (f" (rows {list(rows)})" if rows is not None else ""))
        for who, fn in calls.items():
            ms = event_ms(torch, fn, args.reps)
            ks = kernels_of(torch, fn, args.reps)
            print(f"  {who}: {ms * 1e3:.1f} us a call (events, back to back)")
            for name, (per_call, us) in sorted(ks.items(), key=lambda kv: -kv[1][1]):
                print(f"     {per_call:4.1f} x {us:8.1f} us  {name[:150]}")
        del inp, calls
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
