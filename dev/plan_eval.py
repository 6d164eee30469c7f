#!/usr/bin/env python3
"""How well the planner picks, against every plan's measured time.

For each CSV of `tessera bench gemm --plan=all` (FP8 1x128 x 128x128 or
bf16, as dev/ab/fp8_ab.sh's PLANS makes them), each problem of a
listing of its printed lines (bench/results/h100-smallm-plans.txt), or each
case of dev/probes/fp8_every_plan.py's CSV (dense and grouped FP8 cases of
../shared/peers fp8.py), ranks the measured plans by
the estimates dev/plan_rank.c prints and reports the planner's pick against
the fastest plan; last, the geometric mean of pick / fastest.
  python3 dev/plan_eval.py /tmp/plan_rank dev/results/plans-h100-small-m/*.csv
  python3 dev/plan_eval.py /tmp/plan_rank dev/results/fp8-plans-h100/every-plan.csv
"""
import csv
import math
import re
import subprocess
import sys


def measured(path):
    """Plan name -> milliseconds, and the problem (m, n, k, kind)."""
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    times = {r["kernel"].split()[0]: float(r["ms"]) for r in rows if r["provider"] == "tessera"}
    r = rows[0]
    kind = "bf16" if r["a_type"] == "bf16" else "fp8"
    return times, (int(r["m"]), int(r["n"]), int(r["k"]), kind)


def listed(path):
    """[(times, problem)] of a per-plan listing of `tessera bench gemm` lines, a problem per size and kind
    (bf16, or FP8 with 1x128 x 128x128 factors; a plan's fastest time)."""
    groups = {}
    for line in open(path):
        f = line.split()
        if line.startswith("#") or "tessera" not in f or "x" not in f[0]:
            continue
        m, n, k = map(int, f[0].split("x"))
        name = next((w for w in f if w.startswith(("sm90_", "gemv_"))), None)
        kind = "bf16" if f[2].startswith("bf16:") else "fp8" if "s:1x128,128x128" in f else None
        if kind and name:
            times = groups.setdefault((m, n, k, kind), {})
            times[name] = min(times.get(name, float("inf")), float(f[f.index("tessera") + 1]))
    return [(times, problem) for problem, times in groups.items()]


def every_plan(path):
    """[(times, problem)] of an fp8_every_plan.py CSV: per case, its plans' times (DeepGEMM's and the
    heuristic's own rows left out). A grouped case's problem is plan_rank's argument for it
    (masked:G,E,N,K or contig:G,E,N,K; E the expected rows a group), with kind "grouped"."""
    cases = {}
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        name = r["who"].split()[-1]
        if name.startswith("sm90_") or name.startswith("gemv_"):
            cases.setdefault(r["case"], {})[name] = float(r["us"]) * 1e-3
    problems = []
    for label, times in cases.items():
        w = dict(f.split("=") for f in label.split() if "=" in f)
        if label.startswith("dense"):
            problems.append((times, (int(w["m"]), int(w["n"]), int(w["k"]), "fp8")))
        else:
            g, e = label.split("G=")[1].split(" x ")[0], label.split(" x ")[1].split()[0]
            spec = f"{'masked' if label.startswith('masked') else 'contig'}:{g},{e},{w['n']},{w['k']}"
            problems.append((times, (spec, 0, 0, "grouped")))
    return problems


def estimates(rank, m, n, k, kind):
    """Plan name -> estimated microseconds, from plan_rank (m: a grouped problem's argument)."""
    arg = m if kind == "grouped" else f"{m},{n},{k}" + (",bf16" if kind == "bf16" else "")
    out = subprocess.run([rank, "500", arg], capture_output=True, text=True, check=True).stdout
    est = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        est.setdefault(f[3], (float(f[1]), len(est)))  # (estimate, rank): ties keep the planner's order
    return est


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rank, logs = sys.argv[1], []
    problems = []
    for path in sys.argv[2:]:
        if path.endswith(".csv") and "who" in open(path).read(4096):
            problems += every_plan(path)
        else:
            problems += [measured(path)] if path.endswith(".csv") else listed(path)
    for times, (m, n, k, kind) in problems:
        est = estimates(rank, m, n, k, kind)
        ranked = sorted((e, name) for name, e in est.items() if name in times)
        est = {name: e[0] for name, e in est.items()}
        if not ranked:
            continue
        pick = ranked[0][1]
        best = min(times, key=times.get)
        loss = times[pick] / times[best]
        logs.append(math.log(loss))
        what = m if kind == "grouped" else f"{kind} {m}x{n}x{k}"
        print(f"{what}: pick {pick} {times[pick] * 1e3:.1f} us (est {est[pick]:.1f}); "
              f"fastest {best} {times[best] * 1e3:.1f} us (est {est.get(best, float('nan')):.1f}): "
              f"+{100 * (loss - 1):.1f}%")
    print(f"picks {100 * (math.exp(sum(logs) / len(logs)) - 1):.2f}% slower than the fastest plans "
          f"(geometric mean over {len(logs)} problems)")


if __name__ == "__main__":
    main()
