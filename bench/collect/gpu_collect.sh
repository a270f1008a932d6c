#!/usr/bin/env bash
# `kagent baselines` then `kagent collect` on one GPU, in one device call (about 6 minutes on an
# H200 once kagent is built):
#   1. bench/collect/make_replay.py writes the suite (bench/collect/problems.txt: 20 level-1 and
#      20 level-2 KernelBench problems) and a zero-latency replay file: per problem, a
#      reference-wrapping ModelNew on turn 1, then a Triton kernel (bench/collect/kernels/, 4
#      problems) or the reference with its output shifted on turn 2
#   2. kagent baselines: eager and torch.compile for each problem (fills the baseline cache,
#      writes the table), under BASELINES_LIMIT seconds (default 250)
#   3. kagent collect --format kernelbench with that replay, under COLLECT_LIMIT seconds
#      (default 220): the metrics table and evaluations per GPU-minute (the model answers at
#      once, so that is the evaluation pipeline's own rate)
#   4. a summary ($OUT/collect_gpu.md): the verdicts by turn, the counts against what the replay
#      implies, the numbers of summary.json
# usage: bash bench/collect/gpu_collect.sh KAGENT
# Everything goes to $OUT (default ./gpu-out): collect-gpu/ (suite, replay, baselines table,
# the collection folder) and the logs. Env: SAMPLES (default 1); KAGENT_KERNELBENCH_DIR
# (default .carry/kernelbench-problems, else ../shared/kernelbench); GPUS (default: one worker
# on the default GPU; e.g. 0,1 for two).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# ${1:?} outside $(...): inside, it would end only the subshell and the script would go on.
KAGENT=${1:?usage: gpu_collect.sh KAGENT}
KAGENT=$(realpath "$KAGENT")
SAMPLES=${SAMPLES:-1}
. bench/collect/gpu_env.sh
gpu_flags=()
[ -n "${GPUS:-}" ] && gpu_flags=(--gpus "$GPUS")
D=$OUT/collect-gpu
rm -rf "$D"
mkdir -p "$D"
T0=$(date +%s)
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv | tee "$D/gpu.txt"
fi
"$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' | tee -a "$D/gpu.txt"

echo "== replay"
"$PY" bench/collect/make_replay.py "$KB" bench/collect/problems.txt "$D" --samples "$SAMPLES" --delay-ms 0 || exit 1

echo "== kagent baselines (limit ${BASELINES_LIMIT:-250} s)"
start=$(date +%s)
timeout -k 10 "${BASELINES_LIMIT:-250}" "$KAGENT" baselines "$D/suite.txt" --out "$D/baselines" "${gpu_flags[@]}" \
  > "$D/baselines.log" 2>&1
echo "baselines rc=$? in $(( $(date +%s) - start )) s"
tail -4 "$D/baselines.log"

echo "== kagent collect (limit ${COLLECT_LIMIT:-220} s)"
start=$(date +%s)
timeout -k 10 "${COLLECT_LIMIT:-220}" "$KAGENT" collect "$D/suite.txt" -n "$SAMPLES" -t 2 --format kernelbench \
  --llm "replay:$D/replay.jsonl" --out "$D/collection" "${gpu_flags[@]}" > "$D/collect.log" 2>&1
rc=$?
echo "collect rc=$rc in $(( $(date +%s) - start )) s"
# The metrics table and the closing lines (piped, collect prints one line per event before them).
sed -n '/^ *level [0-9a]/,$p' "$D/collect.log"

echo "== summary"
"$PY" - "$D" "$OUT/collect_gpu.md" "$SAMPLES" "$(( $(date +%s) - T0 ))" <<'PY'
import collections, glob, json, os, sys
sys.path.insert(0, "bench/collect")
from collection_turns import trajectories
d, out_md, samples, total_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
col = os.path.join(d, "collection")
kernels = {os.path.basename(p)[:-3] for p in glob.glob("bench/collect/kernels/*.py")}
lines = ["# kagent baselines + kagent collect on one GPU (bench/collect/gpu_collect.sh)", ""]
try:
    lines.append("GPU: " + open(os.path.join(d, "gpu.txt")).read().strip().replace("\n", "; "))
