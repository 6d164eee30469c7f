#!/usr/bin/env python3
"""Summarises the per-CTA stamps printed by a build with bench/probes/timeline.patch
(lines "TL cta wg k_begin k_end finisher t0 .. t6", globaltimer ns): per launch,
each phase's end relative to the launch's first CTA start, median and last
over consumer warpgroups, then the median over launches.
  t0 kernel entry, t1 set-up done, t2 first stage landed, t3 mainloop done,
  t4 partials stored / added, t5 epilogue issued, t6 stores drained."""
import statistics
import sys

rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 13 and f[0] == "TL":
        rows.append([int(x) for x in f[1:]])
rows.sort(key=lambda r: r[5])
launches, cur = [], []
for r in rows:
    if cur and r[5] - cur[-1][5] > 4000:
        launches.append(cur)
        cur = []
    cur.append(r)
if cur:
    launches.append(cur)
names = ["setup", "first", "mainloop", "fixup", "epilogue", "drained"]
per = {n: ([], []) for n in names}
for L in launches:
    base = min(r[5] for r in L)
    for i, n in enumerate(names):
        v = [(r[6 + i] - base) / 1e3 for r in L if r[6 + i]]
        if v:
            per[n][0].append(statistics.median(v))
            per[n][1].append(max(v))
fin = [r for L in launches for r in L if r[4]]
print(f"{len(launches)} launches, {len(launches[0]) if launches else 0} warpgroup lines each;"
      f" finishers {len(fin) // max(1, len(launches))} a launch")
print("phase      median_us  last_us   (since the first CTA's entry; median over launches)")
for n in names:
    if per[n][0]:
        print(f"{n:10s} {statistics.median(per[n][0]):9.2f} {statistics.median(per[n][1]):8.2f}")
