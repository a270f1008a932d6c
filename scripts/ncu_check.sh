#!/usr/bin/env bash
# Cross-checks kagent's achieved DRAM bandwidth against Nsight Compute on the same kernels:
#   bash scripts/ncu_check.sh [BUILD_DIR]        (default build-gpu, else build)
# 1. profiler_probe measures the elementwise and tiled-SGEMM kernels with kagent's range
#    profiler (each launch from a cold L2: kagent's read flush, and a memset flush for contrast);
# 2. the same program with --no-profile runs under ncu --clock-control none (ncu flushes the
#    caches before every launch), metrics dram__bytes_read.sum, dram__bytes_write.sum,
#    gpu__time_duration.sum;
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
    "$NCU" --clock-control none --cache-control all --print-units base --csv \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      "$PROBE" --no-profile > "$work/ncu.csv" 2> "$work/ncu.err"
    ncu_rc=$?
    [ $ncu_rc -ne 0 ] && { echo "ncu failed (rc $ncu_rc):"; tail -5 "$work/ncu.err"; grep -m3 "==ERROR==\|==WARNING==" "$work/ncu.csv"; }
  fi

  echo "== comparison"
  if [ $ours_rc -ne 0 ] || [ $ncu_rc -ne 0 ]; then
    echo "no comparison: kagent rc $ours_rc, ncu rc $ncu_rc"
    exit 2
  fi
  "$PY" - "$work/ours.txt" "$work/ncu.csv" <<'PYEOF'
import csv, re, sys

ours, memset = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"probe kernel=(\S+) dram_read=(\d+) dram_write=(\d+) duration_ns=(\d+) gbps=([\d.]+) flush=(\w+)", line)
    if m:
        # flush=read is kagent's own L2 flush; flush=memset (nvbench's way) is shown beside it.
        if m.group(6) == "none":
            continue
        (ours if m.group(6) == "read" else memset)[m.group(1)] = {
            "bytes": int(m.group(2)) + int(m.group(3)), "ns": int(m.group(4)), "gbps": float(m.group(5))}

# ncu: one row per (launch ID, metric); the last launch of each kernel is the measured one
# (the probe launches each kernel twice: warm-up, then measured after an L2 flush).
rows = [r for r in csv.reader(line for line in open(sys.argv[2]) if line.startswith('"'))]
header, rows = rows[0], rows[1:]
col = {name: i for i, name in enumerate(header)}
launches = {}
for r in rows:
    kernel = next((k for k in ours if k in r[col["Kernel Name"]]), None)
    if kernel is None:
        continue
    value = float(r[col["Metric Value"]].replace(",", ""))
    launches.setdefault(kernel, {}).setdefault(int(r[col["ID"]]), {})[r[col["Metric Name"]]] = value

worst = 0.0
print(f"{'kernel':<20} {'kagent GB/s':>12} {'ncu GB/s':>10} {'diff':>7}   {'kagent MB':>10} {'ncu MB':>10}   {'kagent us':>10} {'ncu us':>9}"
      f"   {'memset-flush MB':>15}")
for kernel, mine in ours.items():
    if kernel == "empty_kernel":  # what the profiler counts for no work: shown, not compared
        print(f"{kernel:<20} kagent {mine['bytes']/1e6:.1f} MB in {mine['ns']/1e3:.1f} us (no work: the profiler's own share)")
        continue
    if kernel not in launches:
        print(f"{kernel:<20} not in ncu's output")
        worst = float("inf")
        continue
    m = launches[kernel][max(launches[kernel])]
    nbytes = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    ns = m["gpu__time_duration.sum"]
    gbps = nbytes / ns
    diff = (mine["gbps"] - gbps) / gbps * 100
    worst = max(worst, abs(diff))
    print(f"{kernel:<20} {mine['gbps']:>12.1f} {gbps:>10.1f} {diff:>+6.1f}%   {mine['bytes']/1e6:>10.1f} {nbytes/1e6:>10.1f}"
          f"   {mine['ns']/1e3:>10.1f} {ns/1e3:>9.1f}   {memset.get(kernel, {}).get('bytes', float('nan'))/1e6:>15.1f}")
ok = worst <= 10.0
print(f"largest difference {worst:.1f}% -> {'within' if ok else 'NOT within'} 10%")
sys.exit(0 if ok else 1)
PYEOF
} 2>&1 | tee ${OUT:+"$OUT/ncu_check.txt"}
exit "${PIPESTATUS[0]}"
