#!/usr/bin/env python3
"""Chart of bench/python_overhead.py's rows (bench/results/h100-python-overhead.csv): per run, the
host microseconds one call takes from Python (median of the rounds, best round as a tick), and
Python's share of a prepared call (tessera.gemm out= plan= minus tess_gemm_fused alone) against
issue 32's 5 us.

    python3 bench/plot_overhead.py bench/results/h100-python-overhead.csv     # -> .png beside it
"""
from plot_moe import chart_inputs, finish_chart  # bench/plot_moe.py, beside this script

PYTHON_SHARE_TARGET_US = 5.0  # issue 32: what Python may add to the C library's host time per call


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    rows = [r for r in rows if r["fastcall"] == "on"]
    runs = list(dict.fromkeys(r["run"] for r in rows))
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 4.2), sharey=False, squeeze=False)
    shares = []
    for ax, run in zip(axes[0], runs):
        mine = [r for r in rows if r["run"] == run]
        names = [r["call"] for r in mine]
        median = [float(r["host_us_per_call"]) for r in mine]
        best = [float(r["best_round_us"]) for r in mine]
        colours = ["#2b6cb0" if "tess" in n else "#a0aec0" for n in names]  # tessera's calls blue, torch's grey
        ax.barh(range(len(names)), median, color=colours)
        ax.plot(best, range(len(names)), "k|", markersize=12, label="best round")
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("host us per call (median)")
        by = dict(zip(names, median))
        if "tess_gemm_fused alone" in by:
            share = by["tessera.gemm out= plan="] - by["tess_gemm_fused alone"]
            shares.append(f"run {run}: {share:.1f} us")
            ax.set_title(f"run {run}: Python's share {share:.1f} us (target {PYTHON_SHARE_TARGET_US:.0f})", fontsize=9)
        else:
            ax.set_title(f"run {run}", fontsize=9)
        ax.legend(fontsize=8, loc="lower right")
    finish_chart(fig, args, f"Python's host time per call, 1x4096x4096 bf16, {device.split(' torch=')[0]}",
                 "Python's share " + ", ".join(shares))


if __name__ == "__main__":
    main()
