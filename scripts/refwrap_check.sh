#!/usr/bin/env bash
# Reference-wrapping KernelBench-format answers (`class ModelNew(Model): pass`: only the
# problem's own torch ops run) on the problems whose library kernels kagent once took for the
# candidate's own: 3-D convolutions (cuDNN's implicit_convolveNd_sgemm and
# convolveNd_dgrad_float_engine) and fp32 SDPA (the memory-efficient attention kernel). Each
# must be `rejected` / `no_kernel`: no kernel of the answer's own runs.
#   bash scripts/refwrap_check.sh KAGENT          (KernelBench from $KAGENT_KERNELBENCH_DIR)
set -uo pipefail
# ${1:?} outside $(...): inside, it would end only the subshell and the script would go on.
KAGENT=${1:?usage: refwrap_check.sh KAGENT}
KAGENT=$(realpath "$KAGENT")
KB=${KAGENT_KERNELBENCH_DIR:?set KAGENT_KERNELBENCH_DIR to the KernelBench problems}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for p in level1/66_conv_standard_3D__asymmetric_input__asymmetric_kernel.py \
  level1/72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_.py \
  level2/27_Conv3d_HardSwish_GroupNorm_Mean.py level2/78_ConvTranspose3d_Max_Max_Sum.py \
  level1/97_ScaledDotProductAttention.py; do
  cand=$tmp/$(basename "$p")
  { cat "$KB/$p"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$cand"
  "$KAGENT" eval "$KB/$p" "$cand" --json --no-compile-baseline > "$tmp/r.json" 2> "$tmp/err"
  line=$(python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
libs = sorted({k.get("source", "?") for k in (r.get("profile") or {}).get("kernels") or []})
print(r["status"], r.get("reason") or "-", "kernels from:", ",".join(libs) or "-")
PY
)
  case "$line" in "rejected no_kernel"*) pass=$((pass + 1)); mark=ok ;; *) fail=$((fail + 1)); mark=FAIL ;; esac
  printf '%-4s %-80s %s\n' "$mark" "$p" "${line:-no result: $(tail -1 "$tmp/err")}"
done
echo "reference wrappers: $pass rejected (no_kernel), $fail not"
[ "$fail" -eq 0 ]
