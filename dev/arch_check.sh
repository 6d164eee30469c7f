#!/usr/bin/env bash
# A refactor that should not change the kernels, checked on the device in
# one call: builds this tree and a baseline side by side. Without suites:
# compares every kernel's SASS (dev/sass_diff.py) and every plan the
# planners rank for a fixed set of problems (dev/plan_snapshot.c), then
# runs the GPU tests of this tree. With suites named: builds only the tool
# (and gpu_grouped, run with TESS_TRIALS=${TESS_TRIALS:-10}), then times
# each suite for both builds, baseline first, CSVs under OUT/base-* and
# OUT/new-*, and prints dev/compare_runs.py's table. The device returns at
# most 8 files: logs stay on the machine (/tmp/arch-logs).
#   bash dev/arch_check.sh OUT BASE_TAR [SUITE...]
#     BASE_TAR: `git archive <baseline commit>` of the tree to compare with.
set -uo pipefail
out=${1:?usage: arch_check.sh OUT BASE_TAR [SUITE...]} base_tar=${2:?usage: arch_check.sh OUT BASE_TAR [SUITE...]}
shift 2
suites=("$@")
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mkdir -p "$out" /tmp/base-src
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"
[ -f /tmp/base-src/CMakeLists.txt ] || tar -xf "$base_tar" -C /tmp/base-src
logs=/tmp/arch-logs
mkdir -p "$logs"
build() { # SRC BUILD LOG TARGET...
    local src=$1 dir=$2 log=$3
    shift 3
    { cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$dir" -j 8 "$@"; } > "$log" 2>&1 ||
        { echo "build of $src failed:"; tail -20 "$log"; return 1; }
}
new_targets=() base_targets=()
[ ${#suites[@]} -gt 0 ] && new_targets=(--target tessera_cli gpu_grouped) base_targets=(--target tessera_cli)
build "$here" build-dev "$logs/build-new.log" "${new_targets[@]}" & new_pid=$!
build /tmp/base-src /tmp/base-build "$logs/build-base.log" "${base_targets[@]}" & base_pid=$!
wait $new_pid || exit 1
wait $base_pid || exit 1
echo "== builds done ($SECONDS s)"
if [ ${#suites[@]} -gt 0 ]; then
    TESS_TRIALS=${TESS_TRIALS:-10} timeout 150 build-dev/tests/gpu_grouped > "$out/gpu_grouped.log" 2>&1
    echo "gpu_grouped rc=$? $(tail -1 "$out/gpu_grouped.log") ($SECONDS s)"
fi
[ ${#suites[@]} -gt 0 ] || {
cuobjdump -sass /tmp/base-build/lib/libtessera.so > /tmp/base.sass
cuobjdump -sass build-dev/lib/libtessera.so > /tmp/new.sass
{ python3 dev/sass_diff.py /tmp/base.sass /tmp/new.sass; python3 dev/sass_diff.py /tmp/base.sass /tmp/new.sass --normalize; } |
    tee "$out/sass.txt" | grep -v "^  " ; grep -c "^  " "$out/sass.txt"
snapshot() { # SRC BUILD OUTPUT
    cc -O2 -std=c11 -I"$1/include" -I"$1/src" -I"$2/generated" dev/plan_snapshot.c "$2/lib/libtessera.a" \
        -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt -o "$3.bin" && "$3.bin" > "$3"
}
snapshot /tmp/base-src /tmp/base-build /tmp/plans-base.txt
snapshot "$here" build-dev /tmp/plans-new.txt
if cmp -s /tmp/plans-base.txt /tmp/plans-new.txt; then
    echo "plans: identical ($(grep -c '^  ' /tmp/plans-new.txt) plans of $(grep -c ': ' /tmp/plans-new.txt) problems)" | tee "$out/plans.txt"
else
    echo "plans: DIFFER" | tee "$out/plans.txt"; diff /tmp/plans-base.txt /tmp/plans-new.txt | head -60 >> "$out/plans.txt"
fi
}
if [ ${#suites[@]} -eq 0 ]; then
    for t in build-dev/tests/gpu_*; do
        name=$(basename "$t")
        timeout "${TEST_SECONDS:-150}" stdbuf -oL -eL "$t" > "$out/$name.log" 2>&1
        echo "$name rc=$? $(grep -c 'check failed' "$out/$name.log") failed; $(tail -1 "$out/$name.log")"
    done | tee "$out/tests.txt"
    exit 0
fi
for s in "${suites[@]}"; do
    for which in base new; do
        b=$([ $which = base ] && echo /tmp/base-build || echo build-dev)
        src=$([ $which = base ] && echo /tmp/base-src || echo "$here")
        if [ "$s" = moe ]; then
            PYTHONPATH=$src/python TESSERA_LIBRARY=$b/lib/libtessera.so timeout 240 python3 "$src/bench/grouped.py" \
                --suite "$src/bench/suites/moe.txt" --csv "$out/$which-moe.csv" > "$logs/$which-moe.log" 2>&1
        else
            defaults=$(sed -n 's/^#! *//p' "$src/bench/suites/$s.txt")
            # shellcheck disable=SC2086
            timeout "${SUITE_SECONDS:-120}" "$b/bin/tessera" bench gemm $defaults --suite="$src/bench/suites/$s.txt" \
                --output="$out/$which-$s.csv" > "$logs/$which-$s.log" 2>&1
        fi
        echo "$which $s rc=$? ($SECONDS s)"
    done
done
python3 dev/compare_runs.py "$out"
