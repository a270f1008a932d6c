#!/usr/bin/env bash
# The whole GPU check, one command on the H200 machine:
#   bash scripts/gpu_check.sh [suite|gpu|profiler|bench|kbformat|all]
# Builds kagent against the machine's torch; suite: every test (GPU suites included) and the
# shipped examples (eval and solve); gpu: the same without the CPU suites; profiler: the ncu cross-check and the profiler's cost;
# bench: the evaluation benchmark; kbformat: KernelBench-format answers, kagent vs KernelBench's
# eval_kernel_against_ref (bench/eval/bench_kernelbench_format.py); all: everything. Logs go to $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-suite}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
export PATH=$(dirname "$PY"):$PATH
export KAGENT_CACHE_DIR=${KAGENT_CACHE_DIR:-/tmp/kagent-cache}
# What this machine lacks travels in .carry (scripts/prepare_carry.sh, run beforehand).
[ -d .carry/kernelbench-problems ] && export KAGENT_KERNELBENCH_DIR=$PWD/.carry/kernelbench-problems

{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
  nvcc --version | tail -1; nproc
} 2>&1 | tee "$OUT/machine.txt"

echo "== build"
start=$(date +%s)
extra=()
# Without libssl-dev there, use the carried headers and the runtime libcrypto.so.3.
if [ ! -f /usr/include/openssl/sha.h ] && [ -d .carry/include/openssl ]; then
  crypto=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so* 2>/dev/null | head -1)
  extra+=(-DOPENSSL_INCLUDE_DIR=$PWD/.carry/include -DOPENSSL_CRYPTO_LIBRARY=$crypto -DOPENSSL_SSL_LIBRARY=$crypto)
fi
# (Debian's cpp-httplib is not header-only, so the LLM server tests are skipped there: CI runs them.)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY" "${extra[@]}" > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" -- -k 0 >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s"
# Keep going: a target that failed to build shows up as a failed test below.
[ $rc -ne 0 ] && grep -E "error|FAILED" "$OUT/build.log" | head -20
[ -x build-gpu/kagent-worker ] || exit 1

if [ "$what" = suite ] || [ "$what" = gpu ] || [ "$what" = all ]; then
echo "== tests"
# CPU suites in parallel (CI runs them too: `gpu` skips them); GPU suites alone, so nothing
# else disturbs their timings.
trc=0
: > "$OUT/ctest.log"
if [ "$what" != gpu ]; then
  ctest --test-dir build-gpu --output-on-failure --timeout 600 -LE gpu -j 8 > "$OUT/ctest.log" 2>&1
  trc=$?
fi
ctest --test-dir build-gpu --output-on-failure --timeout 900 -L gpu -V > "$OUT/ctest_gpu.log" 2>&1
grc=$?
cat "$OUT/ctest_gpu.log" >> "$OUT/ctest.log"
trc=$(( trc | grc ))
grep -E "^([0-9]+: )?(ok|FAIL|caught|clean|blocked|skip) |GPU suite:|Guard suite:|Sandbox suite:|profiler gpu:|range profiler:|Solve replay:|SKIPPED|tests passed|tests failed|Failed|\*\*\*" "$OUT/ctest.log" | head -90
echo "ctest rc=$trc"

echo "== example"
./build-gpu/kagent eval examples/gemm_bias_relu.py examples/gemm_bias_relu.cu 2>&1 | tee "$OUT/example.txt"

echo "== solve example (the README's console output)"
rm -rf /tmp/kagent-runs
./build-gpu/kagent solve examples/elementwise_gelu.py --llm replay:examples/elementwise_gelu.replay.jsonl \
  --runs-dir /tmp/kagent-runs 2>&1 | tee "$OUT/solve.txt"

fi
trc=${trc:-0}

if [ "$what" = profiler ] || [ "$what" = all ]; then
  echo "== profiler: Nsight Compute cross-check and the profiler's cost"
  OUT=$OUT bash scripts/ncu_check.sh build-gpu 2>&1 | tail -25
  ./build-gpu/profiler_cost --json "$OUT/profiler_cost.json" 2>&1 | tee "$OUT/profiler_cost.txt"
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  echo "== bench"
  # Extra arguments go to the benchmark (e.g. --kb-twins); the whole call must stay under 10 minutes.
  "$PY" bench/eval/bench_eval.py --kagent build-gpu/kagent --out "$OUT/bench_eval.json" "${@:2}" 2>&1 | tee "$OUT/bench_eval.txt"
fi
if [ "$what" = kbformat ] || [ "$what" = all ]; then
  echo "== kbformat"
  KAGENT_BENCH_COMMAND="bash scripts/gpu_check.sh kbformat" \
    "$PY" bench/eval/bench_kernelbench_format.py --kagent build-gpu/kagent --out "$OUT" "${@:2}" 2>&1 |
    tee "$OUT/bench_kernelbench_format.txt"
fi
exit $trc
