#!/usr/bin/env python3
"""Bar chart of a `tessera bench gemm --output=FILE.csv` result: TFLOP/s (or
GB/s) of tessera and cuBLAS side by side per problem, with tessera's ratio to
cuBLAS above each pair and the geometric mean of the ratios in the title.
With --metric=gbs, lines mark the device-to-device copy rate and 90% of it
(from --copy, or the CSV's "# copy bandwidth=" line that bench/run writes).

    python3 bench/plot.py bench/results/h100-dense.csv            # -> .png beside it
    python3 bench/plot.py IN.csv --out chart.png --title "dense bf16"
    python3 bench/plot.py bench/results/h100-smallm.csv --metric=gbs
"""
import argparse
import csv
import math
import os
import sys



def layout_name(row):
    """BLAS-style layout of a problem: TN = A row-major, B column-major (A @ B^T of K-major matrices)."""
    a = "T" if row["a_order"] == "row" else "N"
    b = "N" if row["b_order"] == "col" else "T"
    return a + b


def read_result(path):
    """The device line, the copy rate (GB/s, or None) and the rows of one CSV; the
    device line is the leading '#' comment, the copy rate a '# copy bandwidth=X GB/s' one."""
    device, copy = "", None
    lines = []
    with open(path) as f:
        for line in f:
            if line.startswith("# copy bandwidth="):
                copy = float(line.split("=")[1].split()[0])
            elif line.startswith("#"):
                device = device or line[1:].strip()
            elif line.strip():
                lines.append(line)
    return device, copy, list(csv.DictReader(lines))


def problems(rows):
    """Problems in file order, each with its tessera and cuBLAS rows."""
    table = {}
    for row in rows:
        scales = row.get("scale_a", "none"), row.get("scale_b", "none"), row.get("fast_accum", "0")
        epilogue = (row.get("bias", "none"), row.get("activation", "none"), row.get("residual", "0"),
                    row.get("gate", "none"), row.get("aux", "0"))
        key = (row["m"], row["n"], row["k"], row["batch"], layout_name(row), row["d_type"], row["beta"], scales,
               epilogue)
        table.setdefault(key, {})[row["provider"]] = row
    return table


def label(key):
    m, n, k, batch, layout, d_type, beta, (scale_a, scale_b, fast), (bias, activation, residual, gate, aux) = key
    text = f"{m}x{n}x{k}\n{layout}"
    if scale_a != "none" or scale_b != "none":
        text += f"\n{scale_a}/{scale_b}" + (" fast" if fast == "1" else "")
    if batch != "1":
        text += f" b{batch}"
    if float(beta) != 0:
        text += " beta"
    # a fused epilogue (tessera bench gemm --bias, --act, --gate, --residual, --aux) and an FP8 D
    parts = ["bias" if bias != "none" else "", activation if activation != "none" else "",
             f"{gate} gate" if gate not in ("none", "") else "", "residual" if residual == "1" else "",
             "aux" if aux == "1" else "", f"D {d_type}" if d_type in ("e4m3", "e5m2") else ""]
    if any(parts):
        text += "\n" + "+".join(x for x in parts if x)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="PNG path (default: the CSV's name with .png)")
    ap.add_argument("--title", default="tessera vs cuBLAS")
    ap.add_argument("--metric", choices=["tflops", "gbs"], default="tflops",
                    help="what the bars show: TFLOP/s, or GB/s (bytes read and written: decode shapes)")
    ap.add_argument("--copy", type=float, help="device-to-device copy rate in GB/s (default: from the CSV)")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    device, copy, rows = read_result(args.csv)
    copy = args.copy or copy
    table = problems(rows)
    keys = [k for k in table if "tessera" in table[k]]
    if not keys:
        sys.exit(f"{args.csv}: no tessera rows")
    metric = args.metric
    ours = [float(table[k]["tessera"][metric]) for k in keys]
    theirs = [float(table[k]["cublas"][metric]) if "cublas" in table[k] else math.nan for k in keys]
    ratios = [o / t for o, t in zip(ours, theirs) if t == t and t > 0]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else math.nan

    width = 0.38
    fig, ax = plt.subplots(figsize=(max(8, 1.35 * len(keys)), 5.5))
    xs = range(len(keys))
    ax.bar([x - width / 2 for x in xs], ours, width, label="tessera", color="#2b6cb0")
    ax.bar([x + width / 2 for x in xs], theirs, width, label="cuBLAS(Lt)", color="#a0aec0")
    for x, o, t in zip(xs, ours, theirs):
        if t == t and t > 0:
            r = o / t
            ax.text(x, max(o, t) * 1.01, f"{r:.2f}x", ha="center", va="bottom", fontsize=8,
                    color="#276749" if r >= 1 else "#c53030")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([label(k) for k in keys], fontsize=7)
    ax.set_ylabel("TFLOP/s" if metric == "tflops" else "GB/s (read + written)")
    top = max(ours + [t for t in theirs if t == t])
    if metric == "gbs" and copy:
        ax.axhline(copy, color="#4a5568", linewidth=0.8, linestyle="--", label=f"copy {copy:.0f} GB/s")
        ax.axhline(0.9 * copy, color="#dd6b20", linewidth=0.8, linestyle=":", label="90% of copy")
        top = max(top, copy)
    ax.set_ylim(0, top * 1.12)
    short_device = device.split(" sm_clock")[0].replace("device=", "")
    ax.set_title(f"{args.title} - {short_device} - geomean {geo:.3f}x", fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    fig.savefig(out, dpi=120)
    print(f"{out}: {len(keys)} problems, geomean {geo:.3f}x cuBLAS, min {min(ratios):.3f}x" if ratios else out)


if __name__ == "__main__":
    main()
