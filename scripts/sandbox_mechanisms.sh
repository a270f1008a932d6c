#!/usr/bin/env bash
# Which process-limiting mechanisms CUDA tolerates on this machine, measured (issue 47): a CUDA
# start (torch: a tensor on the GPU and back) plainly, in a pids cgroup of its own (v2 or v1's
# pids hierarchy) under a limit, in a PID namespace, in a user namespace with a mapped uid, and
# in both namespaces. Then `kagent eval` of a small correct kernel with the sandbox section of
# its result, as a user would see it. Needs root and build-gpu (or BUILD=dir).
# usage: bash scripts/sandbox_mechanisms.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
PY=${PY:-python3}
CUDA_START='import torch; x = torch.ones(1 << 20, device="cuda"); print("cuda ok", float(x.sum().item()))'
echo "kernel $(uname -r); uid $(id -u); cgroup of this shell: $(tr '\n' ' ' < /proc/self/cgroup)"
mount | grep -E "cgroup" | sed 's/^/  mount: /'
try() {  # try NAME COMMAND...
  local name=$1
  shift
  local start=$(date +%s%N)
  local out
  out=$(timeout 120 "$@" 2>&1 | tail -1)
  local rc=$?
  printf "mechanism %-28s rc=%s %6d ms  %s\n" "$name" "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))" "$out"
}
try plain "$PY" -c "$CUDA_START"
# A pids cgroup: v2 where the unified hierarchy has the controller, else v1's pids hierarchy.
group=
if grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  echo "+pids" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  group=/sys/fs/cgroup/kagent-mech-$$
elif [ -d /sys/fs/cgroup/pids ]; then
  group=/sys/fs/cgroup/pids/kagent-mech-$$
fi
if [ -n "$group" ] && mkdir "$group" 2>/dev/null; then
  try "cgroup_pids ($group)" bash -c "echo \$\$ > $group/cgroup.procs && echo 200 > $group/pids.max && exec $PY -c '$CUDA_START'"
  try "cgroup_pids fork bomb" bash -c "echo \$\$ > $group/cgroup.procs && echo 30 > $group/pids.max && for i in \$(seq 60); do (sleep 2 &) 2>/dev/null; done; sleep 0.5; echo events: \$(cat $group/pids.events | tr '\n' ' ') current \$(cat $group/pids.current)"
  sleep 2.5
  rmdir "$group" 2>/dev/null || echo "  (the group $group is not empty yet)"
else
  echo "mechanism cgroup_pids: no pids controller to make a group in"
fi
try "pid namespace" unshare --pid --fork --mount-proc "$PY" -c "$CUDA_START"
try "user namespace (mapped root)" unshare --user --map-root-user "$PY" -c "$CUDA_START"
try "user+pid namespaces" unshare --user --map-root-user --pid --fork "$PY" -c "$CUDA_START"

echo "== kagent eval with every layer (its sandbox section)"
"$BUILD/kagent" eval tests/gpu/problems/small_gelu.py tests/gpu/kernels/gelu_correct.cu --json --no-baselines --no-profile \
  > /tmp/kagent-mech.json 2> /tmp/kagent-mech.err
echo "exit $?; stderr: $(tr '\n' ' ' < /tmp/kagent-mech.err | cut -c1-600)"
"$PY" -c "import json; d = json.load(open('/tmp/kagent-mech.json')); print(d['status'], d.get('reason')); print(json.dumps(d.get('sandbox'), indent=1))"
