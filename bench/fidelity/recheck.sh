#!/usr/bin/env bash
# Second looks at the fidelity run's open disagreements, on the GPU machine (gpu_check.sh
# fidelity-recheck), in the foreground:
#   - KernelBench's harness again on the answers named in RECHECK_KB (default l2_p92_deepseekcoder,
#     whose first run's child found its problem file missing), tolerance 1e-2: $OUT/kb_recheck.json;
#   - compute-sanitizer's memcheck on the answers named in RECHECK_MEMCHECK (default l2_p44_gpt4o,
#     a CUDA fault in kagent and correct in KernelBench's run): $OUT/memcheck_<name>.log.
# usage: bash bench/fidelity/recheck.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. bench/collect/gpu_env.sh
rc=0
pairs=$(mktemp)
"$PY" - "$RW" "${RECHECK_KB:-l2_p92_deepseekcoder}" > "$pairs" <<'PY'
import json, sys
rw, names = sys.argv[1], sys.argv[2].split(",")
print(json.dumps([{"name": n, "problem": f"{rw}/problems/{n}.py", "candidate": f"{rw}/answers/{n}.py"}
                  for n in names if n]))
PY
start=$(date +%s)
"$PY" bench/fidelity/kb_verdicts.py --pairs "$pairs" --out "$OUT/kb_recheck.json" --jobs 4 --atol-rtol 1e-2 \
  --build-root "$(mktemp -d)" > "$OUT/kb_recheck.log" 2>&1 || rc=1
echo "recheck: KernelBench's harness $(tail -1 "$OUT/kb_recheck.log") ($(( $(date +%s) - start )) s)"
grep "^\[kb" "$OUT/kb_recheck.log" | sed 's/^/recheck: /'
export TORCH_EXTENSIONS_DIR=$(mktemp -d)
for n in $(echo "${RECHECK_MEMCHECK:-l2_p44_gpt4o}" | tr , ' '); do
  log=$OUT/memcheck_$n.log
  # The build first, outside the tool (torch's ninja build under memcheck gains nothing).
  "$PY" bench/fidelity/memcheck_answer.py "$RW/problems/$n.py" "$RW/answers/$n.py" > "$log" 2>&1 || rc=1
  echo "recheck: $n without memcheck: $(tail -1 "$log")"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool memcheck --print-limit 4 \
    "$PY" bench/fidelity/memcheck_answer.py "$RW/problems/$n.py" "$RW/answers/$n.py" >> "$log" 2>&1
  echo "recheck: $n under memcheck (rc=$?): $(grep -cE '^========= (Invalid|Out of bounds)' "$log") invalid access report(s); $(grep -m1 -E 'ERROR SUMMARY' "$log")"
  grep -m4 -E "^========= (Invalid|Out of bounds)|is out of bounds|Address 0x" "$log" | sed 's/^/recheck:   /'
done
rm -f "$pairs"
exit $rc
