#!/usr/bin/env bash
# Issue 49's round trip with real evaluation, one command on a GPU machine (scripts/prepare_carry.sh
# here first, carry .carry: it holds the leaderboard answers):
#   bash scripts/serve_roundtrip_gpu.sh [KAGENT]      (gpu_check.sh's suite serve-roundtrip)
# 30 answers of kb_leaderboard ($RW, bench/collect/gpu_env.sh) collected by `kagent collect
# --format kernelbench` on the GPU, `kagent rollout`, then each prompt row through the TRL, verl,
# SkyRL (where skyrl-gym is installed), verifiers and OpenRLHF adapters against `kagent serve` on
# the same GPU, fed the collection's own answer: every episode of the row's format, task and
# system prompt, no format error, each adapter's reward equal to rollout's for the same turn
# within the timing's repeat tolerance (ROUNDTRIP_SPEEDUP_TOL, default 0.15 of the speedup, times
# the reward's speedup weight; everything else exact). KAGENT defaults to build-gpu/kagent
# (gpu_check.sh builds it). What runs: tests/python/roundtrip.py; its summary line starts
# "roundtrip:"; every step's record in $OUT/roundtrip/roundtrip.jsonl. Its last line is the
# repeatability of the 5 evaluations of each answer (the collection's and 4 adapters'); set
# ROUNDTRIP_TIMING_SAMPLE=launch|gpu|steady to compare kagent's --timing-sample kinds (default gpu, the
# one docs/serve.md gives for RL rewards). ROUNDTRIP_KERNELBENCH=DIR (e.g. .carry/kernelbench-problems,
# ../shared/kernelbench) takes each answer's problem from that KernelBench checkout at its official
# size instead of the set's own KernelBench v0 file; its steps are slower: 20 answers' 80 steps took
# 275 s with ROUNDTRIP_ROWS_AT_ONCE=8 on the H200 (88 s before them for the collection), which fits a
# warm machine's call but not a cold one's with the build (ROUNDTRIP_N=12 does);
# ROUNDTRIP_ROWS_AT_ONCE (default 8) rows are in flight at once; ROUNDTRIP_SPEEDUP_ROUNDS (default 5,
# as `kagent serve` runs them; 0: none) gives every evaluation paired rounds, the repeatability as
# rewards read it (issue 46's: 30 answers x 5 evaluations, 90th percentile at most 1.05) and a last
# line on how their intervals hold between evaluations. Without rounds only the timing's speedup
# is there, which never repeated within 1.05 (tests/gpu/RESULTS.md).
# ROUNDTRIP_NODES=2 serves the rows from a cluster instead (issue 48): redis-server (carried) and
# that many `kagent serve --queue` nodes on the same GPU, row k's episodes on node k mod N.
# ROUNDTRIP_KAGENT_ARGS="--timing-warmup=0.02 --timing-min-time=0.04" gives the collection and the
# server those evaluation flags alike (the repeatability at other timing floors).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/collect/gpu_env.sh
[ -d .carry/redis/bin ] && export PATH=$PWD/.carry/redis/bin:$PATH
[ -d .carry/redis/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/redis/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d .carry/httplib/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/httplib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
KAGENT=${1:-build-gpu/kagent}
[ -x "$KAGENT" ] || { echo "serve_roundtrip_gpu: no kagent at $KAGENT (bash scripts/gpu_check.sh builds it)" >&2; exit 1; }
[ -f "$RW/replay.jsonl" ] || { echo "serve_roundtrip_gpu: no leaderboard answers at $RW (scripts/prepare_carry.sh)" >&2; exit 1; }
nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "serve_roundtrip_gpu: no GPU (nvidia-smi -L lists none)" >&2; exit 1; }
"$PY" tests/python/roundtrip.py --kagent "$KAGENT" --realworld "$RW" --out "$OUT/roundtrip" -n "${ROUNDTRIP_N:-30}" \
  --rows-at-once "${ROUNDTRIP_ROWS_AT_ONCE:-8}" --speedup-rounds "${ROUNDTRIP_SPEEDUP_ROUNDS:-5}" \
  --speedup-tolerance "${ROUNDTRIP_SPEEDUP_TOL:-0.15}" --timing-sample "${ROUNDTRIP_TIMING_SAMPLE:-gpu}" \
  ${ROUNDTRIP_KERNELBENCH:+--kernelbench "$ROUNDTRIP_KERNELBENCH"} ${ROUNDTRIP_NODES:+--nodes "$ROUNDTRIP_NODES"} \
  $(for a in ${ROUNDTRIP_KAGENT_ARGS:-}; do printf -- '--kagent-arg=%s ' "$a"; done)
