#!/usr/bin/env python3
"""Chart of a `bench/training.py --csv FILE.csv` result, two panels: the
cast-transpose's rate as a fraction of the device copy rate (with the
issue's 0.85 target), and, per layer (tokens x Din x Dout), tessera against
torch (cuBLAS) in the same run: bf16 dgrad and wgrad alone, and the FP8
training step (tessera.fp8_linear forward + backward) against torch's bf16
step; the legend gives each series' geometric mean. Parts the CSV does not
hold (a `--parts fp8` run) are left out; a `--hold` run is titled as held at
the power cap.

    python3 bench/plot_training.py bench/results/h100-training.csv   # -> .png beside it
"""
import re

from plot_moe import bar_groups, chart_inputs, finish_chart  # bench/plot_moe.py, beside this script
from plot_peers import geomean  # bench/plot_peers.py

CAST_TARGET = 0.85  # issue 35: the cast-transpose at 85% of the copy rate
SERIES = [("bf16", "tessera dgrad dY W (NN)", "bf16 dgrad (NN)", "#2b6cb0"),
          ("bf16", "tessera wgrad dY^T X (TN views)", "bf16 wgrad", "#63b3ed"),
          ("fp8", "tessera fp8_linear step", "FP8 step vs bf16 step", "#dd6b20")]


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    with open(args.csv) as f:
        held = re.search(r"hold_s=([0-9.]+)", f.readline())
    timing = f"held at the power cap, {held.group(1)} s" if held and float(held.group(1)) > 0 else "bursts"
    cast = [r for r in rows if r["part"] == "cast" and r["provider"] == "tessera cast-transpose"]
    series = [s for s in SERIES if any(r["part"] == s[0] and r["provider"] == s[1] for r in rows)]
    if cast:
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1, 2]})
        cast_panel(left, cast)
    else:
        fig, right = plt.subplots(1, 1, figsize=(9, 4.8))
    layers = sorted({r["shape"] for r in rows if r["part"] in ("bf16", "fp8")},
                    key=lambda s: [int(v) for v in s.split("x")])
    bars = []
    for part, provider, label, colour in series:
        ratio = {r["shape"]: float(r["vs_torch"]) for r in rows if r["part"] == part and r["provider"] == provider}
        values = [ratio.get(s, float("nan")) for s in layers]
        bars.append((values, colour, f"{label} (geomean {geomean(values):.2f}x)"))
    bar_groups(right, len(layers), bars)
    right.axhline(1.0, color="black", linewidth=0.8)
    right.set_xticks(range(len(layers)), layers, rotation=20, ha="right", fontsize=8)
    right.set_ylabel("speed vs torch (cuBLAS), same run")
    right.set_title("training GEMMs per layer: tokens x Din x Dout", fontsize=10)
    right.legend(fontsize=8)
    finish_chart(fig, args, f"tessera training pieces on {device} ({timing})",
                 f"{len(cast)} cast shapes, {len(layers)} layers")


def cast_panel(left, cast):
    """The cast-transpose's rate per shape as a fraction of the copy rate, with the target."""
    left.bar(range(len(cast)), [float(r["vs_copy"]) for r in cast], color="#38a169")
    left.axhline(CAST_TARGET, color="black", linestyle="--", linewidth=1, label=f"target {CAST_TARGET}")
    left.set_xticks(range(len(cast)), [r["shape"] for r in cast], rotation=30, ha="right", fontsize=8)
    left.set_ylabel("fraction of the copy rate (read + write)")
    left.set_title("cast-transpose bf16 -> e4m3 x and x^T (1x128)", fontsize=10)
    left.set_ylim(0, 1.05)
    left.legend(fontsize=8)


if __name__ == "__main__":
    main()
