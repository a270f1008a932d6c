#!/usr/bin/env bash
# The GPU part of `kagent serve`'s load test, one command on a GPU machine (run
# scripts/prepare_carry.sh here first and carry .carry):
#   bash scripts/serve_gpu.sh [COLLECTION]
# Builds kagent and the load tool in build-gpu, then runs 200 steps with real evaluation
# (correctness, timing, profile) from 16 clients, one GPU worker per GPU of the machine
# (SERVE_WORKERS to change it), over the 40 KernelBench problems of bench/collect/problems.txt
# at their official sizes: episodes of two turns, the answers of bench/collect/make_replay.py (a
# reference-wrapping ModelNew, then a Triton kernel or the reference shifted). GPU-bound
# throughput and step latency. Then, on a collection evaluated on the GPU (COLLECTION, or the one
# bench/collect/gpu_collect.sh left in $OUT/collect-gpu/collection), kagent curate and kagent
# rollout. Logs go to $OUT (or ./gpu-out): build.log, serve_gpu.txt, curated/, rollout/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/collect/gpu_env.sh
# The carried cpp-httplib and the brotli libraries it needs.
[ -d .carry/httplib/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/httplib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
extra=()
if [ ! -f /usr/include/openssl/sha.h ] && [ -d .carry/include/openssl ]; then
  crypto=$(find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name 'libcrypto.so*' | sort | head -1)
  extra+=("-DOPENSSL_INCLUDE_DIR=$PWD/.carry/include" "-DOPENSSL_CRYPTO_LIBRARY=$crypto" "-DOPENSSL_SSL_LIBRARY=$crypto")
fi
start=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY" "${extra[@]}" > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" --target kagent kagent-worker serve_load >> "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s" | tee "$OUT/serve_gpu.txt"
if [ $rc -ne 0 ]; then grep -E "error|FAILED|httplib" "$OUT/build.log" | head -20; exit 1; fi
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee -a "$OUT/serve_gpu.txt"
workers=${SERVE_WORKERS:-$(nvidia-smi -L | grep -c '^GPU')}
D=$OUT/serve-problems
"$PY" bench/collect/make_replay.py "$KB" bench/collect/problems.txt "$D" --samples 1 | tee -a "$OUT/serve_gpu.txt"
args=(--gpu --workers "$workers" --clients 16 --steps 200 --turns 2 --problems "$D/suite.txt" --replay "$D/replay.jsonl")
echo "== build-gpu/bench/serve/serve_load ${args[*]}" | tee -a "$OUT/serve_gpu.txt"
timeout -k 10 420 build-gpu/bench/serve/serve_load "${args[@]}" 2>&1 | tee -a "$OUT/serve_gpu.txt"
echo "serve_load rc=${PIPESTATUS[0]}" | tee -a "$OUT/serve_gpu.txt"

COLLECTION=${1:-$OUT/collect-gpu/collection}
if [ -f "$COLLECTION/manifest.json" ]; then
  echo "== kagent curate / rollout on $COLLECTION" | tee -a "$OUT/serve_gpu.txt"
  build-gpu/kagent curate "$COLLECTION" --out "$OUT/curated" -k 2 --single-per-fused 1 2>&1 | tee -a "$OUT/serve_gpu.txt"
  build-gpu/kagent rollout "$COLLECTION" --out "$OUT/rollout" --reward drkernel --gamma 0.4 --group-norm 2>&1 | tee -a "$OUT/serve_gpu.txt"
  "$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["counts"]))' "$OUT/curated/curate.json" 2>&1 | tee -a "$OUT/serve_gpu.txt"
else
  echo "(no collection at $COLLECTION: curate/rollout on GPU verdicts skipped)" | tee -a "$OUT/serve_gpu.txt"
fi
