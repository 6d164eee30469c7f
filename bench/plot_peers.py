#!/usr/bin/env python3
"""Bar chart of the FP8 peer comparison (the CSV of ../shared/peers' fp8.py, as
`bash .peers/run.sh fp8 --csv-dir DIR` writes it to DIR/fp8.csv): TFLOP/s of
tessera, DeepGEMM and (where measured) torch's blockwise _scaled_mm per case,
tessera's ratio to DeepGEMM above each group, one panel per section (dense,
contiguous, masked) with the section's geometric mean in its title.

    python3 bench/plot_peers.py bench/results/h100-fp8-deepgemm.csv    # -> .png beside it
    python3 bench/plot_peers.py IN.csv --out chart.png
"""
import argparse
import csv
import math
import os
import sys

LIBS = (("tessera", "#2b6cb0"), ("deepgemm", "#a0aec0"), ("torch", "#e2e8f0"))


def read_peers(path):
    """The header comments (device, versions) and the rows of one fp8.py CSV."""
    header, lines = [], []
    with open(path) as f:
        for line in f:
            (header if line.startswith("#") else lines).append(line)
    return header, list(csv.DictReader(lines))


def number(row, key):
    """A float column, NaN where empty or missing."""
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return math.nan


def geomean(values):
    values = [v for v in values if v == v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def short_case(case):
    """The case label without its section word: 'dense m=64 n=2112 k=7168' -> 'm=64 n=2112 k=7168'."""
    return case.split(" ", 1)[1] if " " in case else case


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="PNG path (default: the CSV's name with .png)")
    args = ap.parse_args()
    header, rows = read_peers(args.csv)
    rows = [r for r in rows if not r.get("note", "").startswith("FAILED")]
    if not rows:
        sys.exit(f"{args.csv}: no measured rows")
    sections = [s for s in ("dense", "contiguous", "masked") if any(r["section"] == s for r in rows)]

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widths = [sum(r["section"] == s for r in rows) for s in sections]
    fig, axes = plt.subplots(1, len(sections), figsize=(max(10, 0.75 * len(rows) + 3), 6),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    device = header[0].lstrip("# ").split(" torch=")[0].replace("device=", "") if header else ""
    for ax, section in zip(axes[0], sections):
        sub = [r for r in rows if r["section"] == section]
        libs = [(lib, color) for lib, color in LIBS if any(number(r, f"{lib}_tflops") == number(r, f"{lib}_tflops")
                                                           for r in sub)]
        width = 0.8 / len(libs)
        xs = range(len(sub))
        for i, (lib, color) in enumerate(libs):
            ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], [number(r, f"{lib}_tflops") for r in sub], width,
                   label=lib, color=color, edgecolor="#4a5568", linewidth=0.3)
        ratios = [number(r, "tessera_vs_deepgemm") for r in sub]
        for x, r, ratio in zip(xs, sub, ratios):
            top = max(v for v in (number(r, f"{lib}_tflops") for lib, _ in libs) if v == v)
            if ratio == ratio:
                ax.text(x, top * 1.01, f"{ratio:.2f}x", ha="center", va="bottom", fontsize=7,
                        color="#276749" if ratio >= 1 else "#c53030")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([short_case(r["case"]) for r in sub], fontsize=6, rotation=60, ha="right")
        ax.set_title(f"{section}: tessera/DeepGEMM geomean {geomean(ratios):.3f}x", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(0, max(number(r, f"{lib}_tflops") for r in sub for lib, _ in libs
                           if number(r, f"{lib}_tflops") == number(r, f"{lib}_tflops")) * 1.12)
    axes[0][0].set_ylabel("TFLOP/s (burst, L2 flushed)")
    axes[0][0].legend(loc="upper left", fontsize=8)
    all_ratios = [number(r, "tessera_vs_deepgemm") for r in rows]
    fig.suptitle(f"FP8 1x128 x 128x128 block-scaled - {device} - all {len(rows)} cases geomean "
                 f"{geomean(all_ratios):.3f}x DeepGEMM", fontsize=10)
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    fig.savefig(out, dpi=120)
    print(f"{out}: {len(rows)} cases, tessera/DeepGEMM geomean {geomean(all_ratios):.3f}x, "
          f"min {min(r for r in all_ratios if r == r):.3f}x")


if __name__ == "__main__":
    main()
