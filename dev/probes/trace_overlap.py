#!/usr/bin/env python3
"""Where a step's GPU time goes, from torch.profiler Chrome traces (examples/parallel_common.profile).

For each trace: the span from the first to the last GPU kernel; per stream, the kernels' busy time
and count; the time NCCL kernels run, the time other kernels run, and the time both run at once
(the overlap actually won); and the idle time where no kernel runs at all. Prints one block per
trace file.

    python3 dev/probes/trace_overlap.py OUT/profile-ep/*.json [trace.json.gz ...]
    python3 dev/probes/trace_overlap.py --gaps 20 trace.json.gz   (also the 20 longest idle gaps)
"""
import gzip
import json
import sys


def union_length(intervals):
    """Total length covered by a list of (start, end) intervals."""
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def intersect(a, b):
    """Pairwise intersection of two sorted interval unions, as a list of intervals."""
    a, b = merged(a), merged(b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def merged(intervals):
    """The intervals merged into disjoint sorted ones."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def report(path, gaps=0):
    """Prints the block for one trace (and its `gaps` longest idle gaps: where no kernel runs,
    with the last kernel before each and the first after)."""
    events = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
    events = events.get("traceEvents", events)
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not kernels:
        print(f"{path}: no GPU kernels")
        return
    iv = lambda es: [(e["ts"], e["ts"] + e["dur"]) for e in es]
    start = min(e["ts"] for e in kernels)
    end = max(e["ts"] + e["dur"] for e in kernels)
    nccl = [e for e in kernels if "nccl" in e["name"].lower()]
    other = [e for e in kernels if "nccl" not in e["name"].lower()]
    busy = union_length(iv(kernels))
    both = union_length(intersect(iv(nccl), iv(other)))
    print(f"== {path}")
    print(f"span {(end - start) / 1e3:.3f} ms, GPU idle {(end - start - busy) / 1e3:.3f} ms, "
          f"NCCL {union_length(iv(nccl)) / 1e3:.3f} ms, other kernels {union_length(iv(other)) / 1e3:.3f} ms, "
          f"both at once {both / 1e3:.3f} ms")
    streams = {}
    for e in kernels:
        streams.setdefault(e.get("args", {}).get("stream", "?"), []).append(e)
    for s, es in sorted(streams.items(), key=lambda kv: str(kv[0])):
        names = {}
        for e in es:
            key = e["name"][:60]
            names[key] = names.get(key, 0) + e["dur"]
        top = sorted(names.items(), key=lambda kv: -kv[1])[:4]
        print(f"  stream {s}: {len(es)} kernels, busy {union_length(iv(es)) / 1e3:.3f} ms; "
              + "; ".join(f"{n} {d / 1e3:.3f}" for n, d in top))
    if gaps:
        spans = merged(iv(kernels))
        holes = sorted(((b[0] - a[1], a[1], b[0]) for a, b in zip(spans, spans[1:])), reverse=True)[:gaps]
        by_end = sorted(kernels, key=lambda e: e["ts"] + e["dur"])
        by_start = sorted(kernels, key=lambda e: e["ts"])
        for length, t0, t1 in holes:
            before = max((e for e in by_end if e["ts"] + e["dur"] <= t0), key=lambda e: e["ts"] + e["dur"])
            after = min((e for e in by_start if e["ts"] >= t1), key=lambda e: e["ts"])
            print(f"  idle {length / 1e3:.3f} ms at {(t0 - start) / 1e3:.3f}: after {before['name'][:50]} "
                  f"before {after['name'][:50]}")


if __name__ == "__main__":
    args = sys.argv[1:]
    gaps = 0
    if args[:1] == ["--gaps"]:
        gaps, args = int(args[1]), args[2:]
    for p in args:
        report(p, gaps)
