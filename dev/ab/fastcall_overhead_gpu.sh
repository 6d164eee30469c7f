#!/usr/bin/env bash
# Issue 32 (~4 min): a lab build with the kernels the overhead probes run, test_fastcall on the GPU,
# then bench/python_overhead.py and dev/probes/host_time.py with tessera._fastcall on and off (twice
# each, alternating) beside the C library's own host time for the decode GEMM. Logs under $OUT.
set -uo pipefail
rm -rf build
. dev/ab/gpu_common.sh
INSTANCES='^(f16_128x128_c1|f16_128x64_c1|f16_128x32_c1|fp8_128x128_c1_rows|fp8_128x64_c1_tokens|fp8_64x64_c1_rows|fp8_64x32_c1_rows|grouped_f16_tokens16|grouped_f16_128x128)$' gpu_build
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
timeout 60 python3 -m pytest -q -rs python/tests/test_fastcall.py > $OUT/pytest.log 2>&1; echo "pytest rc=$?: $(tail -1 $OUT/pytest.log)"
for v in 1 0; do
    TESSERA_FASTCALL=$v timeout 90 python3 bench/python_overhead.py --m 1 --n 4096 --k 4096 --rounds 15 --csv $OUT/python-overhead-fastcall$v.csv > $OUT/po$v.log 2>&1
    echo "TESSERA_FASTCALL=$v"; grep -E "^(tessera|torch)" $OUT/po$v.log
done
for v in 1 0; do TESSERA_FASTCALL=$v timeout 60 python3 dev/probes/host_time.py > $OUT/host_time-fastcall$v.txt 2>&1; echo "host_time $v: $(sed -n 2,5p $OUT/host_time-fastcall$v.txt | tr -s ' ' | tr '\n' ';')"; done
for i in 1 2 3; do build/bin/tessera bench gemm --m=1 --n=4096 --k=4096 --A=bf16:row --B=bf16:col --D=bf16:row --output=$OUT/c-host$i.csv > /dev/null 2>&1
python3 -c "import csv,sys; [print('C library', r['provider'], 'host_us', r['host_us']) for r in csv.DictReader(l for l in open(sys.argv[1]) if l[0] != '#')]" $OUT/c-host$i.csv; done
echo "done $SECONDS s"
