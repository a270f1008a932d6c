#!/usr/bin/env bash
# Which sandbox layers CUDA tolerates on this machine. First each layer alone in the worker's
# probe mode (kagent-worker --probe-cuda: the sandbox, then a CUDA device count), then a small
# correct kernel evaluated with layers left out (KAGENT_SANDBOX_DISABLE). The worker probes
# and leaves out the filesystem layers CUDA fails under by itself (sandbox/cuda_probe.h); this
# shows why. Needs build-gpu (scripts/gpu_check.sh) or BUILD=dir.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
P=tests/gpu/problems/small_gelu.py
C=tests/gpu/kernels/gelu_correct.cu
ls -la /dev/nvidia* 2>&1 | head -6
id
ALL=netns,seccomp,notify,landlock,mount_ns,uid
for only in netns seccomp landlock mount_ns uid; do
  off=$(echo ",$ALL," | sed "s/,$only,/,/; s/^,//; s/,$//")
  KAGENT_SANDBOX_DISABLE=$off "$BUILD/kagent-worker" --probe-cuda > /tmp/kagent-probe.txt 2>&1
  echo "probe with only $only: exit $? $(tail -1 /tmp/kagent-probe.txt)"
done
for cfg in "" "KAGENT_SANDBOX=off" "KAGENT_SANDBOX_DISABLE=landlock" "KAGENT_SANDBOX_DISABLE=mount_ns" \
           "KAGENT_SANDBOX_DISABLE=uid" "KAGENT_SANDBOX_DISABLE=landlock,mount_ns" "KAGENT_SANDBOX_DISABLE=landlock,uid" \
           "KAGENT_SANDBOX_DISABLE=mount_ns,uid" "KAGENT_SANDBOX_DISABLE=landlock,mount_ns,uid"; do
  echo "=== [${cfg:-all layers}]"
  env $cfg "$BUILD/kagent" eval "$P" "$C" --json --no-baselines > /tmp/kagent-diag.json 2>/tmp/kagent-diag.err
  echo "exit $?"
  python3 -c "import json;d=json.load(open('/tmp/kagent-diag.json'));print(d['status'],d.get('reason'),d['message'][:200])" 2>&1
done
