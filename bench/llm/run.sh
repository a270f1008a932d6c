#!/usr/bin/env bash
# Builds and runs the LLM client benchmark; writes its output to bench/llm/RESULTS.md.
# Usage: bench/llm/run.sh [BUILD_DIR]   (default: build-llm, else build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-}"
if [[ -z "$build" ]]; then
  build="$root/build-llm"
  [[ -d "$build" ]] || build="$root/build"
fi
cmake --build "$build" --target llm_bench -j2
"$build/bench/llm/llm_bench" --requests 1000 --in-flight 64 | tee "$root/bench/llm/RESULTS.md"
