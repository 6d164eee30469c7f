#!/usr/bin/env bash
# Probe (issue 7, session 16): where a short GEMM's time goes, per CTA. Builds
# tessera with bench/probes/timeline.patch (globaltimer stamps, printed per
# consumer warpgroup), runs a few calls of each shape and summarises them
# with timeline.py; then the pure streaming floors (stream_patterns.cu).
# OUT=... bash bench/probes/timeline.sh BUILD [CASES]
# CASES: a file of "name bench-gemm-flags" lines, instead of the four below.
set -u
b=${1:-build}
cases=${2:-}
git apply bench/probes/timeline.patch || exit 1
# printf in a kernel spills a few: warnings, not errors, for this build only
sed -i 's/ --Werror=all-warnings//' CMakeLists.txt
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build $b -j "$(nproc)" --target tessera_cli; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
git apply -R bench/probes/timeline.patch
sed -i 's/-Xptxas=--warn-on-spills -Xcompiler/-Xptxas=--warn-on-spills --Werror=all-warnings -Xcompiler/' CMakeLists.txt
run() { # name, bench flags
  $b/bin/tessera bench gemm $2 --providers=tessera --warmup-iterations=1 --profiling-iterations=6 --rounds=1 > $OUT/tl_$1.txt 2>&1
  echo "== $1: $(grep -m1 -o 'plan=[^ ]*' $OUT/tl_$1.txt) $(grep -m1 -o 'median=[^ ]*' $OUT/tl_$1.txt)"
  python3 bench/probes/timeline.py $OUT/tl_$1.txt
}
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
if [ -n "$cases" ]; then
  while read -r name flags; do run "$name" "$flags"; done < "$cases"
  exit 0
fi
run bf16_16x2112 "--m=16 --n=2112 --k=7168 $bf"
run bf16_16x4096 "--m=16 --n=4096 --k=7168 $bf"
run bf16_128x4096 "--m=128 --n=4096 --k=7168 $bf"
run fp8_16x2112 "--m=16 --n=2112 --k=7168 $f8"
