#!/usr/bin/env bash
# FLOPs, DRAM bytes, intensity and roofline position in kagent's profile against Nsight Compute,
# on the four examples and two KernelBench problems, one command on the GPU machine:
#   bash scripts/roofline_check.sh [BUILD_DIR]        (default build-gpu, else build)
# For each (problem, candidate):
# 1. `kagent eval --json --no-timing --no-baselines`: the verdict, the SASS summary and the
#    profile with its per-kernel `roofline` (scripts/roofline_check.py reads it);
# 2. the same compiled candidate called by scripts/roofline_check.py under ncu (--clock-control
#    none, --cache-control none after kagent's L2 flush), twice: DRAM bytes and duration alone (one
#    pass, as scripts/ncu_check.sh), then the FLOP counters and the roofline's peaks;
# 3. per own kernel, both side by side; exit 1 when FLOPs, bytes or intensity differ by more
#    than 10% or the side of the ridge differs.
# Logs: $OUT/roofline/ (default ./gpu-out), the summary in $OUT/roofline_check.txt. Needs hardware
# counter permission (ncu and CUPTI alike) and about 5 minutes with warm compile caches.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
[ -x "$BUILD/kagent" ] || BUILD=build
[ -x "$BUILD/kagent" ] || { echo "roofline_check: no $BUILD/kagent; run scripts/gpu_check.sh first" >&2; exit 2; }
OUT=${OUT:-$PWD/gpu-out}
LOGS=$OUT/roofline
mkdir -p "$LOGS"
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
export PATH=$(dirname "$PY"):$PATH
export KAGENT_CACHE_DIR=${KAGENT_CACHE_DIR:-/tmp/kagent-cache}
# The roofline needs the FLOP counters: a second counter pass (the worker collects one by default).
export KAGENT_PROFILER_PASSES=2
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
KB=${KAGENT_KERNELBENCH_DIR:-}
[ -z "$KB" ] && [ -d .carry/kernelbench-problems ] && KB=$PWD/.carry/kernelbench-problems
[ -z "$KB" ] && KB=$PWD/../shared/kernelbench

cases=(
  "elementwise_gelu examples/elementwise_gelu.py examples/elementwise_gelu.cu"
  "row_softmax examples/row_softmax.py examples/row_softmax.cu"
  "gemm_bias_relu examples/gemm_bias_relu.py examples/gemm_bias_relu.cu"
  "conv_block examples/conv_block.py examples/conv_block.cu"
  "kb1_square_matmul $KB/level1/1_Square_matrix_multiplication_.py tests/gpu/kernels/kb_square_matmul.cu"
  "kb88_mingpt_gelu $KB/level1/88_MinGPTNewGelu.py tests/gpu/kernels/kb_mingpt_gelu.cu"
)

{
  echo "== roofline check: kagent $BUILD/kagent, ncu ${NCU:-not found}, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  [ -n "$NCU" ] || { echo "no ncu: nothing to compare against"; exit 2; }
  metrics=$("$PY" scripts/roofline_check.py metrics)
  rc=0
  for c in "${cases[@]}"; do
    read -r label problem candidate <<< "$c"
    start=$(date +%s)
    "$BUILD/kagent" eval "$problem" "$candidate" --json --no-timing --no-baselines > "$LOGS/$label.json" 2> "$LOGS/$label.err"
    read -r status so op kernels < <("$PY" -c '
import json, re, sys
r = json.load(open(sys.argv[1]))
c = r.get("compile") or {}
own = [k["mangled"] for k in (r.get("profile") or {}).get("kernels", []) if k.get("own")]
print(r.get("status"), c.get("artifact") or "-", c.get("op_name") or "-", "|".join(re.escape(k) for k in own) or "-")
' "$LOGS/$label.json" 2>/dev/null || echo "unreadable - - -")
    if [ "$status" != correct ] || [ "$kernels" = - ]; then
      echo "$label: kagent eval gave '$status' (no own kernel profiled); see $LOGS/$label.err"
      rc=1
      continue
    fi
    # The profile's text as the model sees it, for the record.
    "$PY" -c 'import json,sys; print((json.load(open(sys.argv[1])).get("profile") or {}).get("text",""))' "$LOGS/$label.json" > "$LOGS/$label.profile.txt"
    ncu_ok=1
    for part in bytes flops; do
      if [ $part = bytes ]; then m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum; else m=$metrics; fi
      "$NCU" --clock-control none --cache-control none --print-units base --csv --kernel-name-base mangled \
        --print-kernel-base mangled --kernel-name "regex:^($kernels)\$" --metrics "$m" \
        "$PY" scripts/roofline_check.py run "$problem" "$so" "$op" > "$LOGS/$label.ncu_$part.csv" 2> "$LOGS/$label.ncu.err" ||
        { echo "$label: ncu failed:"; tail -3 "$LOGS/$label.ncu.err"; grep -m3 "==ERROR==" "$LOGS/$label.ncu_$part.csv"; ncu_ok=0; rc=1; break; }
    done
    [ $ncu_ok = 1 ] || continue
    # One CSV for the comparison: bytes and duration from the one-pass run, FLOPs and peaks from the other.
    grep -E '^"' "$LOGS/$label.ncu_flops.csv" > "$LOGS/$label.ncu.csv"
    grep -E '^"' "$LOGS/$label.ncu_bytes.csv" | tail -n +2 >> "$LOGS/$label.ncu.csv"
    "$PY" scripts/roofline_check.py compare "$LOGS/$label.json" "$LOGS/$label.ncu.csv" "$label" || rc=1
    grep -E "^roofline " "$LOGS/$label.profile.txt" | sed "s/^/$label profile: /"
    echo "$label: $(( $(date +%s) - start )) s"
  done
  echo "roofline check rc=$rc"
  exit $rc
} 2>&1 | tee "$OUT/roofline_check.txt"
exit "${PIPESTATUS[0]}"
