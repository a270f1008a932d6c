#!/usr/bin/env bash
# Issue 48's 2-GPU check, one command on the 2-GPU machine (scripts/prepare_carry.sh here first,
# carry .carry: it holds the leaderboard answers, hiredis and redis-server):
#   bash scripts/serve_cluster_gpu.sh [KAGENT]      (gpu_check.sh's suite serve-cluster)
# One `kagent serve --queue` node on GPU 0, then two nodes (GPUs 0 and 1, their own processes
# and ports) on one Redis, over the same 100 kb_leaderboard answers (bench/serve/cluster_nodes.py):
# its line "cluster: ..." gives both throughputs, the ratio (at least 1.8 to pass) and how many
# verdicts are equal (all to pass). KAGENT defaults to build-gpu/kagent (built with hiredis).
# CLUSTER_KERNELBENCH=DIR (.carry/kernelbench-problems) takes each answer's problem from that
# KernelBench checkout at its official size; KAGENT_REALWORLD_DIR=.carry/realworld/cuda_l1 the RL
# policy's answers (bench/collect/gpu_env.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/collect/gpu_env.sh
[ -d .carry/httplib/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/httplib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d .carry/redis/bin ] && export PATH=$PWD/.carry/redis/bin:$PATH
[ -d .carry/redis/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/redis/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KAGENT=${1:-build-gpu/kagent}
[ -x "$KAGENT" ] || { echo "serve_cluster_gpu: no kagent at $KAGENT (bash scripts/gpu_check.sh builds it)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "serve_cluster_gpu: no redis-server (scripts/prepare_carry.sh carries it)" >&2; exit 1; }
[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] || { echo "serve_cluster_gpu: fewer than 2 GPUs here (the 2-GPU kind)" >&2; exit 1; }
# CLUSTER_PHASES=one, then =two in the next (warm) call: the phases in calls of their own, for
# problems whose run does not fit one call with the build; their state stays in CLUSTER_DIR.
# CLUSTER_FIDELITY=bench/fidelity/kagent_verdicts_cuda_l1.jsonl: the one node's verdicts beside
# KernelBench's harness's on the same answers (only meaningful on the files that run judged: the
# set's own, without CLUSTER_KERNELBENCH). CLUSTER_REPEAT=K sends each answer K times (CUDA-L1's
# 100 answers are shorter together than their slowest one: one answer's 68 s was the whole wall).
# CLUSTER_SERVE_ARGS="--timing-warmup=0.02 --timing-min-time=0.04" gives every node those flags.
dir=${CLUSTER_DIR:-$OUT/cluster}
"$PY" bench/serve/cluster_nodes.py --kagent "$KAGENT" --realworld "$RW" --out "$dir" -n "${CLUSTER_ANSWERS:-100}" \
  ${CLUSTER_KERNELBENCH:+--kernelbench "$CLUSTER_KERNELBENCH"} ${CLUSTER_PHASES:+--phases "$CLUSTER_PHASES"} \
  ${CLUSTER_FIDELITY:+--fidelity "$CLUSTER_FIDELITY"} ${CLUSTER_REPEAT:+--repeat "$CLUSTER_REPEAT"} \
  $(for a in ${CLUSTER_SERVE_ARGS:-}; do printf -- '--serve-arg=%s ' "$a"; done)
rc=$?
if [ "$dir" != "$OUT/cluster" ]; then
  for tag in one two; do
    [ -f "$dir/$tag/requests.jsonl" ] && mkdir -p "$OUT/cluster/$tag" && cp "$dir/$tag/requests.jsonl" "$dir/$tag/result.json" "$OUT/cluster/$tag/"
  done
fi
exit $rc
