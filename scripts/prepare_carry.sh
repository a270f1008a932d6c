#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .carry/ (git-ignored; device runs carry it):
# OpenSSL's headers in .carry/include, and the KernelBench problems (../shared/kernelbench,
# which does not travel) in .carry/kernelbench-problems, and cpp-httplib in .carry/httplib.
# Run here, before a GPU check.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
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
if [ -d ../shared/kernelbench ]; then
  rm -rf .carry/kernelbench-problems
  cp -r ../shared/kernelbench .carry/kernelbench-problems
fi
du -sh .carry/*
