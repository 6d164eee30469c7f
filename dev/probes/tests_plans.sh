#!/usr/bin/env bash
# One device call for a kernel change: the GPU tests named by TESTS (a glob,
# default gpu_*; TEST_SECONDS each, default 90), then every plan
# (--plan=all) of each line of $PLAN_PROBLEMS and of the file $PLAN_FILE
# (`tessera bench gemm` flags, one problem a line; # comments), timed in the
# planner's ranking order. Everything in
# $OUT/tp.tgz; the tests' summary printed.
#   OUT=... PLAN_FILE=dev/probes/cases_skinny.txt TESTS=none bash dev/probes/tests_plans.sh BUILD
set -u
b=${1:-build}
rm -rf /tmp/tp && mkdir -p /tmp/tp
TESTS=${TESTS:-gpu_*} TEST_SECONDS=${TEST_SECONDS:-90} bash dev/device_session.sh /tmp/tp "$b" > /tmp/tp/session.txt 2>&1
sed -n '/== summary/,$p' /tmp/tp/session.txt
while read -r flags; do
  [ -n "$flags" ] && timeout 60 "$b"/bin/tessera bench gemm --plan=all --rounds=2 --warmup-iterations=5 \
      --profiling-iterations=30 $flags >> /tmp/tp/plans.txt 2>&1
done <<< "${PLAN_PROBLEMS:-}"$'\n'"$(grep -v "^#" "${PLAN_FILE:-/dev/null}")"
"$b"/bin/tessera bench copy >> /tmp/tp/plans.txt 2>&1
tar czf "$OUT/tp.tgz" -C /tmp tp
