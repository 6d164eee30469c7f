#!/usr/bin/env bash
# The `tessera` tool: usage errors exit 2 (a refused `bench gemm --hold` with
# its reason), `version` prints the version, and `info` either describes a GPU
# (exit 0) or says in one line that there is none (non-zero exit).
set -u
tool=$1
fail=0
check() { if ! eval "$1"; then echo "check failed: $1"; fail=1; fi; }

out=$("$tool" version); rc=$?
check '[ $rc -eq 0 ] && [[ "$out" == "tessera 0."* ]]'
"$tool" no-such-command >/dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]'
"$tool" >/dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]'
"$tool" info --bogus >/dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]'
out=$("$tool" help); rc=$?
check '[ $rc -eq 0 ] && [[ "$out" == *"info"* ]] && [[ "$out" == *"--hold=SECONDS"* ]]'
# `bench gemm --hold` takes seconds in (0, 60]; anything else is refused,
# saying so, before a GPU is looked for.
for bad in -1 abc 0 61 2x; do
  out=$("$tool" bench gemm --m=64 --n=64 --k=64 --hold=$bad 2>&1); rc=$?
  check '[ $rc -eq 2 ] && [[ "$out" == *"--hold=$bad: expected seconds"* ]]'
done
"$tool" bench gemm --m=64 --n=64 --k=64 --hold >/dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]'

out=$("$tool" info 2>&1); rc=$?
if [ $rc -eq 0 ]; then
  check '[[ "$out" == *"compute capability"* ]] && [[ "$out" == *"kernel families"* ]]'
else
  lines=$(printf '%s\n' "$out" | wc -l)
  check '[ "$lines" -eq 1 ] && [[ "$out" == "tessera info: "* ]]'
  echo "no GPU: $out"
fi
"$tool" info --device 4096 >/dev/null 2>&1; rc=$?
check '[ $rc -eq 1 ]'
[ $fail -eq 0 ] && echo "unit_cli: ok"
exit $fail
