#!/usr/bin/env bash
# KernelBench level 3 on a GPU machine, one part per device call (each under 10 minutes on a
# 16-core H200 once kagent is built):
#   kernelbench  a reference-wrapping KernelBench-format candidate for each of the 50 problems
#                (the problem file plus `class ModelNew(Model): pass`: the same torch ops) through
#                `kagent eval`, JOBS at a time; a table of verdicts (no internal_error expected;
#                guards may reject: the work is PyTorch's, not the candidate's own kernels)
#   native       bench/level3/mlp.cu through `kagent eval`: 1_MLP with both baselines (speedup
#                reported), 2_ShallowWideMLP (positional parameters) and 3_DeepNarrowMLP (34
#                parameters as one kagent::Params)
# usage: bash bench/level3/gpu_level3.sh KAGENT kernelbench|native
# Logs, JSON results and the summary (level3_<part>.md) go to $OUT (default ./gpu-out).
# Env: JOBS (parallel evaluations for kernelbench, default 4); KAGENT_KERNELBENCH_DIR (default
# .carry/kernelbench-problems, else ../shared/kernelbench). einops (the Mamba problems) comes
# from .carry/python when the machine lacks it (scripts/prepare_carry.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
# ${1:?} outside $(...): inside, it would end only the subshell and the script would go on.
KAGENT=${1:?usage: gpu_level3.sh KAGENT kernelbench|native}
KAGENT=$(realpath "$KAGENT")
PART=${2:?usage: gpu_level3.sh KAGENT kernelbench|native}
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
JOBS=${JOBS:-4}
KB=${KAGENT_KERNELBENCH_DIR:-}
if [ -z "$KB" ]; then
  if [ -d .carry/kernelbench-problems ]; then KB=.carry/kernelbench-problems; else KB=../shared/kernelbench; fi
fi
KB=$(realpath "$KB")
if ! python3 -c 'import einops' 2>/dev/null && [ -d .carry/python ]; then
  export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
fi
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
export KAGENT_CACHE_DIR=$CACHE
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv | tee "$OUT/level3_${PART}_gpu.txt"
fi

case "$PART" in
kernelbench)
  DIR=$OUT/level3-kernelbench
  mkdir -p "$DIR/candidates" "$DIR/results"
  for p in "$KB"/level3/*.py; do
    name=$(basename "$p" .py)
    { cat "$p"; printf '\n\nclass ModelNew(Model):\n    """The reference itself: same __init__, same forward."""\n    pass\n'; } \
      > "$DIR/candidates/${name}_ref.py"
  done
  started=$(date +%s)
  # Each evaluation in its own kagent (its own worker); past the device call's budget the rest
  # are left out and said so in the table.
  export KAGENT DIR KB started LEVEL3_BUDGET
  ls "$KB"/level3/*.py | sort -V | xargs -P "$JOBS" -I{} bash -c '
    p={}; name=$(basename "$p" .py)
    if [ $(( $(date +%s) - started )) -gt ${LEVEL3_BUDGET:-480} ]; then echo "{\"skipped\": \"device call budget\"}" > "$DIR/results/$name.json"; exit 0; fi
    t0=$(date +%s)
    timeout -k 10 300 "$KAGENT" eval "$p" "$DIR/candidates/${name}_ref.py" --json --no-compile-baseline --no-profile \
      > "$DIR/results/$name.json" 2> "$DIR/results/$name.err" || true
    echo "$name $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j.get(\"status\"), j.get(\"reason\"))" "$DIR/results/$name.json" 2>/dev/null || echo no-json) $(( $(date +%s) - t0 )) s"
  ' || true
  python3 - "$DIR/results" "$OUT/level3_kernelbench.md" <<'PY'
import collections, glob, json, os, re, sys
rows, counts = [], collections.Counter()
def key(path):
    return int(os.path.basename(path).split("_")[0])
for path in sorted(glob.glob(sys.argv[1] + "/*.json"), key=key):
    name = os.path.basename(path)[:-5]
    try:
        j = json.load(open(path))
    except (OSError, json.JSONDecodeError):
        err = open(path[:-5] + ".err").read().strip().splitlines()
        j = {"status": "no_result", "message": (err[-1] if err else "kagent printed nothing")[:120]}
    status = j.get("status", "skipped" if "skipped" in j else "?")
    counts[status] += 1
    t = j.get("timing") or {}
    mode = j.get("model_mode") or {}
    modes = ", ".join(f"{m['count']} {m['type']}" for m in mode.get("mode_modules", []))
    mode_text = ("training" if mode.get("training") else "eval") + (f" ({modes})" if modes else "") if mode else ""
    speed = f"{t['speedup_eager']:.2f}x" if t.get("speedup_eager") else ""
    guards = "; ".join(f"{g['name']}" for g in j.get("guards", []) if g.get("action") == "reject")
    msg = re.sub(r"\s+", " ", j.get("message", ""))[:90]
    rows.append(f"| {name} | {status} | {j.get('reason', '')} | {guards} | {speed} | {j.get('eval_seconds', 0):.1f} | "
                f"{j.get('total_seconds', 0):.1f} | {mode_text} | {msg} |")
with open(sys.argv[2], "w") as out:
    out.write("# KernelBench level 3: reference-wrapping candidates through kagent eval\n\n")
    out.write("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "\n\n")
    out.write("| problem | status | reason | rejected by | speedup vs eager | eval s | total s | mode | message |\n")
    out.write("|---|---|---|---|---|---|---|---|---|\n")
    out.write("\n".join(rows) + "\n")
print(open(sys.argv[2]).read())
if counts.get("internal_error"):
    print(f"level3: {counts['internal_error']} internal_error verdict(s)", file=sys.stderr)
PY
  ;;
native)
  DIR=$OUT/level3-native
  mkdir -p "$DIR"
  run() {  # problem, extra flags...
    local name=$1; shift
    echo "== $name"
    # One evaluation, as JSON: the table below is drawn from it.
    "$KAGENT" eval "$KB/level3/$name.py" bench/level3/mlp.cu --json "$@" > "$DIR/$name.json" || true
  }
  run 1_MLP
  run 2_ShallowWideMLP --no-compile-baseline
  run 3_DeepNarrowMLP --no-compile-baseline
  python3 - "$DIR" "$OUT/level3_native.md" <<'PY'
import json, sys
lines = ["# bench/level3/mlp.cu through kagent eval", "",
         "| problem | status | reason | candidate ms | eager ms | torch.compile ms | speedup vs eager | vs compile | compile s |",
         "|---|---|---|---|---|---|---|---|---|"]
for name in ("1_MLP", "2_ShallowWideMLP", "3_DeepNarrowMLP"):
    try:
        j = json.load(open(f"{sys.argv[1]}/{name}.json"))
    except (OSError, json.JSONDecodeError):
        lines.append(f"| {name} | no result | | | | | | | |")
        continue
    t = j.get("timing") or {}
    ms = lambda k: f"{t[k]['median_ms']:.3f}" if t.get(k) else ""
    sp = lambda k: f"{t[k]:.2f}x" if t.get(k) else ""
    c = j.get("compile") or {}
    lines.append(f"| {name} | {j.get('status')} | {j.get('reason', '')} | {ms('candidate')} | {ms('eager')} | "
                 f"{ms('compiled')} | {sp('speedup_eager')} | {sp('speedup_compiled')} | {c.get('seconds', 0):.1f} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
  ;;
*)
  echo "gpu_level3.sh: error: unknown part '$PART' (kernelbench or native)" >&2
  exit 2
  ;;
esac
