#!/usr/bin/env bash
# The memory sweep on a GPU machine (bench/memory/sweep.py): the 50 level-1/2 problems with the
# largest footprint at their official sizes, then native ReLU and Softmax kernels.
#   bash bench/memory/sweep.sh KAGENT          logs and tables in $OUT (default ./gpu-out)
# KernelBench from KAGENT_KERNELBENCH_DIR, else .carry/kernelbench-problems, else ../shared/kernelbench.
set -uo pipefail
cd "$(dirname "$0")/../.."
# ${1:?} outside $(...): inside, it would end only the subshell and the script would go on.
KAGENT=${1:?usage: sweep.sh KAGENT}
KAGENT=$(realpath "$KAGENT")
OUT=${OUT:-./gpu-out}
KB=${KAGENT_KERNELBENCH_DIR:-}
[ -z "$KB" ] && { [ -d .carry/kernelbench-problems ] && KB=.carry/kernelbench-problems || KB=../shared/kernelbench; }
exec python3 bench/memory/sweep.py --kagent "$KAGENT" --kernelbench "$(realpath "$KB")" --out "$OUT" \
  --deadline "${SWEEP_DEADLINE:-480}" --part "${SWEEP_PART:-all}"