except OSError:
    pass
tables = sorted(glob.glob(os.path.join(d, "baselines", "*.json")))
if tables:
    t = json.load(open(tables[0]))
    timed = [r for r in t["rows"] if r.get("eager_ms") is not None]
    compiled = [r for r in timed if r.get("compiled_ms") is not None]
    lines.append(f"baselines: {len(t['rows'])} rows, {len(timed)} timed eager, {len(compiled)} torch.compile, "
                 f"{len(t.get('failures', []))} cannot run ({os.path.basename(tables[0])})")
    for f in t.get("failures", []):
        lines.append(f"  cannot run: {f['problem']}: {f['reason'][:160]}")
else:
    lines.append("baselines: no table (the baselines step did not finish)")
verdicts = collections.defaultdict(collections.Counter)
expected_kernel_correct = 0
n_traj = 0
for name, tr in trajectories(col):
    n_traj += 1
    for i, turn in enumerate(tr.get("turns", [])):
        ev = turn.get("eval") or {}
        v = ev.get("status") or turn.get("outcome") or "?"
        reason = ev.get("reason") or ""
        kind = "kernel" if (i == 1 and name in kernels) else ("reference" if i == 0 else "shifted")
        verdicts[(i + 1, kind)][v + (f" ({reason})" if reason else "")] += 1
lines += ["", "| turn | answer | problems x samples | verdicts |", "|---|---|---|---|"]
for (turn, kind), c in sorted(verdicts.items()):
    lines.append(f"| {turn} | {kind} | {sum(c.values())} | " + ", ".join(f"{k} {v}" for k, v in c.most_common()) + " |")
# What the replay implies: a reference-wrapping answer runs no kernel of its own (rejected,
# no_kernel), a kernel from bench/collect/kernels is correct, a shifted reference is not.
ref = verdicts.get((1, "reference"), collections.Counter())
ker = verdicts.get((2, "kernel"), collections.Counter())
shifted = verdicts.get((2, "shifted"), collections.Counter())
ref_ok, ker_ok = ref.get("rejected (no_kernel)", 0), ker.get("correct", 0)
shifted_bad = sum(v for k, v in shifted.items() if k.startswith("correct"))
lines.append(f"expected: reference answers rejected (no_kernel) {ref_ok} of {sum(ref.values())}, kernels correct "
             f"{ker_ok} of {sum(ker.values())}, shifted answers correct {shifted_bad} (expected 0) -> "
             f"{'OK' if ref_ok == sum(ref.values()) and ker_ok == sum(ker.values()) and shifted_bad == 0 else 'MISMATCH'}")
try:
    s = json.load(open(os.path.join(col, "summary.json")))
    lines += ["", f"collection: {s['problems']} problems, {s['samples_done']}/{s['samples_expected']} samples recorded, "
              f"{s['problem_errors']} cannot run, {s['evaluations']} evaluations on {s['gpus']} GPU(s) in "
              f"{s['wall_seconds']:.1f} s: **{s['evals_per_gpu_minute']:.1f} evaluations per GPU-minute**"]
    expected = (s["problems"] - s["problem_errors"]) * samples
    lines.append(f"check: trajectories {n_traj} (expected {expected}), index samples {s['samples_done']} "
                 f"-> {'OK' if n_traj == expected == s['samples_done'] else 'MISMATCH'}")
except (OSError, KeyError, ValueError) as e:
    lines.append(f"collection: no summary.json ({e}): the collect step did not finish")
try:
    m = json.load(open(os.path.join(col, "metrics.json")))
    for g in m["groups"]:
        lines.append(f"level {g['level']}: correct {g['correct_rate']:.1%}, fast_1 vs eager {g['fast_p']['eager']['1.0']:.1%}, "
                     f"vs compile {g['fast_p']['compiled']['1.0']:.1%}, fast_1 by turn {g['fast1_by_turn']['eager']}")
except (OSError, KeyError, ValueError):
    pass
lines.append(f"whole script: {total_s} s")
open(out_md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "== done in $(( $(date +%s) - T0 )) s; outputs in $D and $OUT/collect_gpu.md"
exit $rc
