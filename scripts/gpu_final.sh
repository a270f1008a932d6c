#!/usr/bin/env bash
# The GPU checks of issues 4 and 5 in priority order, each under its own time limit, for one
# device call (scripts/gpu_check.sh runs everything but takes longer): the solve example's
# console output, the sandbox and guard suites, the Nsight Compute cross-check and the
# profiler's cost. Logs to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
bash scripts/gpu_check.sh build-only > "$OUT/build.txt" 2>&1
tail -1 "$OUT/build.txt"
export KAGENT_CACHE_DIR=${KAGENT_CACHE_DIR:-/tmp/kagent-cache}
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
export PATH=$(dirname "$PY"):$PATH
rm -rf /tmp/kagent-runs
timeout 120 ./build-gpu/kagent solve examples/elementwise_gelu.py --llm replay:examples/elementwise_gelu.replay.jsonl \
  --runs-dir /tmp/kagent-runs > "$OUT/solve.txt" 2>&1
echo "solve rc=$?"
timeout 200 ./build-gpu/tests/gpu/kagent_sandbox_suite_tests > "$OUT/sandbox.txt" 2>&1
echo "sandbox rc=$?"; grep -E "Sandbox suite:|^sandbox:|note:" "$OUT/sandbox.txt" | head -12
timeout 150 ./build-gpu/tests/gpu/kagent_guard_suite_tests > "$OUT/guard.txt" 2>&1
echo "guard rc=$?"; grep -E "Guard suite:|FAIL" "$OUT/guard.txt" | head -5
OUT=$OUT timeout 90 bash scripts/ncu_check.sh build-gpu > "$OUT/ncu.txt" 2>&1
echo "ncu rc=$?"; tail -8 "$OUT/ncu.txt"
timeout 150 "$PY" bench/profiler/bench_profiler.py --kagent build-gpu/kagent --repeats 1 \
  --out "$OUT/bench_profiler.json" > "$OUT/bench_profiler.txt" 2>&1
echo "bench rc=$?"; tail -12 "$OUT/bench_profiler.txt"
