set -uo pipefail
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release > /tmp/cfg.log 2>&1
cmake --build build-dev -j 16 --target tessera_cli > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
echo "built $SECONDS s"
for shape in "4096 32768 512" "4096 32768 512" "1024 32768 512" "4096 4096 512" "4096 32768 1024" "256 8192 512" "4096 7168 2048"; do
  read -r m n k <<< "$shape"
  timeout 120 build-dev/bin/tessera bench gemm --A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128 \
    --m=$m --n=$n --k=$k --plan=all --providers=tessera --warmup-iterations=1 --profiling-iterations=2 --rounds=1 \
    --output=$OUT/plans-$m-$n-$k.csv > /tmp/o.log 2>&1
  echo "== $m x $n x $k rc=$?"
  python3 - "$OUT/plans-$m-$n-$k.csv" <<'PY'
import csv,sys
rows=[r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
h=rows[0]; 
ei=[i for i,x in enumerate(h) if 'err' in x.lower()]; pi=[i for i,x in enumerate(h) if 'plan' in x.lower()]
print(h[ei[0]], h[pi[0]])
for r in rows[1:]:
    e=float(r[ei[0]]) if r[ei[0]] not in ('','nan') else float('nan')
    if not e < 4e-3: print("  BAD", r[ei[0]], r[pi[0]])
print("  plans:", len(rows)-1, "max err", max(float(r[ei[0]]) for r in rows[1:] if r[ei[0]] not in ('','nan')))
PY
done
