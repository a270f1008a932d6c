#!/usr/bin/env bash
# Which sandbox layers CUDA tolerates on this machine: evaluates a small correct kernel with each
# layer left out in turn (KAGENT_SANDBOX_DISABLE) and prints the verdict and the sandbox report.
# The worker client steps the filesystem layers down by itself when CUDA sees no device under
# them; this shows why. Needs build-gpu (scripts/gpu_check.sh) or BUILD=dir.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
P=tests/gpu/problems/small_gelu.py
C=tests/gpu/kernels/gelu_correct.cu
ls -la /dev/nvidia* 2>&1 | head -6
id
for cfg in "" "KAGENT_SANDBOX=off" "KAGENT_SANDBOX_DISABLE=landlock" "KAGENT_SANDBOX_DISABLE=mount_ns" \
           "KAGENT_SANDBOX_DISABLE=uid" "KAGENT_SANDBOX_DISABLE=landlock,mount_ns" "KAGENT_SANDBOX_DISABLE=landlock,uid" \
           "KAGENT_SANDBOX_DISABLE=mount_ns,uid" "KAGENT_SANDBOX_DISABLE=landlock,mount_ns,uid"; do
  echo "=== [${cfg:-all layers}]"
  env $cfg "$BUILD/kagent" eval "$P" "$C" --json --no-baselines > /tmp/kagent-diag.json 2>/tmp/kagent-diag.err
  echo "exit $?"
  python3 -c "import json;d=json.load(open('/tmp/kagent-diag.json'));print(d['status'],d.get('reason'),d['message'][:200])" 2>&1
done
