#!/usr/bin/env python3
"""Chart of a `bench/w4a16.py --csv FILE.csv` result, two panels over the decode rows (M <= 16):
tessera's W4A16 GEMV against tinygemm (torch._weight_int4pack_mm) in the same run, with issue 34's
1.5x target, and the weight bytes it streams as a fraction of the same run's copy rate, with the
0.85 target; one bar per token count, grouped by weight (N x K). A `bench/w4a16_moe.py` result
(an `active` column) is charted the same way, tessera's masked GEMV grouped by weight and active experts.

    python3 bench/plot_w4a16.py bench/results/h100-w4a16.csv       # -> .png beside it
    python3 bench/plot_w4a16.py bench/results/h100-w4a16-moe.csv
"""

from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script
from plot_peers import geomean  # bench/plot_peers.py

PROVIDERS = ("tessera w4a16", "tessera masked")  # bench/w4a16.py's, bench/w4a16_moe.py's
PANELS = [("vs_tinygemm", "speed vs tinygemm, same run", 1.5), ("vs_copy", "weight bytes / s, of the copy rate", 0.85)]
COLOURS = ["#2b6cb0", "#dd6b20", "#38a169", "#805ad5"]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    ours = [r for r in rows if r["provider"] in PROVIDERS and int(r["m"]) <= 16]
    moe = bool(ours) and "active" in ours[0]
    key = (lambda r: (r["n"], r["k"], r["active"])) if moe else (lambda r: (r["n"], r["k"]))
    weights = list(dict.fromkeys(key(r) for r in ours))
    tokens = sorted({int(r["m"]) for r in ours})
    fig, axes = plt.subplots(1, len(PANELS), figsize=(14, 4.8))
    for ax, (column, label, target) in zip(axes, PANELS):
        series = []
        for i, m in enumerate(tokens):
            value = {key(r): float(r[column]) for r in ours if int(r["m"]) == m}
            values = [value.get(w, float("nan")) for w in weights]
            series.append((values, COLOURS[i % len(COLOURS)], f"M = {m} (geomean {geomean(values):.2f})"))
        bar_groups(ax, len(weights), series)
        ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target}")
        names = [f"{w[0]}x{w[1]}" + (f", {w[2]} active" if moe else "") for w in weights]
        ax.set_xticks(range(len(weights)), names, fontsize=8)
        ax.set_xlabel("expert weight N x K, active experts of 64" if moe else "weight N x K")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    title = "masked (MoE) GEMV vs tinygemm once per active expert" if moe else "decode GEMV"
    finish_chart(fig, args, f"tessera W4A16 {title} on {device} (bursts)", f"{len(ours)} tessera rows")


if __name__ == "__main__":
    main()
