#!/usr/bin/env bash
# One device call: scripts/gpu_check.sh SUITE... under a deadline (default 560 s, inside the
# device's 10-minute limit), then every log bundled into $OUT/gpu-out.tgz, so that what ran comes
# back even when a suite runs long (a device call returns at most 8 files).
# usage: bash scripts/gpu_call.sh [--deadline S] SUITE...
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
deadline=560
if [ "${1:-}" = --deadline ]; then deadline=$2; shift 2; fi
dest=${OUT:-$PWD/gpu-out}
mkdir -p "$dest"
work=$(mktemp -d)
OUT=$work timeout --kill-after=5 "$deadline" bash scripts/gpu_check.sh "$@"
rc=$?
[ $rc -eq 124 ] && echo "gpu_call: stopped at the ${deadline} s deadline"
# Compile caches and built libraries are not logs: left out, the bundle stays small enough to come back.
tar -C "$work" --exclude=cache --exclude='*.so' -czf "$dest/gpu-out.tgz" . && echo "gpu_call: logs in $dest/gpu-out.tgz ($(du -h "$dest/gpu-out.tgz" | cut -f1))"
exit $rc
