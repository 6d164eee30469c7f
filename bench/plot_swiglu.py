#!/usr/bin/env python3
"""Chart of a SwiGLU comparison (dev/probes/gated_vs_unfused.py's CSV with bench's header lines,
e.g. bench/results/h100-swiglu.csv): per shape, the fused SwiGLU's speed relative to the unfused
sequences (tessera's GEMM then torch's SwiGLU, and torch.mm then the same), issue 33's 1.08x
prefill target marked.

    python3 bench/plot_swiglu.py bench/results/h100-swiglu.csv     # -> .png beside it
"""
from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script
from plot_peers import geomean  # bench/plot_peers.py

PREFILL_TARGET = 1.08  # issue 33: the MoE FFN block with fused SwiGLU at prefill, against the unfused one
SERIES = [("torch_unfused_ms", "vs torch.mm + SwiGLU", "#2b6cb0"),
          ("tessera_unfused_ms", "vs tessera GEMM + torch SwiGLU", "#dd6b20")]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    shapes = [f"{r['m']}x{r['n']}x{r['k']}" for r in rows]
    speeds = [[float(r[column]) / float(r["fused_ms"]) for r in rows] for column, _, _ in SERIES]
    bar_groups(ax, len(rows), [(values, colour, f"{label} (geomean {geomean(values):.2f}x)")
                               for values, (_, label, colour) in zip(speeds, SERIES)])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(PREFILL_TARGET, color="black", linestyle="--", linewidth=1, label=f"prefill target {PREFILL_TARGET}x")
    ax.set_xticks(range(len(rows)), shapes, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("fused SwiGLU's speed, same run")
    ax.legend(fontsize=8)
    finish_chart(fig, args, f"tessera fused SwiGLU (bf16) on {device}", f"{len(rows)} shapes")


if __name__ == "__main__":
    main()
