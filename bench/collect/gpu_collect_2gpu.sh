#!/usr/bin/env bash
# `kagent collect` on a 2-GPU machine (nvidia-h200-x2), in one device call (about 5 minutes
# once kagent is built), over the suite and zero-latency replay of gpu_collect.sh (40 problems
# of levels 1 and 2; per problem a reference-wrapping answer, then a Triton kernel or a shifted
# reference):
#   1. kagent baselines --gpus 0,1: eager and torch.compile of every problem, into one cache
#      that the three collections below share (so each measures the evaluation pipeline only)
#   2. kagent collect --gpus 0,1   (A: both GPUs)
#   3. kagent collect --gpus 0     (B: GPU 0 alone)
#   4. kagent collect --gpus 1     (C: GPU 1 alone)
#   5. a summary ($OUT/collect_2gpu.md): A's per-GPU evaluations, busy time and time idle while
#      work was queued, the GPU each evaluation ran on (device UUIDs) and how many problems
#      stayed on one GPU; evaluations per GPU-minute of A against B; for every correct kernel,
#      its speedup on GPU 0 (B) against GPU 1 (C), beside the spread between its two samples on
#      one GPU (the timing noise); each problem's eager time as GPU 0 and GPU 1 re-measured it
# usage: bash bench/collect/gpu_collect_2gpu.sh KAGENT       (SAMPLES per problem, default 2)
# Outputs in $OUT (default ./gpu-out): collect-2gpu/{suite.txt,replay.jsonl,baselines,A,B,C} and
# the logs. KAGENT_KERNELBENCH_DIR as in gpu_collect.sh.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# ${1:?} outside $(...): inside, it would end only the subshell and the script would go on.
KAGENT=${1:?usage: gpu_collect_2gpu.sh KAGENT}
KAGENT=$(realpath "$KAGENT")
. bench/collect/gpu_env.sh
D=$OUT/collect-2gpu
rm -rf "$D"
mkdir -p "$D"
T0=$(date +%s)
nvidia-smi --query-gpu=index,name,uuid,memory.used --format=csv | tee "$D/gpu.txt"

echo "== replay"
"$PY" bench/collect/make_replay.py "$KB" bench/collect/problems.txt "$D" --samples "${SAMPLES:-2}" --delay-ms 0 || exit 1

echo "== kagent baselines --gpus 0,1 (limit ${BASELINES_LIMIT:-200} s)"
start=$(date +%s)
timeout -k 10 "${BASELINES_LIMIT:-200}" "$KAGENT" baselines "$D/suite.txt" --out "$D/baselines" --gpus 0,1 \
  > "$D/baselines.log" 2>&1
echo "baselines rc=$? in $(( $(date +%s) - start )) s"
tail -3 "$D/baselines.log"

rc=0
for run in "A 0,1" "B 0" "C 1"; do
  set -- $run
  echo "== kagent collect --gpus $2 ($1; limit ${COLLECT_LIMIT:-120} s)"
  start=$(date +%s)
  timeout -k 10 "${COLLECT_LIMIT:-120}" "$KAGENT" collect "$D/suite.txt" -n "${SAMPLES:-2}" -t 2 --format kernelbench \
    --llm "replay:$D/replay.jsonl" --out "$D/$1" --gpus "$2" > "$D/collect_$1.log" 2>&1
  r=$?
  [ $r -ne 0 ] && rc=$r
  echo "collect $1 rc=$r in $(( $(date +%s) - start )) s"
  grep -E "^done|^gpu " "$D/collect_$1.log"
done

echo "== summary"
"$PY" - "$D" "$OUT/collect_2gpu.md" "$(( $(date +%s) - T0 ))" <<'PY'
import collections, glob, json, os, statistics, sys
sys.path.insert(0, "bench/collect")
from collection_turns import trajectories
d, out_md, total_s = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = ["# kagent collect on two GPUs (bench/collect/gpu_collect_2gpu.sh)", "",
         "GPUs: " + open(os.path.join(d, "gpu.txt")).read().strip().replace("\n", "; "), ""]

def load(run):
    col = os.path.join(d, run)
    try:
        s = json.load(open(os.path.join(col, "summary.json")))
    except (OSError, ValueError):
        return None, {}, {}
    turns = {}  # (problem, sample, turn) -> eval
    for name, traj in trajectories(col):
        for i, t in enumerate(traj.get("turns", [])):
            turns[(name, traj.get("sample", 0), i + 1)] = t.get("eval") or {}
    try:
        rechecks = {r["problem"]: r.get("recheck_eager_ms") for r in json.load(open(os.path.join(col, "baselines.json")))["rows"]}
    except (OSError, ValueError, KeyError):
        rechecks = {}
    return s, turns, rechecks

def pct(x):
    return f"{x:+.1%}"

