#!/usr/bin/env bash
# FP8 A/B beside DeepGEMM in one device call. Builds tessera variants side
# by side: this tree ("new"), this tree with each named patch applied (the
# variant is the patch's file name), and a baseline tree (`git archive` tar,
# "base"); with DeepGEMM's extension from ../shared/peers copied to .peers
# (see its README). Then, for each variant: the FP8 GPU test (not for the
# baseline), the peers' fp8.py cases (DeepGEMM timed in the same process on
# the same data), and, time allowing, sustained.py (held at the power cap).
# CSVs under OUT (the device returns at most 8 files), logs in /tmp/ab-logs,
# a table of fp8.py's summaries last.
#   bash dev/ab/fp8_ab.sh OUT BASE_TAR|- [PATCH...] [-- FP8_ARGS...]
#     BASE_TAR "-": no baseline. FP8_ARGS go to fp8.py (e.g. --quick).
#   env: SUSTAINED=0 skips sustained.py; ROUNDS=N times fp8.py N times per
#   variant, interleaved (medians printed last); AB_BUDGET_S (default 560) is the
#   time after which no phase starts; NEW_TAR: "new" (and the patched
#   variants) from this tar instead of the working tree; GPU_TESTS: the
#   GPU tests run on each variant but the baseline (default gpu_gemm_fp8;
#   "": none), or on the variants named in TEST_VARIANTS; AB_INSTANCES:
#   every variant built with -DTESS_INSTANCES=that regex, e.g.
#   '^fp8_.*(rows|tokens)|^grouped_fp8' (the 26 instances that serve
#   fp8.py's 1x128 x 128x128 cases, about half the build; a baseline older
#   than the option builds all), with GPU_TESTS="" (the tests expect every
#   instance);
#   PROFILE="M N K": DeepGEMM's and "new"'s kernels on that problem under
#   Nsight Compute (per-instruction stall samples, dev/ncu_stalls.py),
#   before the timings; PLANS="M N K[;M N K...]": every plan of each
#   problem (FP8 1x128 x 128x128 and bf16, `tessera bench gemm --plan=all`)
#   on the last variant built from a patch (else "new"), into
#   OUT/plans.tgz, the five fastest of each printed; PLAN_KINDS (default
#   "fp8 bf16") limits the kinds.
set -uo pipefail
out=${1:?usage: fp8_ab.sh OUT BASE_TAR|- [PATCH...] [-- FP8_ARGS...]} base_tar=${2:?usage: fp8_ab.sh OUT BASE_TAR}
shift 2
patches=() fp8_args=()
while [ $# -gt 0 ]; do
    [ "$1" = -- ] && { shift; fp8_args=("$@"); break; }
    patches+=("$1"); shift
done
here=$(pwd)
peers=$here/.peers
[ -f "$peers/fp8.py" ] || { echo "no .peers: copy ../shared/peers there (its README)"; exit 2; }
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PATH=/usr/local/cuda/bin:$PATH
export DG_JIT_CACHE_DIR=${DG_JIT_CACHE_DIR:-/tmp/dg_jit_cache} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TESSERA_ROOT=$here PYTHONPATH=$peers/deepgemm:$here/python
budget=${AB_BUDGET_S:-560}
logs=/tmp/ab-logs
mkdir -p "$out" "$logs" "$DG_JIT_CACHE_DIR"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"

# The variants' sources: this tree, patched copies of it, the baseline.
variants=(new)
declare -A src=([new]=$here)
if [ -n "${NEW_TAR:-}" ]; then
    rm -rf /tmp/ab-src-new && mkdir -p /tmp/ab-src-new && tar -xf "$NEW_TAR" -C /tmp/ab-src-new
    src[new]=/tmp/ab-src-new
fi
copy_tree() { mkdir -p "$2" && tar -C "$1" --exclude=./build --exclude='./build-*' --exclude=./.peers \
    --exclude=./.base -cf - . | tar -xf - -C "$2"; }
for p in ${patches[@]+"${patches[@]}"}; do
    v=$(basename "$p" .patch)
    rm -rf "/tmp/ab-src-$v"
    copy_tree "${src[new]}" "/tmp/ab-src-$v"
    (cd "/tmp/ab-src-$v" && patch -p1 -s < "$here/$p") || { echo "patch $p does not apply"; exit 1; }
    variants+=("$v") src[$v]=/tmp/ab-src-$v
done
if [ "$base_tar" != - ]; then
    rm -rf /tmp/ab-src-base && mkdir -p /tmp/ab-src-base && tar -xf "$base_tar" -C /tmp/ab-src-base
    variants+=(base) src[base]=/tmp/ab-src-base
fi

# Builds in parallel, with DeepGEMM's extension.
bash "$peers/build_deepgemm.sh" > "$logs/build_deepgemm.log" 2>&1 &
dg_pid=$!
pids=()
for v in "${variants[@]}"; do
    targets=(--target tessera)
    [ "$v" != base ] && targets+=(${GPU_TESTS-gpu_gemm_fp8})
    [ "$v" != base ] && { [ -n "${PROFILE:-}" ] || [ -n "${PLANS:-}" ]; } && targets+=(tessera_cli)
    { cmake -S "${src[$v]}" -B "/tmp/ab-build-$v" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        ${AB_INSTANCES:+"-DTESS_INSTANCES=$AB_INSTANCES"} &&
        cmake --build "/tmp/ab-build-$v" -j 16 "${targets[@]}"; } > "$logs/build-$v.log" 2>&1 &
    pids+=($!)
done
# A variant whose build fails (a patch that spills, say) is dropped with its
# errors shown; the others go on. Without "new" there is nothing to compare.
built=()
for i in "${!variants[@]}"; do
    if wait "${pids[$i]}"; then
        built+=("${variants[$i]}")
    else
        echo "build of ${variants[$i]} failed, dropped:"
        grep -E "error|FAILED" "$logs/build-${variants[$i]}.log" | head -8
    fi
done
variants=("${built[@]}")
[ "${variants[0]:-}" = new ] || { echo "no build of new: nothing to compare"; exit 1; }
wait $dg_pid || { echo "DeepGEMM's build failed:"; tail -8 "$logs/build_deepgemm.log"; exit 1; }
echo "== builds done ($SECONDS s)"

# DeepGEMM's JIT kernels for the cases, compiled in parallel (as .peers/run.sh does).
for i in 0 1 2 3 4 5 6 7; do
    timeout 200 python3 "$peers/fp8.py" --warmup-only --shard "$i/8" ${fp8_args[@]+"${fp8_args[@]}"} > "$logs/warm_$i.log" 2>&1 &
done
wait
echo "== JIT warm ($SECONDS s): $(cat "$logs"/warm_*.log | grep -c '^warm ok') ok, $(cat "$logs"/warm_*.log | grep -c '^warm FAIL') failed"

if [ -n "${PROFILE:-}" ]; then
    read -r pm pn pk <<< "$PROFILE"
    sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats
              --section WarpStateStats --section SourceCounters)
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    # --clock-control none: we never change the GPU's clocks.
    "$ncu" --clock-control none --kernel-name regex:sm90_fp8_gemm --launch-skip 2 --launch-count 1 "${sections[@]}" \
        --export "$logs/dg" --force-overwrite python3 "$peers/fp8.py" --filter "dense m=$pm n=$pn k=$pk" --no-torch \
        --no-tessera --reps 3 --warmup 2 > "$logs/ncu-dg.log" 2>&1
    "$ncu" --clock-control none --kernel-name regex:gemm_sm90 --launch-skip 3 --launch-count 1 "${sections[@]}" \
        --export "$logs/tessera" --force-overwrite /tmp/ab-build-new/bin/tessera bench gemm --providers=tessera \
        --verify=false --rounds=1 --warmup-iterations=3 --profiling-iterations=1 --A=e4m3:row --B=e4m3:col \
        --D=bf16:row --scale-a=block1x128 --scale-b=block128x128 --m="$pm" --n="$pn" --k="$pk" > "$logs/ncu-tessera.log" 2>&1
    for who in dg tessera; do
        [ -f "$logs/$who.ncu-rep" ] || { echo "profile $who: no report"; tail -3 "$logs/ncu-$who.log"; continue; }
        "$ncu" --import "$logs/$who.ncu-rep" --page details > "$logs/$who-details.txt" 2>&1
        "$ncu" --import "$logs/$who.ncu-rep" --page source --csv --print-source sass > "$logs/$who-sass.csv" 2>&1
        { grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Issued Warp Per Scheduler" "$logs/$who-details.txt"
          python3 dev/ncu_stalls.py "$logs/$who-sass.csv" --top 25; } > "$logs/profile-$who.txt"
    done
    cat "$logs"/profile-*.txt > "$out/profile.txt"
    tar -C "$logs" -czf "$out/profile-reports.tgz" dg-sass.csv tessera-sass.csv dg-details.txt tessera-details.txt 2>/dev/null
    echo "== profiles ($SECONDS s)"; head -4 "$logs/profile-dg.txt" "$logs/profile-tessera.txt" 2>/dev/null
