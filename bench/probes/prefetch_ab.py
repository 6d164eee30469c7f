"""Summarises prefetch_ab.sh's CSVs: per problem and chain length, tessera's
median us per call in each setting (medians over rounds) and, for each,
the bandwidth as a share of the copy rate."""
import csv, glob, re, statistics, sys
from collections import defaultdict

out = sys.argv[1]
copy = re.search(r"([0-9.]+) GB/s", open(f"{out}/copy.txt").read())
copy = float(copy.group(1)) if copy else float("nan")
times = defaultdict(list)
gbs = defaultdict(list)
modes = []
for f in sorted(glob.glob(f"{out}/c*-*-*.csv")):
    chain, mode = re.match(r".*/c(\d+)-(\w+)-\d+\.csv", f).groups()
    modes += [mode] if mode not in modes else []
    for row in csv.DictReader(l for l in open(f) if not l.startswith("#")):
        key = (int(chain), f"{row['m']}x{row['n']}x{row['k']} {row['a_type']} {row['scale_a']}")
        times[key, mode].append(float(row["ms"]) * 1e3)
        gbs[key, mode].append(float(row["gbs"]))
modes.sort(key=lambda m: m != "off")
print(f"copy {copy} GB/s; us per call ({' / '.join(modes)}), then share of copy")
for key in sorted({k for k, _ in times}):
    us = [statistics.median(times[key, m]) if (key, m) in times else float("nan") for m in modes]
    share = [statistics.median(gbs[key, m]) / copy if (key, m) in gbs else float("nan") for m in modes]
    print(f"chain {key[0]} {key[1]:30} " + " ".join(f"{u:8.2f}" for u in us) + "   " + " ".join(f"{x:5.3f}" for x in share))