runs = {r: load(r) for r in "ABC"}
for r, gpus in (("A", "0,1"), ("B", "0"), ("C", "1")):
    s, turns, _ = runs[r]
    if s is None:
        lines.append(f"{r} (--gpus {gpus}): no summary.json: the collection did not finish")
        continue
    verdicts = collections.Counter(ev.get("status", "?") for ev in turns.values())
    lines.append(f"{r} (--gpus {gpus}): {s['samples_done']}/{s['samples_expected']} samples, {s['evaluations']} evaluations "
                 f"on {s['gpus']} GPU(s) in {s['wall_seconds']:.1f} s: **{s['evals_per_gpu_minute']:.1f} evaluations per "
                 f"GPU-minute**; verdicts " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))
    for g in s.get("per_gpu", []):
        lines.append(f"  gpu {g['gpu']}: {g['evaluations']} evaluations, busy {g['busy_seconds']:.1f} s "
                     f"({g['busy_ratio']:.0%} of the run; {g['eval_seconds']:.1f} s evaluating, "
                     f"{g['busy_seconds'] - g['eval_seconds']:.1f} s loading problems and re-checking baselines), "
                     f"idle while work was queued {g['idle_while_queued_seconds']:.2f} s")
    uuids = collections.Counter((ev.get("device") or {}).get("uuid", "?") for ev in turns.values() if ev.get("device"))
    lines.append("  evaluations by device: " + ", ".join(f"{u[:12]}.. {n}" for u, n in sorted(uuids.items())))
    if s["gpus"] > 1:
        on = collections.defaultdict(set)
        for (name, _, _), ev in turns.items():
            if ev.get("device"):
                on[name].add(ev["device"].get("uuid"))
        one = sum(1 for v in on.values() if len(v) == 1)
        lines.append(f"  problems whose evaluations all ran on one GPU: {one} of {len(on)}")
sa, sb = runs["A"][0], runs["B"][0]
if sa and sb:
    lines += ["", f"evaluations per GPU-minute: {sa['evals_per_gpu_minute']:.1f} on two GPUs against "
              f"{sb['evals_per_gpu_minute']:.1f} on one ({sa['evals_per_gpu_minute'] / max(sb['evals_per_gpu_minute'], 1e-9):.2f}x "
              f"per GPU); wall {sa['wall_seconds']:.1f} s against {sb['wall_seconds']:.1f} s "
              f"({sb['wall_seconds'] / max(sa['wall_seconds'], 1e-9):.2f}x faster)"]

# The same correct kernels on GPU 0 (B) and GPU 1 (C): the difference between the GPUs beside
# the spread between two samples of the same kernel on one GPU (the timing noise).
tb, tc = runs["B"][1], runs["C"][1]
speed = collections.defaultdict(lambda: {"B": [], "C": []})
ms = collections.defaultdict(lambda: {"B": [], "C": []})
for run, tt in (("B", tb), ("C", tc)):
    for (name, sample, turn), ev in tt.items():
        if ev.get("status") == "correct" and (ev.get("timing") or {}).get("speedup_eager"):
            speed[(name, turn)][run].append(ev["timing"]["speedup_eager"])
            ms[(name, turn)][run].append(ev["timing"]["candidate"]["median_ms"])
rows, across, within = [], [], []
for key in sorted(speed):
    b, c = speed[key]["B"], speed[key]["C"]
    if not b or not c:
        continue
    diff = statistics.mean(c) / statistics.mean(b) - 1
    across.append(abs(diff))
    spreads = [max(v) / min(v) - 1 for v in (b, c) if len(v) > 1]
    within += spreads
    rows.append(f"| {key[0]} | {key[1]} | {' '.join(f'{x:.4f}' for x in ms[key]['B'])} | {' '.join(f'{x:.4f}' for x in ms[key]['C'])} | "
                f"{' '.join(f'{x:.3f}x' for x in b)} | {' '.join(f'{x:.3f}x' for x in c)} | {pct(diff)} | "
                f"{' / '.join(f'{x:.1%}' for x in spreads) or '-'} |")
lines += ["", "Correct kernels, GPU 0 (B) against GPU 1 (C), one value per sample:", "",
          "| problem | turn | GPU 0 ms | GPU 1 ms | speedup GPU 0 | speedup GPU 1 | GPU 1 vs GPU 0 (means) | spread between samples on GPU 0 / GPU 1 |",
          "|---|---|---|---|---|---|---|---|"]
lines += rows or ["| (none) | | | | | | | |"]
if across:
    lines.append(f"\nspeedups on GPU 0 and GPU 1: largest difference {max(across):.1%}, median "
                 f"{statistics.median(across):.1%} over {len(across)} correct kernel(s); between two samples on one GPU: "
                 + (f"largest {max(within):.1%}, median {statistics.median(within):.1%}" if within else "(one sample each)"))

# Eager, re-measured by each GPU before its collection used the cached time.
rb, rc = runs["B"][2], runs["C"][2]
pairs = [(p, rb[p], rc[p]) for p in sorted(set(rb) & set(rc)) if rb[p] and rc[p]]
if pairs:
    diffs = [c / b - 1 for _, b, c in pairs]
    lines += ["", "Eager, re-measured on each GPU (the re-check of the cached baseline):", "",
              "| problem | GPU 0 ms | GPU 1 ms | GPU 1 vs GPU 0 |", "|---|---|---|---|"]
    lines += [f"| {p} | {b:.4f} | {c:.4f} | {pct(c / b - 1)} |" for p, b, c in pairs]
    a = sorted(abs(x) for x in diffs)
    lines.append(f"\neager re-checks on GPU 0 and GPU 1: {len(pairs)} problems, median difference {statistics.median(a):.1%}, "
                 f"90th percentile {a[int(0.9 * (len(a) - 1))]:.1%}, largest {a[-1]:.1%}; GPU 1 faster on "
                 f"{sum(1 for x in diffs if x < 0)} of {len(diffs)}")
tables = sorted(glob.glob(os.path.join(d, "baselines", "*.json")))
if tables:
    t = json.load(open(tables[0]))
    lines.append(f"baselines: {len(t['rows'])} problems timed over both GPUs, {len(t.get('failures', []))} cannot run")
lines.append(f"whole script: {total_s} s")
open(out_md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "== done in $(( $(date +%s) - T0 )) s"
exit $rc
