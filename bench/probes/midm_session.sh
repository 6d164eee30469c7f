set -u
bash bench/ensure_build.sh $OUT build || exit 1
bash bench/probes/peer_kernels.sh build bench/probes/cases_midm.txt > $OUT/peer.log 2>&1
bash bench/probes/timeline.sh build-tl bench/probes/cases_midm.txt > $OUT/tl.log 2>&1
cd $OUT && tar czf all.tgz peer peer.log tl.log tl_*.txt 2>/dev/null
grep -E '^==|Context|gpu__time|dram__|grid_size|cluster_dim_x' $OUT/peer.log | cut -c1-170
cat $OUT/tl.log
