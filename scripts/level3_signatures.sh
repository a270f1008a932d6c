#!/usr/bin/env bash
# Regenerates docs/level3_signatures.md: the worker derives the spec of every KernelBench level 3
# problem on the CPU and the level 3 loading test writes the table (signatures, parameter lists
# grouped by module, mode). The same test fails when the committed file is out of date.
# Needs a build (build/ or $BUILD_DIR) and ../shared/kernelbench (or $KAGENT_KERNELBENCH_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake --build "$BUILD_DIR" --target kagent_worker_tests kagent-worker
KAGENT_UPDATE_LEVEL3_DOC=1 "$BUILD_DIR"/tests/worker/kagent_worker_tests -tc="every KernelBench level 3*"
echo "level3_signatures: wrote docs/level3_signatures.md"
