# Sourced by the device scripts that time every plan of a problem
# (`tessera bench gemm --plan=all`): plan_table FILE N KEEP prints the
# rows of FILE (that tool's output) as "problem ms TFLOP/s xratio plan",
# fastest first, the N fastest and every row whose plan matches the
# extended regex KEEP.
plan_table() {
    grep -E " (cublas|tessera) " "$1" | sed -E 's/  +/ /g' |
        awk '{n = ""; for (i = 1; i <= NF; i++) { if ($i == "ms") t = $(i - 1); if ($i == "TFLOP/s") f = $(i - 1);
              if ($i ~ /^x[0-9.]/) x = $i; if ($i ~ /^(sm90|gemv|cublasLt)/) n = $i }; print $1, t, f, x, n}' |
        sort -k2n | awk -v n="$2" -v keep="$3" '{c++; if (c <= n || $5 ~ keep) print}'
}
