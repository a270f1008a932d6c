#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .carry/ (git-ignored; device runs carry it):
# OpenSSL's headers in .carry/include, and the KernelBench problems (../shared/kernelbench,
# which does not travel) in .carry/kernelbench-problems. Run here, before a GPU check.
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
du -sh .carry/*
