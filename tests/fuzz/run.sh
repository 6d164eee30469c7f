#!/usr/bin/env bash
# Builds the layout-expression fuzzer with clang (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer, leak checking) and runs it for a bounded time,
# TESS_FUZZ_SECONDS (default 30). Exit 77 (skipped) where clang or libFuzzer
# is not installed; any crash, leak, timeout or sanitizer report fails.
set -u
src=$1 out=$2
seconds=${TESS_FUZZ_SECONDS:-30}
command -v clang >/dev/null || { echo "SKIP: clang not installed"; exit 77; }
mkdir -p "$out/corpus"
cat > "$out/probe.c" <<'P'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
P
if ! clang -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null; then
  echo "SKIP: clang has no libFuzzer runtime (install libclang-rt-dev)"; exit 77
fi
set -e
clang -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$src/include" -I"$src/src" \
  "$src"/src/layout/*.c "$src/src/core/status.c" "$src/tests/fuzz/fuzz_layout_expr.c" \
  -o "$out/fuzz_layout_expr"
cp "$src"/tests/fuzz/corpus/* "$out/corpus/"
ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_layout_expr" "$out/corpus" \
  -max_total_time="$seconds" -artifact_prefix="$out/" -max_len=512 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && echo "fuzz_layout_expr: no crash, leak or sanitizer report in ${seconds}s"
exit "$status"
