#!/usr/bin/env bash
# The CUDA compiler launcher (CMakeLists.txt): runs one nvcc command and
# fails it where ptxas says, only as "info", that a kernel lost its design:
# C7514 (wgmma instructions serialized), C7517 (warpgroup.wait injected
# around accumulator reads) and C7508 (setmaxnreg ignored). Such a kernel
# still computes right, only slower, so nothing else would catch it.
out=$("$@" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out" >&2
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -qE '\(C75(08|14|17)\)'; then
    echo "ptxas_guard: a kernel above lost its design (C7508/C7514/C7517: see the ptxas lines); failing the compile" >&2
    exit 1
fi
exit $rc
