#!/usr/bin/env python3
"""Chart of a `bench/quantized.py --csv FILE.csv` result, two panels: TF32
(tessera against torch's cuBLAS TF32 matmul, with the issue's 0.97x target)
and INT8 W8A8 (tessera's fused scaling against torch._int_mm plus the same
scaling), each as the speed ratio to torch in the same run per shape (M x N x
K); the legend gives each series' geometric mean.

    python3 bench/plot_quantized.py bench/results/h100-quantized.csv   # -> .png beside it
"""

from plot_moe import chart_inputs, finish_chart  # bench/plot_moe.py, beside this script
from plot_peers import geomean  # bench/plot_peers.py

TF32_TARGET = 0.97  # issue 34: TF32 at least 0.97x cuBLAS TF32
PANELS = [("tf32", "tessera tf32", "TF32 vs cuBLAS TF32", "#2b6cb0", TF32_TARGET),
          ("int8", "tessera int8 (scaled, bf16 D)", "INT8 vs torch._int_mm + scaling", "#dd6b20", 1.0)]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(13, 4.8))
    for ax, (kind, provider, title, colour, target) in zip(axes, PANELS):
        ours = [r for r in rows if r["kind"] == kind and r["provider"] == provider]
        shapes = [f"{r['m']}x{r['n']}x{r['k']}" for r in ours]
        values = [float(r["vs_torch"]) for r in ours]
        ax.bar(range(len(ours)), values, color=colour, label=f"tessera (geomean {geomean(values):.2f}x)")
        ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target}x")
        ax.set_xticks(range(len(ours)), shapes, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("speed vs torch, same run")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    finish_chart(fig, args, f"tessera TF32 and INT8 on {device} (bursts)",
                 f"{sum(1 for r in rows if r['provider'].startswith('tessera'))} tessera rows")


if __name__ == "__main__":
    main()
