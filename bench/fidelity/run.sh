#!/usr/bin/env bash
# The fidelity benchmark on one GPU: kagent and KernelBench's own harness side by side over the
# 149 real answers of kb_leaderboard and over the project's kits; RESULTS.md's tables from
# compare.py. Phases, so that the whole fits device calls of 10 minutes (KernelBench's harness
# builds each answer with torch's load_inline, ~40 core-seconds apiece):
#   start    KernelBench's harness over the real answers and the kernelbench-format kit entries,
#            in the background (setsid: it outlives the call while the machine stays warm),
#            JOBS answers at once (default 8), tolerance 1e-2 (KB_TOLERANCE) as the leaderboard
#   kagent   kagent collect over the kits, then over the real answers (replayed), both policies
#            recorded from one evaluation each; under FIDELITY_KAGENT_S (420) in all, a cut
#            collection resumed by the next call, the records copied to $OUT after each
#   finish   waits for KernelBench's harness (FINISH_WAIT s, default 420), then the report:
#            $OUT/fidelity.md and the summary line
#   all      the three in order (on a machine without a per-call limit)
# usage: bash bench/fidelity/run.sh KAGENT PHASE...
# State between phases lives in $FIDELITY_DIR (default /tmp/kagent-fidelity); the report and
# logs go to $OUT. Needs .carry/kernelbench (KernelBench's harness, bench/eval/kernelbench_harness.py
# setup) and the real answers ($KAGENT_REALWORLD_DIR, else .carry/realworld/kb_leaderboard, else
# ../shared/realworld/kb_leaderboard).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
KAGENT=${1:?usage: run.sh KAGENT PHASE...}
KAGENT=$(realpath -m "$KAGENT")  # not built yet for the start phase
shift
. bench/collect/gpu_env.sh
trap - EXIT  # the compile and baseline cache stays for the later phases
export KAGENT_CACHE_DIR=${FIDELITY_DIR:-/tmp/kagent-fidelity}/cache
S=${FIDELITY_DIR:-/tmp/kagent-fidelity}
mkdir -p "$S"
export KAGENT_REALWORLD_DIR=$RW  # gpu_env.sh's
export KAGENT_KERNELBENCH_DIR=$KB
JOBS=${JOBS:-8}

phase_start() {
  "$PY" bench/fidelity/make_suites.py "$S/suites" || return 1
  # The harness outlives this call, and every later device call replaces the working tree and
  # .carry under it (2026-11-26: one answer's problem file was missing at the moment a call
  # began). So it runs from a snapshot in $S: its scripts, the carried harness and every pair's
  # two files.
  local snap=$S/snapshot
  rm -rf "$snap" && mkdir -p "$snap/bench" "$snap/.carry" "$snap/pairs" &&
    cp -r bench/fidelity bench/eval "$snap/bench/" && cp -r .carry/kernelbench "$snap/.carry/" || return 1
  local pypath=${PYTHONPATH:-}
  if [ -d .carry/python ]; then cp -r .carry/python "$snap/.carry/" && pypath=$snap/.carry/python${pypath:+:$pypath}; fi
  "$PY" - "$S/suites" "$snap/pairs" <<'PY' || return 1
import json, shutil, sys
d, dest = sys.argv[1], sys.argv[2]
pairs = json.load(open(f"{d}/kb_pairs_realworld.json")) + json.load(open(f"{d}/kb_pairs_kits.json"))
for p in pairs:
    for key in ("problem", "candidate"):
        copy = f"{dest}/{p['name']}.{key}.py"
        shutil.copyfile(p[key], copy)
        p[key] = copy
json.dump(pairs, open(f"{d}/kb_pairs_all.json", "w"))
PY
  rm -f "$S/kb.json" "$S/kb.done"
  setsid bash -c "cd '$snap' && PYTHONPATH='$pypath' '$PY' bench/fidelity/kb_verdicts.py --pairs '$S/suites/kb_pairs_all.json' --out '$S/kb.json' \
      --jobs $JOBS --atol-rtol ${KB_TOLERANCE:-1e-2} --build-root '$S/kb-build' > '$S/kb.log' 2>&1; echo \$? > '$S/kb.done'" \
    < /dev/null > /dev/null 2>&1 &
  echo "fidelity: KernelBench's harness started in the background ($JOBS at once; log $S/kb.log)"
}

