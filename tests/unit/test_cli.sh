#!/usr/bin/env bash
# The `tessera` tool: usage errors exit 2 with one sentence, `version` prints
# the version, `info` either describes a GPU (exit 0) or says in one line
# that there is none (non-zero exit); every option a command's --help lists
# is accepted, `tessera --help` lists them all, unknown options are refused,
# the spellings scripts use still parse (bench gemm --dry-run shows how), and
# every GEMM suite in bench/suites parses.
#   bash tests/unit/test_cli.sh TOOL REPO_ROOT
set -u
tool=$1 root=$2
fail=0
check() { if ! eval "$1"; then echo "check failed: $1"; fail=1; return 1; fi; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

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
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --hold 2>&1); rc=$?
check '[ $rc -eq 2 ] && [[ "$out" == *"--hold needs a value"* ]]'

# The options a command's --help lists (the names after "--").
options_of() { "$tool" "$@" --help | sed -nE 's/^  (-h, )?--([A-Za-z][A-Za-z0-9-]*).*/\2/p'; }

# Each listed option with a value it takes, as a whole command line, and the
# exit code it must give: 0 (--dry-run, the layout calculator, --help) or 1
# (info and bench copy asked for device 4096, which no machine has: the
# options were accepted, then the device refused). Every option --help lists
# needs a line here, and every line an option --help lists.
gemm="bench gemm --m=64 --n=64 --k=64 --dry-run"
copy="bench copy --device=4096"
expr="(4,2):(2,1)"
declare -A sample=(
  [info:device]="1 info --device=4096"
  [info:help]="0 info --help"
  [bench copy:bytes]="1 $copy --bytes=1K"
  [bench copy:iterations]="1 $copy --iterations=3"
  [bench copy:device]="1 $copy --device 4096"
  [bench copy:help]="0 $copy --help"
  [bench gemm:m]="0 $gemm --m=1,2:8:2"
  [bench gemm:n]="0 $gemm --n 128"
  [bench gemm:k]="0 $gemm --k=4096"
  [bench gemm:A]="0 $gemm --A=e4m3:row"
  [bench gemm:B]="0 $gemm --B=f16:column"
  [bench gemm:C]="0 $gemm --C=f32:col"
  [bench gemm:D]="0 $gemm --D=f32:row"
  [bench gemm:alpha]="0 $gemm --alpha=0.5"
  [bench gemm:beta]="0 $gemm --beta=1"
  [bench gemm:batch]="0 $gemm --batch=3"
  [bench gemm:scale-a]="0 $gemm --scale-a=block1x128"
  [bench gemm:scale-b]="0 $gemm --scale-b=block128x128"
  [bench gemm:fast-accum]="0 $gemm --fast-accum"
  [bench gemm:bias]="0 $gemm --bias=columns"
  [bench gemm:bias-type]="0 $gemm --bias=rows --bias-type=f32"
  [bench gemm:act]="0 $gemm --act=gelu_tanh"
  [bench gemm:residual]="0 $gemm --residual"
  [bench gemm:aux]="0 $gemm --act=gelu --aux"
  [bench gemm:gate]="0 $gemm --gate=interleaved"
  [bench gemm:gate-limit]="0 $gemm --gate=interleaved --gate-limit=7"
  [bench gemm:out-scale]="0 $gemm --D=e4m3:row --out-scale=block1x128"
  [bench gemm:amax]="0 $gemm --D=e4m3:row --amax"
  [bench gemm:group-size]="0 $gemm --B=int4:col --group-size=64"
  [bench gemm:zeros]="0 $gemm --B=int4:col --zeros"
  [bench gemm:sms]="0 $gemm --sms=66"
  [bench gemm:providers]="0 $gemm --providers=tessera,cublas"
  [bench gemm:plan]="0 $gemm --plan=c2x1_sk"
  [bench gemm:warmup-iterations]="0 $gemm --warmup-iterations=5"
  [bench gemm:profiling-iterations]="0 $gemm --profiling-iterations=30"
  [bench gemm:rounds]="0 $gemm --rounds=2"
  [bench gemm:chain]="0 $gemm --chain=8"
  [bench gemm:hold]="0 $gemm --hold=2.5"
  [bench gemm:verify]="0 $gemm --verify=false"
  [bench gemm:suite]="0 $gemm --suite=$root/bench/suites/dense.txt"
  [bench gemm:output]="0 $gemm --output=$scratch/never.csv"
  [bench gemm:dry-run]="0 $gemm --dry-run"
  [bench gemm:help]="0 $gemm --help"
  [layout:table]="0 layout $expr --table"
  [layout:latex]="0 layout $expr --latex"
  [layout:explain]="0 layout $expr --explain=(1,0)"
  [layout:svg]="0 layout $expr --svg=$scratch/l.svg"
  [layout:atom]="0 layout --atom=wgmma_64x64x16_f32"
  [layout:operand]="0 layout --atom=wgmma_64x64x16_f32 --operand=A"
  [layout:atoms]="0 layout --atoms"
  [layout:help]="0 layout --help"
)
all_help=$("$tool" --help)
declare -A listed=()
for cmd in "info" "bench copy" "bench gemm" "layout"; do
  # shellcheck disable=SC2086
  names=$(options_of $cmd)
  check '[ -n "$names" ]'
  for name in $names; do
    listed["$cmd:$name"]=1
    check '[[ -n "${sample[$cmd:$name]:-}" ]]' || { echo "  (--help lists $cmd --$name; the test has no line for it)"; continue; }
    read -r want words <<< "${sample[$cmd:$name]}"
    # shellcheck disable=SC2086
    out=$("$tool" $words 2>&1); rc=$?
    check '[ $rc -eq $want ] && [[ "$out" != *"unknown option"* ]] && [[ "$out" != *"cannot use"* ]]' ||
      echo "  ($cmd --$name: tessera $words gave $rc: $out)"
    check '[[ "$all_help" == *"--$name"* ]]'
  done
