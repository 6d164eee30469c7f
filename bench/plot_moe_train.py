#!/usr/bin/env python3
"""Chart of a `bench/moe_train.py --csv FILE.csv` result: per case (experts, uniform or skewed
routing), tessera's speed against torch._grouped_mm in the same run for the MoE layer's bf16
training step and for the k-grouped weight gradient alone, with issue 35's targets (1.15x and
1.1x); the legend gives each series' geometric mean.

    python3 bench/plot_moe_train.py bench/results/h100-moe-train.csv   # -> .png beside it
"""
from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script
from plot_peers import geomean  # bench/plot_peers.py

SERIES = [("step", "layer step (forward + backward)", "#2b6cb0", 1.15),
          ("wgrad", "k-grouped wgrad alone", "#dd6b20", 1.10)]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    ours = [r for r in rows if r["provider"] == "tessera"]
    cases = list(dict.fromkeys((r["experts"], r["skewed"]) for r in ours))
    fig, ax = plt.subplots(1, 1, figsize=(8, 4.6))
    bars = []
    for part, label, colour, _ in SERIES:
        ratio = {(r["experts"], r["skewed"]): float(r["vs_torch"]) for r in ours if r["part"] == part}
        values = [ratio.get(c, float("nan")) for c in cases]
        bars.append((values, colour, f"{label} (geomean {geomean(values):.2f}x)"))
    width = bar_groups(ax, len(cases), bars)
    for i, (_, _, colour, target) in enumerate(SERIES):
        offset = (i - (len(SERIES) - 1) / 2) * width
        ax.hlines([target] * len(cases), [x + offset - width / 2 for x in range(len(cases))],
                  [x + offset + width / 2 for x in range(len(cases))], colors=colour, linestyles="--",
                  linewidth=1)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(cases)), [f"G={g} x 4096, {'skewed' if s == '1' else 'uniform'}" for g, s in cases],
                  fontsize=8)
    ax.set_ylabel("speed vs torch._grouped_mm, same run (dashes: targets)")
    ax.set_title("DeepSeek-V3 expert shapes (K 7168, width 2048), bf16", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    finish_chart(fig, args, f"tessera MoE training on {device}", f"{len(cases)} cases")


if __name__ == "__main__":
    main()
