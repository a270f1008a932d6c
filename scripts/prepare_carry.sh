#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .carry/ (git-ignored; device runs carry it):
# OpenSSL's headers in .carry/include, the KernelBench problems (../shared/kernelbench,
# which does not travel) in .carry/kernelbench-problems, the real model answers (../shared/realworld)
# in .carry/realworld, einops in .carry/python (put it on
# PYTHONPATH there), cpp-httplib in .carry/httplib, hiredis and redis-server (kagent serve
# --queue) in .carry/hiredis and .carry/redis, and KernelBench's own harness (its eval.py,
# for bench/eval) in .carry/kernelbench. Run here, before a GPU check.
# KernelBench's source: $KERNELBENCH_REPO (a clone or a bare git dir), else cloned from GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
tmp_wheels=$(mktemp -d)
(cd "$tmp" && apt-get download libssl-dev >/dev/null 2>&1)
mkdir -p .carry/include
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/x"; done
cp -r "$tmp/x/usr/include/openssl" .carry/include/
cp -r "$tmp/x/usr/include/x86_64-linux-gnu/openssl/"* .carry/include/openssl/
rm -rf "$tmp"
# cpp-httplib for `kagent serve`: Debian's header and library, with the brotli and zlib
# headers and libraries it was built against, in .carry/httplib (CMake looks there).
hdir=$(mktemp -d)
(cd "$hdir" && apt-get download libcpp-httplib-dev libcpp-httplib0.11 libbrotli-dev libbrotli1 zlib1g-dev >/dev/null 2>&1)
for deb in "$hdir"/*.deb; do dpkg -x "$deb" "$hdir/x"; done
rm -rf .carry/httplib && mkdir -p .carry/httplib/include .carry/httplib/lib
cp "$hdir/x/usr/include/httplib.h" "$hdir/x/usr/include/zlib.h" "$hdir/x/usr/include/zconf.h" .carry/httplib/include/
cp -r "$hdir/x/usr/include/brotli" .carry/httplib/include/
cp -P "$hdir"/x/usr/lib/x86_64-linux-gnu/libcpp-httplib.so* "$hdir"/x/usr/lib/x86_64-linux-gnu/libbrotli*.so* .carry/httplib/lib/
rm -rf "$hdir"
# hiredis for `kagent serve --queue redis://` (CMake looks in .carry/hiredis), and redis-server
# to run the queue there: .carry/redis/bin (put it on PATH); liblzf and jemalloc, which the
# machine may lack, travel in .carry/redis/lib (put it on LD_LIBRARY_PATH).
rdir=$(mktemp -d)
(cd "$rdir" && apt-get download libhiredis-dev libhiredis0.14 redis-server redis-tools liblzf1 libjemalloc2 >/dev/null 2>&1)
for deb in "$rdir"/*.deb; do dpkg -x "$deb" "$rdir/x"; done
rm -rf .carry/hiredis .carry/redis && mkdir -p .carry/hiredis/include .carry/hiredis/lib .carry/redis/bin .carry/redis/lib
cp -r "$rdir/x/usr/include/hiredis" .carry/hiredis/include/
cp -P "$rdir"/x/usr/lib/x86_64-linux-gnu/libhiredis.so* .carry/hiredis/lib/
# redis-server is a link to redis-check-rdb (one binary that reads its name): both travel.
cp -P "$rdir"/x/usr/bin/redis-server "$rdir"/x/usr/bin/redis-check-rdb "$rdir"/x/usr/bin/redis-cli .carry/redis/bin/
cp -P "$rdir"/x/usr/lib/x86_64-linux-gnu/liblzf.so* "$rdir"/x/usr/lib/x86_64-linux-gnu/libjemalloc.so* .carry/redis/lib/ 2>/dev/null || true
rm -rf "$rdir"
if [ -d ../shared/kernelbench ]; then
  rm -rf .carry/kernelbench-problems
  cp -r ../shared/kernelbench .carry/kernelbench-problems
fi
# The real model answers (bench/fidelity, bench/realworld), which do not travel either.
if [ -d ../shared/realworld ]; then
  rm -rf .carry/realworld
  cp -r ../shared/realworld .carry/realworld
fi
kb_repo=${KERNELBENCH_REPO:-}
if [ -z "$kb_repo" ]; then
  kb_repo=$(mktemp -d)/KernelBench
  git clone -q https://github.com/ScalingIntelligence/KernelBench "$kb_repo" ||
    { echo "prepare_carry: cannot clone KernelBench; set KERNELBENCH_REPO to a clone" >&2; kb_repo=; }
fi
# The commit bench/eval's RESULTS were measured with.
[ -n "$kb_repo" ] && python3 bench/eval/kernelbench_harness.py setup --kernelbench-repo "$kb_repo" --rev 423217d
# einops (pure Python; KernelBench level 3's Mamba problems import it), for PYTHONPATH there.
rm -rf .carry/python
mkdir -p .carry/python
python3 -m pip download -q --no-deps einops==0.8.2 -d "$tmp_wheels" 2>/dev/null || true
python3 - "$tmp_wheels" <<'PY'
import glob, sys, zipfile
for wheel in glob.glob(sys.argv[1] + "/einops-*.whl"):
    zipfile.ZipFile(wheel).extractall(".carry/python")
PY
rm -rf "$tmp_wheels"
du -sh .carry/*
