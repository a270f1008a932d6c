#!/usr/bin/env bash
# The GPU checks for short device sessions, in calls of under 10 minutes each:
#   bash scripts/gpu_final.sh part1   guard suite, Nsight Compute cross-check, profiler cost, sandbox probes
#   bash scripts/gpu_final.sh diag    a quick look at the side-stream guard, ncu and the profiler's cost
#   bash scripts/gpu_final.sh part2   sandbox suite, GPU verdict suite, timer and profiler GPU tests, solve replay
#   bash scripts/gpu_final.sh part3   the guard suite whole, the profiler's cost on the larger examples
# (scripts/gpu_check.sh runs everything but takes longer.) Each part builds first (incremental
# when the machine is still warm). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
part=${1:-part1}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
bash scripts/gpu_check.sh build-only > "$OUT/build.txt" 2>&1
grep -E "build rc" "$OUT/build.txt"
export KAGENT_CACHE_DIR=${KAGENT_CACHE_DIR:-/tmp/kagent-cache}
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
export PATH=$(dirname "$PY"):$PATH
B=./build-gpu
S=$(date +%s)
t() { echo "[$(( $(date +%s) - S )) s]"; }

case "$part" in
part1)
  timeout 170 $B/tests/gpu/kagent_guard_suite_tests > "$OUT/guard.txt" 2>&1
  echo "guard rc=$? $(t)"; grep -E "Guard suite:|^FAIL" "$OUT/guard.txt" | sort -u | head -6
  grep -E "side_stream" "$OUT/guard.txt" | head -3 | cut -c1-400
  grep -E "^  log:" "$OUT/guard.txt" | head -12
  OUT=$OUT timeout 100 bash scripts/ncu_check.sh build-gpu > "$OUT/ncu.txt" 2>&1
  echo "ncu rc=$? $(t)"; tail -6 "$OUT/ncu.txt"
  timeout 200 $B/profiler_cost --repeats 4 --fresh 1 --json "$OUT/profiler_cost.json" > "$OUT/profiler_cost.txt" 2>&1
  echo "profiler_cost rc=$? $(t)"; cat "$OUT/profiler_cost.txt"
  BUILD=build-gpu timeout 60 bash scripts/sandbox_diag.sh 2>&1 | grep -E "^probe|^===|^exit" | head -30 > "$OUT/sandbox_diag.txt"
  echo "sandbox_diag $(t)"; grep "^probe" "$OUT/sandbox_diag.txt"
  ;;
diag)
  # A quick look: the side-stream guard's timeline, the ncu cross-check, the profiler's cost on two examples.
  KAGENT_GUARD_TIMELINE=1 KAGENT_GUARD_SUITE_ONLY=side_stream_softmax,softmax_correct timeout 120 \
    $B/tests/gpu/kagent_guard_suite_tests > "$OUT/guard.txt" 2>&1
  echo "guard rc=$? $(t)"; grep -E "^(ok|FAIL) |  log:" "$OUT/guard.txt" | head -30 | cut -c1-300
  OUT=$OUT timeout 100 bash scripts/ncu_check.sh build-gpu > "$OUT/ncu.txt" 2>&1
  echo "ncu rc=$? $(t)"; grep -E "^probe" "$OUT/ncu.txt"; tail -6 "$OUT/ncu.txt"
  KAGENT_PROFILER_KEEP_SESSION=0 timeout 100 $B/profiler_cost --repeats 3 --fresh 0 --examples elementwise_gelu \
    > "$OUT/profiler_cost.txt" 2>&1
  echo "profiler_cost (session per profile) rc=$? $(t)"; cat "$OUT/profiler_cost.txt"
  timeout 100 $B/profiler_cost --repeats 3 --fresh 0 --examples elementwise_gelu \
    > "$OUT/profiler_cost_keep.txt" 2>&1
  echo "profiler_cost (session kept) rc=$? $(t)"; cat "$OUT/profiler_cost_keep.txt"
  ;;
part2)
  timeout 150 $B/tests/gpu/kagent_sandbox_suite_tests > "$OUT/sandbox.txt" 2>&1
  echo "sandbox rc=$? $(t)"; grep -E "Sandbox suite:|cuda_fallback|probe" "$OUT/sandbox.txt" | head -6 | cut -c1-400
  timeout 280 $B/tests/gpu/kagent_gpu_suite_tests > "$OUT/gpu_suite.txt" 2>&1
  echo "gpu suite rc=$? $(t)"; grep -E "GPU suite:|^FAIL" "$OUT/gpu_suite.txt" | head -6
  timeout 60 $B/tests/gpu/kagent_timer_gpu_tests > "$OUT/timer.txt" 2>&1
  echo "timer rc=$? $(t)"; tail -3 "$OUT/timer.txt"
  timeout 60 $B/tests/gpu/kagent_profiler_gpu_tests > "$OUT/profiler_gpu.txt" 2>&1
  echo "profiler gpu rc=$? $(t)"; grep -E "profiler gpu:|test cases" "$OUT/profiler_gpu.txt" | head -4
  rm -rf /tmp/kagent-runs
  timeout 90 $B/kagent solve examples/elementwise_gelu.py --llm replay:examples/elementwise_gelu.replay.jsonl \
    --runs-dir /tmp/kagent-runs > "$OUT/solve.txt" 2>&1
  echo "solve rc=$? $(t)"; tail -4 "$OUT/solve.txt"
  ;;
part3)
  # The guard suite whole, and the profiler's cost on the examples part1 had no time for.
  timeout 170 $B/tests/gpu/kagent_guard_suite_tests > "$OUT/guard.txt" 2>&1
  echo "guard rc=$? $(t)"; grep -E "Guard suite:|^FAIL|side_stream_softmax|leftover_private" "$OUT/guard.txt" | sort -u | head -8 | cut -c1-300
  timeout 60 $B/tests/gpu/kagent_profiler_gpu_tests > "$OUT/profiler_gpu.txt" 2>&1
  echo "profiler gpu rc=$? $(t)"; grep -E "profiler gpu:|range profiler:|test cases" "$OUT/profiler_gpu.txt" | head -4
  timeout 200 $B/profiler_cost --repeats 4 --fresh 1 --examples gemm_bias_relu,conv_block \
    --json "$OUT/profiler_cost.json" > "$OUT/profiler_cost.txt" 2>&1
  echo "profiler_cost rc=$? $(t)"; cat "$OUT/profiler_cost.txt"
  ;;
*) echo "usage: gpu_final.sh part1|diag|part2|part3" >&2; exit 2 ;;
esac