fi

if [ -n "${PLANS:-}" ]; then
    pv=new
    for v in "${variants[@]}"; do [ "$v" != base ] && pv=$v; done
    mkdir -p "$logs/plans"
    IFS=';' read -ra problems <<< "$PLANS"
    for prob in "${problems[@]}"; do
        read -r qm qn qk <<< "$prob"
        for kind in ${PLAN_KINDS:-fp8 bf16}; do
            flags=(--A=bf16:row --B=bf16:col --D=bf16:row)
            [ $kind = fp8 ] && flags=(--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128)
            csv="$logs/plans/$kind-$qm-$qn-$qk.csv"
            timeout 90 "/tmp/ab-build-$pv/bin/tessera" bench gemm "${flags[@]}" --m="$qm" --n="$qn" --k="$qk" \
                --plan=all --output="$csv" > /dev/null 2>&1
            echo "== $pv $kind ${qm}x${qn}x${qk}: fastest plans (TF/s)"
            grep -v '^#' "$csv" | awk -F, 'NR > 1 {print $21, $19}' | sort -rn | head -5
        done
    done
    tar -C "$logs" -czf "$out/plans.tgz" plans
fi

lib() { echo "/tmp/ab-build-$1/lib/libtessera.so"; }
for v in ${TEST_VARIANTS:-${variants[@]}}; do
    [ "$v" = base ] && continue
    for t in ${GPU_TESTS-gpu_gemm_fp8}; do
        TESS_TRIALS=${TESS_TRIALS:-2} timeout 120 "/tmp/ab-build-$v/tests/$t" > "$logs/$t-$v.log" 2>&1
        echo "$t $v rc=$? $(tail -1 "$logs/$t-$v.log") ($SECONDS s)"
    done
