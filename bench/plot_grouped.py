#!/usr/bin/env python3
"""Bar chart of a bench/grouped.py CSV: tessera's speed relative to PyTorch
(torch's time / tessera's) per case, one panel per dtype, one bar per tessera
recipe, the geometric mean of each recipe in the legend.

    python3 bench/plot_grouped.py bench/results/h100-moe.csv        # -> .png beside it
    python3 bench/plot_grouped.py IN.csv --out chart.png --title "MoE"
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot import read_result  # noqa: E402  (the device line and the rows; shared with plot.py)

COLORS = ["#2b6cb0", "#dd6b20", "#38a169", "#805ad5"]


def case(row):
    """A row's case: (N, K, G, tokens per group, split)."""
    return row["n"], row["k"], row["groups"], row["tokens_per_group"], row["split"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="PNG path (default: the CSV's name with .png)")
    ap.add_argument("--title", default="grouped GEMM: tessera vs torch")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    device, rows = read_result(args.csv)
    rows = [r for r in rows if r["provider"] == "tessera" and r["vs_torch"] not in ("", "nan")]
    if not rows:
        sys.exit(f"{args.csv}: no tessera rows with a torch time")
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    widest = max(len({case(r) for r in rows if r["dtype"] == d}) for d in dtypes)
    fig, axes = plt.subplots(len(dtypes), 1, squeeze=False, figsize=(max(8, 0.3 * widest), 5.5 * len(dtypes)))
    for ax, dtype in zip(axes[:, 0], dtypes):
        mine = [r for r in rows if r["dtype"] == dtype]
        cases = list(dict.fromkeys(case(r) for r in mine))
        recipes = list(dict.fromkeys(r["recipe"] for r in mine))
        width = 0.8 / len(recipes)
        for i, recipe in enumerate(recipes):
            by_case = {case(r): float(r["vs_torch"]) for r in mine if r["recipe"] == recipe}
            ratios = [by_case.get(c, math.nan) for c in cases]
            known = [v for v in ratios if v == v and v > 0]
            geo = math.exp(sum(map(math.log, known)) / len(known)) if known else math.nan
            xs = [j - 0.4 + width * (i + 0.5) for j in range(len(cases))]
            ax.bar(xs, ratios, width, color=COLORS[i % len(COLORS)], label=f"{recipe} (geomean {geo:.2f}x)")
        ax.axhline(1.0, color="#333333", linewidth=0.8)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([f"{n}x{k} G{g} t{t} {split[:4]}" for n, k, g, t, split in cases], fontsize=7,
                           rotation=90)
        ax.set_ylabel("torch time / tessera time")
        ax.set_title(f"{dtype}" + (" (vs torch._scaled_grouped_mm rowwise)" if dtype == "fp8"
                                    else " (vs torch._grouped_mm)"), fontsize=9)
        ax.legend(loc="upper right", fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    short_device = device.split(" sm_clock")[0].replace("device=", "")
    fig.suptitle(f"{args.title} - {short_device}", fontsize=10)
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    fig.savefig(out, dpi=120)
    print(f"{out}: {len(rows)} bars")


if __name__ == "__main__":
    main()
