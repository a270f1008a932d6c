#!/usr/bin/env bash
# Compile time and compiler memory of a native candidate for KernelBench level3/10_ResNet101
# (626 parameters and buffers, passed as one kagent::Params) through `kagent eval`, three runs.
# usage: bench/level3/run.sh [KAGENT]   (default: build/kagent; KernelBench from
# $KAGENT_KERNELBENCH_DIR or ../shared/kernelbench)
set -euo pipefail
cd "$(dirname "$0")/../.."
KAGENT=${1:-build/kagent}
KB=${KAGENT_KERNELBENCH_DIR:-../shared/kernelbench}
python3 bench/level3/compile_bench.py "$KAGENT" "$KB/level3/10_ResNet101.py" bench/level3/resnet101_params.cu \
  --label "kagent::Params" --runs 3
