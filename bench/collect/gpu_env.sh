# Sourced by gpu_collect.sh, gpu_collect_2gpu.sh and bench/fidelity (from the repository root): $OUT made and
# absolute, $KB the KernelBench problems ($KAGENT_KERNELBENCH_DIR, else .carry/kernelbench-problems,
# else ../shared/kernelbench), $RW the real answers (below), $PY the GPU machine's Python first on PATH, and a fresh
# KAGENT_CACHE_DIR removed at exit (every baseline is measured by the script, none found from an
# earlier call).
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
KB=${KAGENT_KERNELBENCH_DIR:-}
if [ -z "$KB" ]; then
  if [ -d .carry/kernelbench-problems ]; then KB=.carry/kernelbench-problems; else KB=../shared/kernelbench; fi
fi
KB=$(realpath "$KB")
# $RW: the real model answers (kb_leaderboard) for bench/fidelity: $KAGENT_REALWORLD_DIR, else
# .carry/realworld/kb_leaderboard, else ../shared/realworld/kb_leaderboard.
RW=${KAGENT_REALWORLD_DIR:-}
if [ -z "$RW" ]; then
  if [ -d .carry/realworld/kb_leaderboard ]; then RW=.carry/realworld/kb_leaderboard; else RW=../shared/realworld/kb_leaderboard; fi
fi
RW=$(realpath -m "$RW")
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
PATH=$(dirname "$PY"):$PATH
export PATH
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
export KAGENT_CACHE_DIR=$CACHE