done
for key in "${!sample[@]}"; do
  check '[[ -n "${listed[$key]:-}" ]]' || echo "  (the test has a line for $key, which --help does not list)"
done
check '[ ! -e "$scratch/never.csv" ]'
"$tool" bench gemm --help >/dev/null; rc=$?
check '[ $rc -eq 0 ]'

# Unknown, abbreviated, valueless and value-less-than-needed options are
# refused with one sentence naming them, exit 2.
refused() { # refused WANT WORDS...: exit 2 and one line on stderr containing WANT
  local want=$1 err rc
  shift
  err=$("$tool" "$@" 2>&1 >/dev/null); rc=$?
  check '[ $rc -eq 2 ] && [[ "$err" == *"$want"* ]] && [ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ]' ||
    echo "  (tessera $*: rc $rc: $err)"
}
refused "unknown option '--bogus'" info --bogus
refused "unknown option '--bogus=1'" bench copy --bogus=1
refused "unknown option '--bogus'" bench gemm --m=64 --n=64 --k=64 --bogus
refused "unknown option '--bogus'" layout "$expr" --bogus
refused "unknown option '--bogus'" --bogus
refused "write the option out in full, --providers" bench gemm --m=64 --n=64 --k=64 --prov=tessera
refused "--dry-run takes no value" bench gemm --m=64 --n=64 --k=64 --dry-run=yes
refused "--m needs a value" bench gemm --m
refused "cannot use '--m=64x'" bench gemm --m=64x --n=64 --k=64
refused "cannot use '--A=int4:row'" bench gemm --m=64 --n=64 --k=64 --A=int4:row
refused "cannot use '--B=int4:row'" bench gemm --m=64 --n=64 --k=64 --B=int4:row
refused "cannot use '--group-size=32'" bench gemm --m=64 --n=64 --k=64 --B=int4:col --group-size=32
# a 4-bit B's problems are labelled with their group size and zero points
out=$("$tool" bench gemm --m=1 --n=4096 --k=7168 --B=int4:col --group-size=64 --zeros --dry-run); rc=$?
check '[ $rc -eq 0 ] && [[ "$out" == "1x4096x7168 b1 bf16:row,int4g64z:col->bf16:row"* ]]'
out=$("$tool" bench gemm --m=1 --n=4096 --k=7168 --B=int4 --dry-run); rc=$?
check '[ $rc -eq 0 ] && [[ "$out" == "1x4096x7168 b1 bf16:row,int4g128:col->bf16:row"* ]]'
# --B=bf16:col after an int4 B is a 16-bit B again
out=$("$tool" bench gemm --m=1 --n=64 --k=64 --B=int4:col --B=bf16:col --dry-run); rc=$?
check '[ $rc -eq 0 ] && [[ "$out" == "1x64x64 b1 bf16:row,bf16:col->bf16:row"* ]]'
refused "cannot use '--rounds=10'" bench gemm --m=64 --n=64 --k=64 --rounds=10
refused "unexpected argument 'false'" bench gemm --m=64 --n=64 --k=64 --verify false
refused "--m, --n and --k are required" bench gemm --m=64 --n=64
refused "expected a benchmark name" bench gemmm
refused "one expression at a time" layout "$expr" "$expr"

