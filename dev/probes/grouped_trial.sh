#!/usr/bin/env bash
# Builds dev/probes/grouped_trial.c against build/ and runs gpu_grouped's
# random case TRIAL of seed SEED with each of its plans, 20 s each (40 with
# AFTER_EVERY_PLAN; a plan that hangs is named "timed out").
#   SEED=15957612240936692014 TRIAL=0 bash dev/probes/grouped_trial.sh
set -uo pipefail
b=${BUILD_DIR:-build}
gcc -std=c11 -O1 -Iinclude -Isrc -Itests -I$b/include -I$b/generated -I/usr/local/cuda/include \
    dev/probes/grouped_trial.c tests/problem.c -o /tmp/grouped_trial \
    $(find $b -name libtessera_ref.a | head -1) $b/lib/libtessera.a -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt || exit 1
export TESS_SEED=$SEED
/tmp/grouped_trial "$TRIAL" | tee /tmp/grouped_trial.list
for p in $(grep -E "^  [0-9]+ " /tmp/grouped_trial.list | awk '{print $1}') ${EXTRA_PLANS:-}; do
    timeout $(( ${AFTER_EVERY_PLAN:+20} + 20 )) /tmp/grouped_trial "$TRIAL" "$p" | grep "^  plan" || echo "  plan $p ($(grep -E "^  $p " /tmp/grouped_trial.list | awk '{print $2}')): timed out or failed"
done
