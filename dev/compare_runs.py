#!/usr/bin/env python3
"""Puts two runs of the same suites side by side: tessera's time in each
(OUT/base-<suite>.csv against OUT/new-<suite>.csv, as dev/arch_check.sh
writes them), per row and as a geometric mean, with the peer's ratio in each
run for scale (how much a run's own timings moved).

    python3 dev/compare_runs.py OUT
"""
import csv
import glob
import math
import os
import sys


def rows(path):
    """{problem key: (tessera ms, peer ms, plan)} of a tessera bench gemm or bench/grouped.py CSV."""
    out = {}
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines):
        if not r.get("provider") or not r.get("ms"):
            continue  # a row cut short (a run stopped at its time limit)
        if "m" in r:  # tessera bench gemm
            key = ",".join([r[c] for c in ("m", "n", "k", "batch", "a_type", "b_type", "d_type", "scale_a", "scale_b",
                                           "fast_accum")] + [r.get(c, "none") for c in ("bias", "activation")])
            plan = r.get("kernel", "")
        else:  # bench/grouped.py
            key = ",".join(r[c] for c in ("n", "k", "groups", "tokens_per_group", "split", "dtype", "recipe"))
            plan = r.get("plan", "")
        tess, peer, name = out.get(key, (None, None, ""))
        try:
            ms = float(r["ms"])
        except ValueError:
            continue
        if r["provider"] == "tessera":
            tess, name = ms, plan
        elif peer is None:
            peer = ms
        out[key] = (tess, peer, name)
    return out


def main():
    outdir = sys.argv[1]
    for base_path in sorted(glob.glob(os.path.join(outdir, "base-*.csv"))):
        suite = os.path.basename(base_path)[5:-4]
        new_path = os.path.join(outdir, f"new-{suite}.csv")
        if not os.path.exists(new_path):
            continue
        base, new = rows(base_path), rows(new_path)
        ratios, peers = [], []
        worst = []
        for key, (bt, bp, bplan) in base.items():
            nt, np_, nplan = new.get(key, (None, None, ""))
            if not bt or not nt:
                continue
            ratios.append(bt / nt)  # > 1: the new build is faster
            if bp and np_:
                peers.append(bp / np_)
            worst.append((bt / nt, key, bplan, nplan))
        if not ratios:
            continue
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        peer_geo = math.exp(sum(map(math.log, peers)) / len(peers)) if peers else float("nan")
        print(f"{suite}: {len(ratios)} rows, tessera new/base speed geomean {geo:.4f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}); the peer's own drift {peer_geo:.4f}; "
              f"{sum(1 for w in worst if w[2] != w[3])} rows chose another plan")
        for ratio, key, bplan, nplan in sorted(worst)[:3]:
            print(f"   {ratio:.3f} {key} {bplan}{'' if bplan == nplan else ' -> ' + nplan}")


if __name__ == "__main__":
    main()
