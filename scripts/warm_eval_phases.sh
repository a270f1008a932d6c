#!/usr/bin/env bash
# Where a warm evaluation's time goes, on the shipped examples. Warm as issue 27 means it: a later
# turn in a long-lived worker (solve, serve, collect), which has the problem loaded, its trial
# inputs drawn and kept, its reference outputs and baselines known. Each example is solved in two
# turns from a replay of its own candidate (the second turn's copy differs by a comment, so it is a
# new candidate, compiled again, on the same worker); the second turn's eval_seconds, its phases and
# the guard run's steps are printed. A second `kagent eval` process would measure a fresh worker
# instead (the 2026-11-26 run did: 3.4 s of CPU draws that a warm worker does not pay).
# usage: warm_eval_phases.sh KAGENT [extra solve flags]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
KAGENT=$(realpath "${1:?usage: warm_eval_phases.sh KAGENT [flags]}")
shift
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
rc=0
# WARM_EXAMPLES: a shorter list for a call with little time left.
for ex in ${WARM_EXAMPLES:-elementwise_gelu row_softmax gemm_bias_relu conv_block}; do
  "$PY" - "examples/$ex.cu" "$cache/$ex.replay.jsonl" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
with open(sys.argv[2], "w") as f:
    for turn, tail in ((0, ""), (1, "\n// the same kernel again: the warm turn\n")):
        f.write(json.dumps({"sample": 0, "turn": turn, "text": f"```cuda\n{src}{tail}```"}) + "\n")
PY
  KAGENT_CACHE_DIR=$cache/cache "$KAGENT" solve "examples/$ex.py" --llm "replay:$cache/$ex.replay.jsonl" --turns 2 \
    --runs-dir "$cache/runs-$ex" "$@" > "$cache/$ex.out" 2> "$cache/$ex.err"
  "$PY" - "$cache/runs-$ex" "$ex" <<'PY' || rc=1
import glob, json, sys
runs, ex = sys.argv[1], sys.argv[2]
turns = [t for f in glob.glob(f"{runs}/**/trajectories.jsonl", recursive=True) for line in open(f)
         for t in json.loads(line).get("turns", [])]
if len(turns) < 2 or not turns[1].get("eval"):
    print(f"warm {ex}: no second turn recorded ({len(turns)} turn(s)); see the solve's stderr")
    sys.exit(1)
first, r = turns[0]["eval"], turns[1]["eval"]
phases = ", ".join(f"{p['name']} {p['seconds']:.3f}" for p in r.get("phases", []) if p["name"] != "compile")
parts = "; ".join(f"{p['name']}: " + ", ".join(f"{k} {v:.3f}" for k, v in p["parts"].items())
                  for p in r.get("phases", []) if p.get("parts"))
c = (r.get("timing") or {}).get("candidate") or {}
loop = (f"; timing loop {c.get('iterations')} samples of {c.get('median_ms', 0):.4f} ms, noise "
        f"{100 * c.get('rel_stdev', 0):.1f}%, preempted {c.get('preemptions')}, stopped by {c.get('stop_reason')}") if c else ""
print(f"warm {ex}: {r['status']} eval {r['eval_seconds']:.3f} s (first turn {first['eval_seconds']:.3f} s); {phases}; {parts}{loop}")
if r["status"] != "correct":  # what the verdict says, so that a run's failure explains itself
    left = "; ".join(f"{l['item']}: {l.get('detail', '')}" for l in (r.get("isolation") or {}).get("left_behind", []))
    print(f"warm {ex}: not correct: {r.get('reason', '')}: {r.get('message', '')[:300]}" + (f" | left behind: {left[:400]}" if left else ""))
    sys.exit(1)
PY
done
exit $rc
