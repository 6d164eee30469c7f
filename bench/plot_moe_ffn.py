#!/usr/bin/env python3
"""Chart of a `bench/moe_ffn.py --csv FILE.csv` result: per case (prefill, decode), the MoE FFN
block's time fused (SwiGLU in the gate_up GEMM's epilogue), unfused (the same GEMMs and torch's
SwiGLU) and torch's bf16 `_grouped_mm`, with the fused block's speed-up over torch above its bar.

    python3 bench/plot_moe_ffn.py bench/results/h100-moe-ffn.csv   # -> .png beside it
"""

from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script

SERIES = [("fused_ms", "tessera fused (FP8, SwiGLU in the epilogue)", "#2b6cb0"),
          ("unfused_ms", "tessera unfused (FP8, torch SwiGLU)", "#63b3ed"),
          ("torch_bf16_ms", "torch _grouped_mm (bf16)", "#a0aec0")]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    if not device:  # moe_ffn.py's first line: "# <device>, torch <version>, tessera <version>"
        with open(args.csv) as f:
            device = f.readline().lstrip("# ").split(",")[0].strip()
    fig, ax = plt.subplots(figsize=(8, 4.6))
    width = bar_groups(ax, len(rows), [([float(r[column]) for r in rows], colour, label)
                                       for column, label, colour in SERIES])
    for x, r in enumerate(rows):
        fused, torch_ms = float(r["fused_ms"]), float(r["torch_bf16_ms"])
        ax.text(x - width, fused, f"{torch_ms / fused:.2f}x", ha="center", va="bottom", fontsize=9, color="#c53030")
    ax.set_xticks(range(len(rows)), [f"{r['case']}: {r['groups']} x {r['tokens_per_group']} tokens" for r in rows])
    ax.set_ylabel("ms per FFN block (lower is better)")
    ax.legend(fontsize=8)
    finish_chart(fig, args, f"MoE FFN block (K 7168, expert width 2048) on {device}", f"{len(rows)} cases")


if __name__ == "__main__":
    main()
