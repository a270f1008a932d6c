#!/usr/bin/env bash
# Records a run folder for the report's tests: `kagent solve` of the shipped replay example,
# exactly as the README runs it, with --report. The folder (without the page, which the tests
# write themselves, and candidates/, which repeats the turns' code) goes to $DEST.
#   bash tests/report/record_run.sh            no GPU: DEST=tests/report/data/gelu_replay_nogpu
#   DEST=$OUT/gelu_replay_h200 BUILD=build-gpu bash tests/report/record_run.sh   on the H200
# Logs: $OUT/record_run.txt (OUT defaults to /tmp/kagent-record).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kagent-record}
DEST=${DEST:-tests/report/data/gelu_replay_nogpu}
B=${BUILD:-build}
mkdir -p "$OUT"
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
timeout 600 "$B/kagent" solve examples/elementwise_gelu.py --llm replay:examples/elementwise_gelu.replay.jsonl \
  --runs-dir "$runs" --report > "$OUT/record_run.txt" 2>&1
echo "solve rc=$? (0: a correct kernel; 15: no GPU, answers compiled only)" | tee -a "$OUT/record_run.txt"
run=$(find "$runs" -mindepth 1 -maxdepth 1 -type d | head -1)
[ -n "$run" ] || { echo "record_run: no run folder was written (see $OUT/record_run.txt)" >&2; exit 1; }
rm -rf "$DEST"
mkdir -p "$DEST"
cp -r "$run"/. "$DEST"/
rm -f "$DEST/report.html"
rm -rf "$DEST/candidates"  # the same code as the turns in trajectories.jsonl; the report reads those
rmdir "$DEST/partial" 2>/dev/null || true
echo "recorded $(wc -l < "$DEST/trajectories.jsonl") sample(s) in $DEST" | tee -a "$OUT/record_run.txt"
tail -8 "$OUT/record_run.txt"
