#!/usr/bin/env python3
"""Chart of a `bench/grouped.py --csv FILE.csv` result (the moe suite): per
case, tessera's speed relative to torch (torch._grouped_mm for bf16,
torch._scaled_grouped_mm rowwise for FP8) for each dtype and scale recipe,
one panel per expert shape (N x K), with the issue's 1.15x bf16 prefill
target marked; the legend gives each series' geometric mean.

    python3 bench/plot_moe.py bench/results/h100-moe.csv           # -> .png beside it
    python3 bench/plot_moe.py IN.csv --out chart.png
"""
import argparse
import csv
import math
import os
import sys

# (dtype, recipe) series in drawing order, with their colours.
SERIES = [("bf16", "none", "#2b6cb0"), ("fp8", "block", "#dd6b20"), ("fp8", "group", "#38a169"),
          ("fp8", "rowwise", "#805ad5")]
BF16_PREFILL_TARGET = 1.15  # issue 6: bf16, groups of 256 tokens and more, against torch._grouped_mm


def read_results(path):
    """The device name and the rows of one bench CSV (grouped.py's, training.py's: comment lines start with
    '#', the device line with '# device=')."""
    device, lines = "", []
    with open(path) as f:
        for line in f:
            if line.startswith("# device="):
                device = line[len("# device="):].split(" sm_clock")[0]
            elif not line.startswith("#") and line.strip():
                lines.append(line)
    return device, list(csv.DictReader(lines))


def chart_inputs(doc):
    """A bench chart script's command line (a CSV, --out) and pyplot without a display: (args,
    the device name, the CSV's rows, pyplot)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="PNG path (default: the CSV's name with .png)")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    device, rows = read_results(args.csv)
    return args, device, rows, plt


def bar_groups(ax, count, series):
    """Bars of several series side by side at x = 0 .. count - 1, series = [(values, colour, label)];
    returns a bar's width."""
    width = 0.8 / len(series)
    for i, (values, colour, label) in enumerate(series):
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(count)], values, width, color=colour,
               label=label)
    return width


def save_chart(fig, args, dpi=110):
    """Lays out fig and writes it to --out (default: the CSV's name with .png); returns the path."""
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    fig.savefig(out, dpi=dpi)
    return out


def finish_chart(fig, args, title, summary):
    """Titles fig, writes it (save_chart) and prints where, with a one-line summary."""
    fig.suptitle(title, fontsize=11)
    out = save_chart(fig, args)
    print(f"{out}: {summary}")


def main():
    args, device, rows, plt = chart_inputs(__doc__)
    ours = [r for r in rows if r["provider"] == "tessera" and r["vs_torch"]]
    if not ours:
        sys.exit(f"{args.csv}: no tessera rows with a torch time")
    shapes = list(dict.fromkeys((r["n"], r["k"]) for r in ours))
    fig, axes = plt.subplots(len(shapes), 1, figsize=(18, 4.2 * len(shapes)), squeeze=False)
    summary = []
    for ax, (n, k) in zip(axes[:, 0], shapes):
        cases = list(dict.fromkeys((r["groups"], r["tokens_per_group"], r["split"]) for r in ours
                                   if (r["n"], r["k"]) == (n, k)))
        width, top = 0.8 / len(SERIES), BF16_PREFILL_TARGET
        for i, (dtype, recipe, colour) in enumerate(SERIES):
            ratio = {(r["groups"], r["tokens_per_group"], r["split"]): float(r["vs_torch"]) for r in ours
                     if (r["n"], r["k"], r["dtype"], r["recipe"]) == (n, k, dtype, recipe)}
            values = [ratio.get(c, math.nan) for c in cases]
            known = [v for v in values if v == v and v > 0]
            geo = math.exp(sum(map(math.log, known)) / len(known)) if known else math.nan
            xs = [x - 0.4 + width * (i + 0.5) for x in range(len(cases))]
            ax.bar(xs, values, width, color=colour, label=f"{dtype} {recipe} (geomean {geo:.2f}x)")
            top = max([top] + known)
            summary.append(f"{n}x{k} {dtype} {recipe} {geo:.3f}x")
        ax.axhline(1.0, color="#4a5568", linewidth=0.8)
        ax.axhline(BF16_PREFILL_TARGET, color="#c53030", linewidth=0.8, linestyle=":",
                   label=f"{BF16_PREFILL_TARGET}x (bf16 prefill target)")
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([f"G={g}\nt={t}\n{s}" for g, t, s in cases], fontsize=7)
        ax.set_ylabel("speed vs torch (x)")
        ax.set_ylim(0, top * 1.3)  # room for the legend above the bars
        ax.set_title(f"experts {n}x{k} (N x K)", fontsize=10)
        ax.legend(loc="upper center", fontsize=7, ncol=5)
        ax.grid(axis="y", alpha=0.3)
    finish_chart(fig, args, f"moe suite: tessera grouped GEMM vs torch - {device}", "; ".join(summary))


if __name__ == "__main__":
    main()
