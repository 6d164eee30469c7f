#!/usr/bin/env python3
"""Chart of a `bench/fp8_out.py --csv FILE.csv` result, one panel per recipe (block: 1x128 x 128x128
inputs and 1x128 D factors; tensor: per-tensor inputs, D scale and amax): each provider's time per
shape (M x N x K) as a fraction of tessera's bf16-D GEMM in the same run (1: the FP8 D costs nothing
over the GEMM; the fused rows' excess is the FP8 epilogue's cost), so the bars compare the fused FP8
D with bf16 + tessera.quantize_fp8 and with cuBLASLt's FP8 D.

    python3 bench/plot_fp8_out.py bench/results/h100-fp8-out.csv   # -> .png beside it
"""

from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script

SERIES = [("tessera fused", "#2b6cb0"), ("tessera unfused", "#a0aec0"), ("cuBLASLt FP8 D", "#dd6b20")]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    recipes = list(dict.fromkeys(r["recipe"] for r in rows))
    fig, axes = plt.subplots(1, len(recipes), figsize=(7 * len(recipes), 4.8), squeeze=False)
    summary = []
    for ax, recipe in zip(axes[0], recipes):
        ours = [r for r in rows if r["recipe"] == recipe]
        shapes = list(dict.fromkeys((r["m"], r["n"], r["k"]) for r in ours))
        bf16 = {(r["m"], r["n"], r["k"]): float(r["ms"]) for r in ours if r["provider"] == "tessera bf16 D"}
        series = []
        for provider, colour in SERIES:
            times = {(r["m"], r["n"], r["k"]): float(r["ms"]) for r in ours if r["provider"] == provider}
            if times:
                series.append(([times.get(s, 0.0) / bf16[s] for s in shapes], colour, provider))
        bar_groups(ax, len(shapes), series)
        ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="tessera bf16 D (the GEMM alone)")
        ax.set_xticks(range(len(shapes)), ["x".join(s) for s in shapes], rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("time / tessera's bf16-D time, same run")
        ax.set_title(f"{recipe} recipe", fontsize=10)
        ax.legend(fontsize=8)
        fused = series[0][0]
        summary.append(f"{recipe}: fused {min(fused):.2f}-{max(fused):.2f}x of bf16 D")
    finish_chart(fig, args, f"FP8 D written by the GEMM vs bf16 D + quantize, {device} (bursts)", "; ".join(summary))


if __name__ == "__main__":
    main()
