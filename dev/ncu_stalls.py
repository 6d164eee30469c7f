#!/usr/bin/env python3
"""Warp-stall samples of one kernel by kind of instruction, from Nsight Compute's SASS source page
(`ncu --import R.ncu-rep --page source --csv --print-source sass > R.csv`, plain or .gz):
how much of the sampled warp time sits in wgmma waits (WARPGROUP.DEPBAR), wgmma issue (*GMMA),
promotion FFMAs, mbarrier waits (SYNCS.PHASECHK and the retry branch after it), cluster/CTA
barriers, and everything else; plus the hottest instructions. Used to compare two kernels
(tessera's and DeepGEMM's) on the same problem. The cluster barrier's wait (UCGABAR_WAIT) is
counted apart as "idle at the exit barrier": the producer warpgroup's warps that issue no loads
wait there for the whole kernel (a quarter of a 12-warp CTA's samples), which costs nothing; the
other shares are also given without them.
    python3 dev/ncu_stalls.py SOURCE.csv[.gz] [--top N]"""
import argparse, collections, csv, gzip, io, sys


def kind(src, prev):
    s = src.strip()
    if "UCGABAR_WAIT" in s: return "idle at the exit barrier"
    if "DEPBAR" in s: return "wgmma wait"
    if "GMMA" in s: return "wgmma issue"
    if "FFMA" in s or "FADD" in s or "FMUL" in s: return "float math"
    if "PHASECHK" in s: return "mbarrier wait"
    if "BRA" in s and "PHASECHK" in prev: return "mbarrier wait"
    if "BAR" in s: return "barriers"
    if s.startswith("LDS") or " LDS" in s or "STS" in s or "STSM" in s: return "shared memory"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    raw = gzip.open(a.csv, "rt") if a.csv.endswith(".gz") else open(a.csv)
    r = csv.reader(raw)
    name = next(r)
    head = next(r)
    col = {k: i for i, k in enumerate(head)}
    stalls = [k for k in head if k.startswith("stall_") and "Not Issued" not in k]
    by_kind, reasons = collections.Counter(), collections.Counter()
    hot, prev = [], ""
    for row in r:
        if len(row) < len(head): continue
        src = row[col["Source"]]
        n = int(row[col["Warp Stall Sampling (All Samples)"]] or 0)
        by_kind[kind(src, prev)] += n
        st = {k[6:]: int(row[col[k]] or 0) for k in stalls}
        reasons.update(st)
        hot.append((n, src.strip(), st))
        prev = src
    total = sum(by_kind.values()) or 1
    print(name[1] if len(name) > 1 else name[0])
    print(f"samples {total}: " + ", ".join(f"{k} {v / total:.1%}" for k, v in by_kind.most_common()))
    working = total - by_kind["idle at the exit barrier"]
    if by_kind["idle at the exit barrier"] and working:
        print(f"without the idle warps ({working}): " + ", ".join(
            f"{k} {v / working:.1%}" for k, v in by_kind.most_common() if k != "idle at the exit barrier"))
    print("reasons: " + ", ".join(f"{k} {v / total:.1%}" for k, v in reasons.most_common(8)))
    for n, src, st in sorted(hot, key=lambda x: -x[0])[:a.top]:
        top = ", ".join(f"{k} {v}" for k, v in sorted(st.items(), key=lambda x: -x[1])[:3] if v)
        print(f"  {n:7d}  {src[:64]:64s} {top}")


if __name__ == "__main__":
    main()
