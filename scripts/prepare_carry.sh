#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .carry/ (git-ignored; device runs carry it):
# OpenSSL's headers in .carry/include, the KernelBench problems (../shared/kernelbench,
# which does not travel) in .carry/kernelbench-problems, and KernelBench's own harness
# (its eval.py, for bench/eval) in .carry/kernelbench. Run here, before a GPU check.
# KernelBench's source: $KERNELBENCH_REPO (a clone or a bare git dir), else cloned from GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download libssl-dev >/dev/null 2>&1)
mkdir -p .carry/include
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/x"; done
cp -r "$tmp/x/usr/include/openssl" .carry/include/
cp -r "$tmp/x/usr/include/x86_64-linux-gnu/openssl/"* .carry/include/openssl/
rm -rf "$tmp"
if [ -d ../shared/kernelbench ]; then
  rm -rf .carry/kernelbench-problems
  cp -r ../shared/kernelbench .carry/kernelbench-problems
fi
kb_repo=${KERNELBENCH_REPO:-}
if [ -z "$kb_repo" ]; then
  kb_repo=$(mktemp -d)/KernelBench
  git clone -q https://github.com/ScalingIntelligence/KernelBench "$kb_repo" ||
    { echo "prepare_carry: cannot clone KernelBench; set KERNELBENCH_REPO to a clone" >&2; kb_repo=; }
fi
# The commit bench/eval's RESULTS were measured with.
[ -n "$kb_repo" ] && python3 bench/eval/kernelbench_harness.py setup --kernelbench-repo "$kb_repo" --rev 423217d
du -sh .carry/*
