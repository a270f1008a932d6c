#!/usr/bin/env bash
# Where a warm evaluation's time goes, on the shipped examples: each is evaluated twice with one
# cache (the first run fills the compile and baseline caches, the second is the warm one), and
# the second's eval_seconds, its phases and the guard run's steps are printed.
# usage: bash scripts/warm_eval_phases.sh KAGENT [extra eval flags]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
KAGENT=$(realpath "${1:?usage: warm_eval_phases.sh KAGENT [flags]}")
shift
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
# WARM_EXAMPLES: a shorter list for a call with little time left.
for ex in ${WARM_EXAMPLES:-elementwise_gelu row_softmax gemm_bias_relu conv_block}; do
  for run in 1 2; do
    KAGENT_CACHE_DIR=$cache "$KAGENT" eval examples/$ex.py examples/$ex.cu --json "$@" > "$cache/$ex.$run.json" 2> "$cache/$ex.$run.err"
  done
  "$PY" - "$cache/$ex.2.json" "$ex" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
phases = ", ".join(f"{p['name']} {p['seconds']:.3f}" for p in r.get("phases", []))
parts = "; ".join(f"{p['name']}: " + ", ".join(f"{k} {v:.3f}" for k, v in p["parts"].items())
                  for p in r.get("phases", []) if p.get("parts"))
print(f"warm {sys.argv[2]}: {r['status']} eval {r['eval_seconds']:.3f} s, total {r['total_seconds']:.2f} s; {phases}; {parts}")
if r["status"] != "correct":  # what the verdict says, so that a run's failure explains itself
    left = "; ".join(f"{l['item']}: {l.get('detail', '')}" for l in (r.get("isolation") or {}).get("left_behind", []))
    print(f"warm {sys.argv[2]}: not correct: {r.get('reason', '')}: {r.get('message', '')[:300]}" + (f" | left behind: {left[:400]}" if left else ""))
PY
done