# The spellings the suites, bench/run and dev/ scripts write parse to what they say.
out=$("$tool" bench gemm --m=1,2 --n=8:24:8 --k 64 --A=e4m3:row --B=e4m3:col --D=f32:col --C=f16:col --beta=1 \
      --scale-a=vec128 --scale-b=blk128x128 --fast-accum --plan=all --hold=2.5 --verify=false --providers=tessera \
      --rounds=2 --chain=8 --warmup-iterations=5 --profiling-iterations=30 --batch 2 --alpha=0.5 --dry-run); rc=$?
check '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | wc -l)" -eq 6 ]'
check '[[ "$out" == "1x8x64 b2 e4m3:row,e4m3:col->f32:col s:1x128,128x128 fast"* ]]'
check '[[ "$out" == *"2x24x64 b2 "* ]] && [[ "$out" == *" C=f16:col alpha=0.5 beta=1 providers=tessera plan=all verify=0 warmup=5 iterations=30 rounds=2 chain=8 hold=2.5"* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --verify --fast-accum=false --providers=cublas --plan=3 --dry-run)
check '[[ "$out" == *"bf16:row,bf16:col->bf16:row "*" C=D alpha=1 beta=0 providers=cublas plan=#3 verify=1 "* ]]'
check '[[ "$out" != *" fast"* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --plan=128x128x128_s6_c1x1_blk --dry-run)
check '[[ "$out" == *"plan=*128x128x128_s6_c1x1_blk "* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --act=silu --residual --dry-run)
check '[[ "$out" == "64x64x64 b1 bf16:row,bf16:col->bf16:row act:silu residual "* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --residual=false --dry-run)
check '[[ "$out" != *"residual"* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --act=gelu_tanh --residual --aux --dry-run)
check '[[ "$out" == "64x64x64 b1 bf16:row,bf16:col->bf16:row act:gelu_tanh residual aux "* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --A=e4m3:row --B=e4m3:col --D=e4m3:row --out-scale=block1x128 --dry-run)
check '[[ "$out" == "64x64x64 b1 e4m3:row,e4m3:col->e4m3:row out:1x128 "* ]]'
out=$("$tool" bench gemm --m=64 --n=64 --k=64 --D=e5m2:row --amax --dry-run)
check '[[ "$out" == "64x64x64 b1 bf16:row,bf16:col->e5m2:row out:tensor amax "* ]]'

# Every GEMM suite parses, over its "#!" defaults as bench/run passes them,
# into as many problems as its lines name (the product of their --m, --n and
# --k lists).
for suite in "$root"/bench/suites/*.txt; do
  grep -q -- '^--' "$suite" || continue # not a `tessera bench gemm` suite (moe.txt is bench/grouped.py's)
  defaults=$(sed -n 's/^#! *//p' "$suite")
  # shellcheck disable=SC2086
  out=$("$tool" bench gemm $defaults --suite="$suite" --dry-run 2>&1); rc=$?
  want=$(sed 's/#.*//' "$suite" | awk 'NF { p = 1; for (i = 1; i <= NF; i++) if ($i ~ /^--[mnk]=/) p *= split($i, v, ","); n += p } END { print n }')
  check '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | wc -l)" -eq "$want" ]' || echo "  ($suite: rc $rc, $want problems: $out)"
done
printf -- '--m=64 --n=64 --k=64\n--m=64 --bogus\n' > "$scratch/bad.txt"
refused "bad.txt:2: unknown option '--bogus'" bench gemm --suite="$scratch/bad.txt" --dry-run
printf -- '--m=64 --n=64 --k=64 --output=x.csv\n' > "$scratch/bad.txt"
refused "bad.txt:1: --output belongs on the command line" bench gemm --suite="$scratch/bad.txt" --dry-run
# A suite's "#!" line holds its defaults, under the command line's options (and each line's over both).
out=$("$tool" bench gemm --suite="$root/bench/suites/tf32.txt" --dry-run)
check '[[ "$out" == "8192x8192x8192 b1 f32:row,f32:col->f32:row "* ]]' || echo "  (tf32 suite alone: $out)"
out=$("$tool" bench gemm --suite="$root/bench/suites/tf32.txt" --D=bf16:row --rounds=2 --dry-run)
check '[[ "$out" == "8192x8192x8192 b1 f32:row,f32:col->bf16:row "*" rounds=2 "* ]]' || echo "  (over --D: $out)"
printf -- '#! --D=f32:row --bogus\n--m=64 --n=64 --k=64\n' > "$scratch/bad.txt"
refused "bad.txt:1: unknown option '--bogus'" bench gemm --suite="$scratch/bad.txt" --dry-run

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
