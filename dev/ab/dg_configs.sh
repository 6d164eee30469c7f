#!/usr/bin/env bash
# DeepGEMM's own choice of layout (block sizes, clusters, stages, SMs) for
# each of the peers' fp8.py cases, as its heuristics print it
# (DG_PRINT_CONFIGS), into OUT/dg-configs.txt. Run after fp8_ab.sh in the
# same call (it reuses that build and JIT cache).
#   bash dev/ab/dg_configs.sh OUT [FP8_ARGS...]
set -uo pipefail
out=${1:?usage: dg_configs.sh OUT}
shift
here=$(pwd)
export DG_JIT_CACHE_DIR=${DG_JIT_CACHE_DIR:-/tmp/dg_jit_cache} PYTHONPATH=$here/.peers/deepgemm:$here/python
DG_PRINT_CONFIGS=1 timeout 200 python3 "$here/.peers/fp8.py" --no-tessera --no-torch --reps 1 --warmup 1 "$@" \
    > "$out/dg-configs.txt" 2>&1
echo "dg_configs rc=$?: $(grep -c 'Layout\|layout' "$out/dg-configs.txt") config lines"