phase_kagent() {
  [ -d "$S/suites" ] || "$PY" bench/fidelity/make_suites.py "$S/suites" || return 1
  local flags=(-n 1 -t 1 --no-baselines --no-profile)
  # Each collection runs under its own limit and is resumed by the next call when cut short
  # (its records stay in $S); what it recorded so far is copied to $OUT after each, so a
  # device call that ends early still brings its verdicts back. The kits first: they are few.
  local limit=${FIDELITY_KAGENT_S:-420} t0=$(date +%s)
  left() { echo $(( limit - ($(date +%s) - t0) )); }
  # FIDELITY_MATCH: only the answers whose name the regex finds (a quick look, not the benchmark).
  local match=()
  [ -n "${FIDELITY_MATCH:-}" ] && match=(--match "$FIDELITY_MATCH")
  collect_into() {  # DIR LOG ARGS...: a new collection, or the rest of one a cut call left
    local dir=$1 log=$2; shift 2
    local start=$(date +%s) rc
    # `timeout 0` would mean no limit at all: with no time left, the next call does it.
    if [ "$(left)" -lt 10 ]; then echo "fidelity: no time left for $(basename "$dir"); the next call runs it"; return; fi
    if [ -f "$dir/manifest.json" ]; then
      timeout --kill-after=10 "$(left)" "$KAGENT" collect --resume "$dir" --llm "$replay" >> "$log" 2>&1
    else
      rm -rf "$dir"
      timeout --kill-after=10 "$(left)" "$KAGENT" collect "$@" --out "$dir" >> "$log" 2>&1
    fi
    rc=$?
    echo "fidelity: kagent collect into $(basename "$dir") rc=$rc in $(( $(date +%s) - start )) s$([ $rc = 124 ] && echo ' (cut by FIDELITY_KAGENT_S; the next call resumes it)')"
  }
  local replay
  if [ "${FIDELITY_SKIP_KITS:-0}" != 1 ]; then
    for fmt in cuda kernelbench; do
      replay="replay:$S/suites/kits_$fmt.replay.jsonl"
      collect_into "$S/kits_$fmt" "$S/collect_kits_$fmt.log" "$S/suites/kits_$fmt" --format $fmt --llm "$replay" \
        --timeout 30 "${flags[@]}"
    done
    tar -C "$S" -czf "$OUT/fidelity_kits_records.tgz" kits_cuda/problems kits_kernelbench/problems 2>/dev/null
  fi
  replay="replay:$KAGENT_REALWORLD_DIR/replay.jsonl"
  collect_into "$S/rw" "$S/collect_rw.log" "$KAGENT_REALWORLD_DIR/problems" --format kernelbench --llm "$replay" \
    "${match[@]}" "${flags[@]}"
  "$PY" bench/fidelity/compare.py --collection "$S/rw" --truth "$KAGENT_REALWORLD_DIR/truth.json" --kb-from-truth \
    --out "$OUT/fidelity_kagent.md"
  tar -C "$S" -czf "$OUT/fidelity_kagent_records.tgz" rw/problems 2>/dev/null
  cp "$S"/collect_*.log "$OUT/" 2>/dev/null
}

phase_finish() {
  local waited=0 limit=${FINISH_WAIT:-420}
  while [ ! -f "$S/kb.done" ] && [ $waited -lt "$limit" ]; do sleep 5; waited=$((waited + 5)); done
  [ -f "$S/kb.done" ] || { echo "fidelity: KernelBench's harness still running after ${limit} s:"; tail -3 "$S/kb.log"; return 1; }
  tail -1 "$S/kb.log"
  "$PY" - "$S" <<'PY'
import json, sys
s = sys.argv[1]
kb = json.load(open(f"{s}/kb.json"))
kits = {p["name"] for p in json.load(open(f"{s}/suites/kb_pairs_kits.json"))}
json.dump([r for r in kb if r["name"] not in kits], open(f"{s}/kb_realworld.json", "w"), indent=1)
json.dump([r for r in kb if r["name"] in kits], open(f"{s}/kb_kits.json", "w"), indent=1)
PY
  "$PY" bench/fidelity/compare.py --collection "$S/rw" --kb "$S/kb_realworld.json" \
    --truth "$KAGENT_REALWORLD_DIR/truth.json" --kits "$S/suites/kits.json" \
    --kit-collections "$S/kits_cuda" "$S/kits_kernelbench" --kb-kits "$S/kb_kits.json" --out "$OUT/fidelity.md" \
    --verdicts-out "$OUT/kagent_verdicts.jsonl"
  cp "$S/kb.json" "$S/kb.log" "$OUT/" 2>/dev/null
  tar -C "$S" -czf "$OUT/fidelity_records.tgz" rw/problems kits_cuda/problems kits_kernelbench/problems 2>/dev/null
}

[ $# -gt 0 ] || set -- all
for phase in "$@"; do
  case "$phase" in
  start) phase_start ;;
  kagent) phase_kagent ;;
  finish) phase_finish ;;
  all) phase_start && phase_kagent && FINISH_WAIT=${FINISH_WAIT:-3600} phase_finish ;;
  *) echo "run.sh: unknown phase '$phase' (start, kagent, finish, all)" >&2; exit 2 ;;
  esac
done
