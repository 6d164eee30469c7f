#!/usr/bin/env bash
# Probe call (issue 7, session 17): cuBLAS's and tessera's kernels on the
# cases of cases_midm.txt (peer_kernels.sh: names, launch shape, counters),
# then tessera's per-CTA timeline of the same cases (timeline.sh). Output in
# $OUT/all.tgz, a digest printed.
#   OUT=... bash bench/probes/midm_session.sh
set -u
bash bench/ensure_build.sh $OUT build || exit 1
bash bench/probes/peer_kernels.sh build bench/probes/cases_midm.txt > $OUT/peer.log 2>&1
bash bench/probes/timeline.sh build-tl bench/probes/cases_midm.txt > $OUT/tl.log 2>&1
cd $OUT && tar czf all.tgz peer peer.log tl.log tl_*.txt 2>/dev/null
grep -E '^==|Context|gpu__time|dram__|grid_size|cluster_dim_x' $OUT/peer.log | cut -c1-170
cat $OUT/tl.log
