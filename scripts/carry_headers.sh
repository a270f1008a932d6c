#!/usr/bin/env bash
# Gathers the headers the GPU machine lacks (OpenSSL's, cpp-httplib) into .carry/include,
# a git-ignored folder that device runs carry along. Run here, before a GPU check.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download libssl-dev libcpp-httplib-dev >/dev/null 2>&1)
mkdir -p .carry/include
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/x"; done
cp -r "$tmp/x/usr/include/openssl" .carry/include/
cp -r "$tmp/x/usr/include/x86_64-linux-gnu/openssl/"* .carry/include/openssl/
cp "$tmp/x/usr/include/httplib.h" .carry/include/
rm -rf "$tmp"
du -sh .carry/include
