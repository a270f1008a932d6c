#!/usr/bin/env bash
# 8 episodes at once through the TRL and verl adapters against `kagent serve` evaluating real
# KernelBench problems on the GPU, against one episode alone (issue 28: under 2x), one command on
# a GPU machine (scripts/prepare_carry.sh here first, carry .carry):
#   bash scripts/serve_adapters_gpu.sh [KAGENT]      (gpu_check.sh's suite serve-adapters)
# KAGENT defaults to build-gpu/kagent (gpu_check.sh builds it). One worker per GPU of the machine
# (SERVE_WORKERS to change it); the problems are the first 8 of bench/collect/problems.txt from
# $KAGENT_KERNELBENCH_DIR or .carry/kernelbench-problems; the model's time per answer, which a
# replay lacks, is SERVE_ADAPTERS_MODEL_S (default 15 s). What runs and the summary line:
# bench/serve/adapters_gpu.py. Logs in $OUT (default ./gpu-out): serve_adapters.log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/collect/gpu_env.sh
[ -d .carry/httplib/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/httplib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KAGENT=${1:-build-gpu/kagent}
[ -x "$KAGENT" ] || { echo "serve_adapters_gpu: no kagent at $KAGENT (bash scripts/gpu_check.sh builds it)" >&2; exit 1; }
workers=${SERVE_WORKERS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$workers" -ge 1 ] || { echo "serve_adapters_gpu: no GPU (nvidia-smi -L lists none)" >&2; exit 1; }
rm -rf "$OUT/adapters-suite" "$OUT/adapters-data"
"$PY" bench/serve/adapters_gpu.py --kagent "$KAGENT" --kernelbench "$KB" --problems bench/collect/problems.txt \
  --out "$OUT" --episodes 8 --workers "$workers" --model-s "${SERVE_ADAPTERS_MODEL_S:-15}"