done | tee "$out/tests.txt"
# ROUNDS > 1: fp8.py again per variant, the variants' order reversed every
# other round (a paired, interleaved timing: each variant's ratio to
# DeepGEMM is the median over rounds, the single call's 1-3% scatter
# averaged out); round 1's CSVs keep their names, the others go in
# fp8-rounds.tgz, and the medians are printed last.
rounds=${ROUNDS:-1}
mkdir -p "$logs/rounds"
for ((r = 1; r <= rounds; r++)); do
    order=("${variants[@]}")
    if [ $((r % 2)) = 0 ]; then order=(); for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done; fi
    for v in "${order[@]}"; do
        [ $SECONDS -lt "$budget" ] || { echo "fp8 $v round $r: skipped (budget)"; continue; }
        csv="$out/fp8-$v.csv"; [ $r -gt 1 ] && csv="$logs/rounds/fp8-$v-r$r.csv"
        TESSERA_LIBRARY=$(lib "$v") TESSERA_COMMIT=$v timeout 150 python3 "$peers/fp8.py" --no-torch --csv "$csv" \
            ${fp8_args[@]+"${fp8_args[@]}"} > "$logs/fp8-$v.log" 2>&1
        echo "fp8 $v round $r rc=$? ($SECONDS s)"
    done
done
if [ "$rounds" -gt 1 ]; then
    tar -C "$logs/rounds" -czf "$out/fp8-rounds.tgz" . 2>/dev/null
    python3 - "$out" "$logs/rounds" "${variants[@]}" <<'PY'
import csv, glob, math, os, statistics, sys
out, rounds_dir, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
def ratios(path):
    with open(path) as f:
        rows = csv.DictReader(l for l in f if not l.startswith("#"))
        return {(r["section"], r["case"]): float(r["deepgemm_ms"]) / float(r["tessera_ms"])
                for r in rows if r.get("tessera_ms") and r.get("deepgemm_ms")}
for v in variants:
    files = [os.path.join(out, f"fp8-{v}.csv")] + sorted(glob.glob(os.path.join(rounds_dir, f"fp8-{v}-r*.csv")))
    runs = [ratios(f) for f in files if os.path.exists(f)]
    cases = set.intersection(*(set(r) for r in runs)) if runs else set()
    med = {c: statistics.median(r[c] for r in runs) for c in cases}
    by = {}
    for (section, _), x in med.items():
        by.setdefault(section, []).append(x)
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    parts = ", ".join(f"{s} {geo(xs):.3f}x ({len(xs)})" for s, xs in sorted(by.items()))
    print(f"{v}: median of {len(runs)} rounds, tessera/DeepGEMM geomean: {parts}, all {geo(list(med.values())):.3f}x")
PY
fi
if [ "${SUSTAINED:-1}" != 0 ]; then
    for v in "${variants[@]}"; do
        [ "$v" = base ] && continue
        [ $((SECONDS + 70)) -lt "$budget" ] || { echo "sustained $v: skipped (budget)"; continue; }
        TESSERA_LIBRARY=$(lib "$v") TESSERA_COMMIT=$v timeout 120 python3 "$peers/sustained.py" --no-torch \
            --csv "$out/sustained-$v.csv" --smi-log "$logs/smi-$v.csv" > "$logs/sustained-$v.log" 2>&1
        echo "sustained $v rc=$? ($SECONDS s)"; grep '^SUMMARY' "$logs/sustained-$v.log"
    done
fi
for v in "${variants[@]}"; do
    echo "$v: $(grep '^SUMMARY' "$logs/fp8-$v.log" 2>/dev/null | tail -1)"
done
