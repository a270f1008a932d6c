#!/usr/bin/env bash
# Cross-checks kagent's achieved DRAM bandwidth against Nsight Compute on the same kernels:
#   bash scripts/ncu_check.sh [BUILD_DIR]        (default build-gpu, else build)
# 1. profiler_probe measures the elementwise and tiled-SGEMM kernels with kagent's range
#    profiler (each launch from a cold L2: kagent's read flush, and a memset flush for contrast);
# 2. the same program with --no-profile runs under ncu --clock-control none, twice: with
#    --cache-control none (L2 as kagent's flush leaves it: the comparison) and --cache-control
#    all (ncu cleans and invalidates L2 first, which no user-level flush can do: reference),
#    metrics dram__bytes_read.sum, dram__bytes_write.sum, gpu__time_duration.sum;
# 3. both side by side per kernel with the difference; exit 1 when one differs by more than 10%.
# Output also goes to $OUT/ncu_check.txt when OUT is set. Needs hardware counter permission
# (ncu and CUPTI need the same): under gVisor both fail, and the script says so.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
[ -x "$BUILD/profiler_probe" ] || BUILD=build
PROBE=$BUILD/profiler_probe
[ -x "$PROBE" ] || { echo "ncu_check: no $PROBE; build the target profiler_probe first" >&2; exit 2; }
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
PY=${KAGENT_PYTHON:-$(command -v python3)}
[ -n "${OUT:-}" ] && mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

{
  echo "== kagent range profiler ($PROBE)"
  "$PROBE" > "$work/ours.txt" 2>&1
  ours_rc=$?
  cat "$work/ours.txt"

  echo "== Nsight Compute (${NCU:-not found})"
  ncu_rc=1
  if [ -n "$NCU" ]; then
    # none: ncu leaves the caches as kagent's flush left them (the comparison); all: ncu cleans
    # and invalidates them before the launch (shown for reference).
    for cc in none all; do
      "$NCU" --clock-control none --cache-control $cc --print-units base --csv \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        "$PROBE" --no-profile > "$work/ncu_$cc.csv" 2> "$work/ncu.err"
      ncu_rc=$?
      [ $ncu_rc -ne 0 ] && { echo "ncu failed (rc $ncu_rc):"; tail -5 "$work/ncu.err"; grep -m3 "==ERROR==\|==WARNING==" "$work/ncu_$cc.csv"; break; }
    done
  fi

  echo "== comparison"
  if [ $ours_rc -ne 0 ] || [ $ncu_rc -ne 0 ]; then
    echo "no comparison: kagent rc $ours_rc, ncu rc $ncu_rc"
    exit 2
  fi
  "$PY" - "$work/ours.txt" "$work/ncu_none.csv" "$work/ncu_all.csv" <<'PYEOF'
import csv, re, sys

ours, memset = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"probe kernel=(\S+) dram_read=(\d+) dram_write=(\d+) duration_ns=(\d+) gbps=([\d.]+) flush=(\w+)", line)
    if m:
        # flush=kagent is what kagent measures with; flush=read (a read pass) is shown beside it.
        if m.group(6) == "none":
            continue
        (ours if m.group(6) == "kagent" else memset)[m.group(1)] = {
            "bytes": int(m.group(2)) + int(m.group(3)), "ns": int(m.group(4)), "gbps": float(m.group(5))}

# ncu: one row per (launch ID, metric); the last launch of each kernel is the measured one
# (the probe launches each kernel twice: warm-up, then measured after kagent's L2 flush).
def ncu_launches(path):
    rows = [r for r in csv.reader(line for line in open(path) if line.startswith('"'))]
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    launches = {}
    for r in rows:
        kernel = next((k for k in ours if k in r[col["Kernel Name"]]), None)
        if kernel is None:
            continue
        value = float(r[col["Metric Value"]].replace(",", ""))
        launches.setdefault(kernel, {}).setdefault(int(r[col["ID"]]), {})[r[col["Metric Name"]]] = value
    out = {}
    for kernel, by_id in launches.items():
        m = by_id[max(by_id)]
        out[kernel] = {"bytes": m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"], "ns": m["gpu__time_duration.sum"]}
    return out

same, clean = ncu_launches(sys.argv[2]), ncu_launches(sys.argv[3])
worst = 0.0
print("ncu --cache-control none: the same cache state as kagent's measurement (compared); "
      "all: ncu cleans and invalidates L2 first (reference)")
print(f"{'kernel':<20} {'kagent GB/s':>12} {'ncu GB/s':>10} {'diff':>7}   {'kagent MB':>10} {'ncu MB':>8}   "
      f"{'kagent us':>10} {'ncu us':>8}   {'ncu(all) GB/s':>13} {'MB':>7}   {'read-flush MB':>13}")
for kernel, mine in ours.items():
    if kernel == "empty_kernel":  # what the profiler counts for no work: shown, not compared
        print(f"{kernel:<20} kagent {mine['bytes']/1e6:.3f} MB in {mine['ns']/1e3:.1f} us (no work: the profiler's own share)")
        continue
    if kernel not in same:
        print(f"{kernel:<20} not in ncu's output")
        worst = float("inf")
        continue
    n = same[kernel]
    gbps = n["bytes"] / n["ns"]
    diff = (mine["gbps"] - gbps) / gbps * 100
    worst = max(worst, abs(diff))
    c = clean.get(kernel, {"bytes": float("nan"), "ns": 1})
    print(f"{kernel:<20} {mine['gbps']:>12.1f} {gbps:>10.1f} {diff:>+6.1f}%   {mine['bytes']/1e6:>10.1f} {n['bytes']/1e6:>8.1f}"
          f"   {mine['ns']/1e3:>10.1f} {n['ns']/1e3:>8.1f}   {c['bytes']/c['ns']:>13.1f} {c['bytes']/1e6:>7.1f}"
          f"   {memset.get(kernel, {}).get('bytes', float('nan'))/1e6:>13.1f}")
ok = worst <= 10.0
print(f"largest difference {worst:.1f}% -> {'within' if ok else 'NOT within'} 10%")
sys.exit(0 if ok else 1)
PYEOF
} 2>&1 | tee ${OUT:+"$OUT/ncu_check.txt"}
exit "${PIPESTATUS[0]}"
