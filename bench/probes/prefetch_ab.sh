#!/usr/bin/env bash
# Probe (issue 7, 2026-11-25): the L2 prefetch issued before the PDL wait
# (dense sm90 kernels: each CTA's first K blocks; decode GEMVs: the first
# bytes of their weight rows), in four settings in one call, tessera only:
#   off   TESS_L2_PREFETCH_KBLOCKS=0 TESS_L2_PREFETCH_ROW_BYTES=0
#   deflt the library's defaults (a ring's K blocks; 96 KiB per SM of rows)
#   k2    2 K blocks, GEMV default
#   r8k   ring, 8 KiB of each GEMV row
# over bench/probes/cases_prefetch.txt chained (--chain=8) and single
# (CHAINS, default "8 1"), alternating settings (MODES, default all four)
# ROUNDS times (default 2; the first verifies unless VERIFY=false). BIN is
# a tessera binary (default build/bin/tessera). Leaves OUT/prefetch.tgz and
# prints the summary (bench/probes/prefetch_ab.py).
#   bash bench/probes/prefetch_ab.sh OUT [BIN]
set -u
out=${1:?usage: prefetch_ab.sh OUT [BIN]} bin=${2:-build/bin/tessera}
mkdir -p "$out/ab"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/ab/device.txt"
declare -A env=([off]="TESS_L2_PREFETCH_KBLOCKS=0 TESS_L2_PREFETCH_ROW_BYTES=0" [deflt]="TESS_UNUSED=0"
    [k2]="TESS_L2_PREFETCH_KBLOCKS=2" [r8k]="TESS_L2_PREFETCH_ROW_BYTES=8192")
for r in $(seq "${ROUNDS:-2}"); do
    for mode in ${MODES:-off deflt k2 r8k}; do
        for chain in ${CHAINS:-8 1}; do
            f="$out/ab/c$chain-$mode-$r"
            timeout 60 env ${env[$mode]} "$bin" bench gemm --suite=bench/probes/cases_prefetch.txt --chain=$chain \
                --providers=tessera --verify=$([ "$r" = 1 ] && echo "${VERIFY:-true}" || echo false) --rounds=2 \
                --output="$f.csv" > "$f.log" 2>&1 || echo "chain $chain $mode round $r: rc=$? $(tail -n 1 "$f.log")"
        done
    done
done
"$bin" bench copy > "$out/ab/copy.txt" 2>&1
tar czf "$out/prefetch.tgz" -C "$out" ab
python3 bench/probes/prefetch_ab.py "$out/ab"
