#!/usr/bin/env bash
# The CUDA compiler launcher (CMakeLists.txt): runs one nvcc command and
# fails it where ptxas says, only as "info", that a kernel lost its design:
# C7508 (setmaxnreg ignored) and the C751x "Potential Performance Loss"
# lines (wgmma instructions serialized: C7510 a call inside the pipeline,
# C7511 too few registers, C7514/C7515 other instructions reading or
# defining the accumulators, C7517 a warpgroup.wait injected for them).
# Such a kernel still computes right, only slower, so nothing else would
# catch it.
out=$("$@" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out" >&2
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -qE '\(C75(08|1[0-9])\)|Potential Performance Loss'; then
    echo "ptxas_guard: a kernel above lost its design (see the ptxas C7508/C751x lines); failing the compile" >&2
    exit 1
fi
exit $rc
