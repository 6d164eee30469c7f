#!/usr/bin/env bash
# One device call (~8 min): the gated store per activation shape against its base, and the
# prepared Python calls. Lab builds of this tree and of BASE_TAR (git archive of the base commit,
# carried) with the same instances, side by side; the SwiGLU lines of bench/suites/epilogue.txt
# (and SiLU alone beside them) on each, twice, alternating; then test_fastcall and
# bench/python_overhead.py on this tree's build. CSVs and logs under $OUT, a table last.
#   BASE_TAR=scratch/base.tar bash dev/ab/gated_ab_gpu.sh
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
inst='^(f16_128x256_c2|f16_128x128_c1|f16_128x64_c1|f16_128x32_c1|fp8_128x192_c2_rows|fp8_128x256_c2_rows|fp8_128x128_c1_rows|fp8_128x64_c1_tokens|fp8_64x64_c1_rows|fp8_64x32_c1_rows|grouped_f16_tokens16|grouped_f16_128x128)$'
rm -rf build /tmp/base && mkdir -p /tmp/base && tar -xf "${BASE_TAR:?}" -C /tmp/base
build() { { cmake -S "$1" -B "$1/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_BUILD_TESTS=OFF -DTESS_INSTANCES="$inst" &&
    cmake --build "$1/build" -j 8; } > "$OUT/build-$2.log" 2>&1 || { echo "$2 build failed"; grep -m5 -E "error|spill" "$OUT/build-$2.log"; }; }
build . new & build /tmp/base base & wait
echo "built $SECONDS s"
grep -E "gate=interleaved|^--m=4096 --n=28672 --k=4096 --act=silu$|^--m=8192 --n=8192 --k=8192 --act=silu$|--k=7168 .*--act=silu$" \
    bench/suites/epilogue.txt > /tmp/gated.txt
cat /tmp/gated.txt
for r in 1 2; do
    for v in base new; do
        bin=build/bin/tessera; [ $v = base ] && bin=/tmp/base/build/bin/tessera
        $bin bench gemm --suite=/tmp/gated.txt --output=$OUT/gated-$v-$r.csv > $OUT/gated-$v-$r.log 2>&1 || echo "$v bench rc=$?"
    done
done
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
timeout 60 python3 -m pytest -q -rs python/tests/test_fastcall.py > $OUT/pytest.log 2>&1; echo "pytest rc=$?: $(tail -1 $OUT/pytest.log)"
timeout 100 python3 bench/python_overhead.py --rounds 15 --csv $OUT/python-overhead.csv > $OUT/po.log 2>&1; cat $OUT/po.log
python3 - "$OUT" <<'PY'
import csv, glob, sys
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/gated-*-*.csv")):
    v = f.rsplit("/", 1)[1].split("-")[1]
    for r in csv.DictReader(l for l in open(f) if l[0] != "#"):
        if r["provider"] == "tessera":
            rows.setdefault((r["m"], r["n"], r["k"], r["a_type"], r["gate"]), {}).setdefault(v, []).append(float(r["ms"]))
for k, v in rows.items():
    b, n = min(v.get("base", [0])), min(v.get("new", [0]))
    print(" ".join(k), f"base {b:.4f} ms new {n:.4f} ms  new/base {n / b if b else 0:.3f}")
PY
echo "done $SECONDS s"
