"""Issue 7's targets against what one launch can reach on this GPU.

For each row of a small-M suite CSV (bench/results/<gpu>-smallm.csv) it
prints tessera's and cuBLAS's time, the streaming floor of the row's bytes,
and the time the issue's target asks for:

  M <= 16: weight bandwidth >= 90% of the copy rate of the same run
           (`tessera bench copy`, the CSV's "copy bandwidth" line), that is
           t <= weight bytes / (0.9 x copy);
  M >= 64, FP8: at least 1.3x cuBLASLt, t <= t_cublas / 1.3.

The floor is one kernel launch that only streams the bytes (weights, tokens
and D) with TMA rings and does no math: floor_us + bytes / bytes_per_us.
Both constants were fitted on an H200 (dev/probes/stream_patterns.cu,
the fastest of its TMA and plain-load kernels, dev/NOTES.md sessions 16
and 21, two calls: 2112x7168, 7168x2048, 4096x7168 and 16384x7168 bf16
weights took 11.17 / 11.07, 10.62 / 10.66, 17.50 / 17.41 and 58.24 / 58.40
us; least squares gives 3.94 us + bytes at 4.32 TB/s, residuals within
0.22 us; the intercept is lowered so that the line lies under all eight).
A target under the floor cannot be met by any kernel of one launch. The
constants are the H200's; for another GPU give its own (measured the same
way) as --floor=US,TBPS.

    python3 dev/smallm_floor.py bench/results/h200-smallm.csv [--floor=US,TBPS]
"""
import csv
import re
import sys

# GPU name (as in the CSV's "# device=" line) -> (us an empty launch of this
# size and the first stage's arrival take, bytes per us after that).
FLOORS = {"NVIDIA H200": (3.81, 4.32e6)}
COPY_SHARE = 0.9  # issue 7: M in {1, 4, 16}
CUBLAS_RATIO = 1.3  # issue 7: M in {64, 128}, FP8


def main(path, floor_given):
    text = open(path).read()
    device = re.search(r"# device=(.*?) sm_clock", text)
    device = device.group(1).strip() if device else "?"
    if floor_given:
        floor_us, bytes_per_us = floor_given
    elif device in FLOORS:
        floor_us, bytes_per_us = FLOORS[device]
    else:
        sys.exit(f"{path}: no streaming floor measured for '{device}'; give one as --floor=US,TBPS")
    copy = re.search(r"copy bandwidth=([0-9.]+) GB/s", text)
    if not copy:
        sys.exit(f"{path}: no '# copy bandwidth=... GB/s' line")
    copy_bytes_per_us = float(copy.group(1)) * 1e3
    rows = csv.DictReader(l for l in text.splitlines() if l and not l.startswith("#"))
    times = {}
    for r in rows:
        key = (int(r["m"]), int(r["n"]), int(r["k"]), r["a_type"], r["scale_a"])
        times.setdefault(key, {})[r["provider"]] = float(r["ms"]) * 1e3
    print(f"{device}: copy {copy.group(1)} GB/s; floor {floor_us} us + bytes at {bytes_per_us / 1e6:.2f} TB/s")
    print(f"{'problem':32} {'tessera':>8} {'cuBLAS':>8} {'floor':>7} {'target':>7}  verdict")
    for (m, n, k, dtype, scale), t in times.items():
        elem = 1 if dtype.startswith("e") else 2
        weights = n * k * elem
        floor = floor_us + (weights + m * k * elem + m * n * 2) / bytes_per_us
        ours, theirs = t.get("tessera", float("nan")), t.get("cublas", float("nan"))
        if m <= 16:
            target, what = weights / (COPY_SHARE * copy_bytes_per_us), f"{COPY_SHARE:.0%} of copy"
        elif dtype.startswith("e"):
            target, what = theirs / CUBLAS_RATIO, f"{CUBLAS_RATIO}x cuBLASLt"
        else:
            continue  # bf16 at M >= 64: no target of its own
        if target < floor:
            verdict = "under the floor"
        elif ours <= target:
            verdict = "met"
        else:
            verdict = f"open: {(ours - target) / ours:.0%} to cut, floor {(ours - floor) / ours:.0%} away"
        name = f"{m}x{n}x{k} {dtype} {scale}"
        print(f"{name:32} {ours:8.1f} {theirs:8.1f} {floor:7.1f} {target:7.1f}  {what}: {verdict}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--floor=")]
    given = [a[len("--floor="):].split(",") for a in sys.argv[1:] if a.startswith("--floor=")]
    if len(args) != 1 or (given and len(given[0]) != 2):
        sys.exit("usage: smallm_floor.py SUITE.csv [--floor=US,TBPS]")
    main(args[0], (float(given[0][0]), float(given[0][1]) * 1e6) if given else None)
