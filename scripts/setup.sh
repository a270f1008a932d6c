#!/usr/bin/env bash
# Takes a fresh Debian/Ubuntu machine to a built kagent: system packages, PyTorch 2.11.0
# (the version on the H200 machines) and a Release build in ./build.
# Needs the CUDA 13 toolkit (nvcc) already installed, as it is on kagent's machines.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
PY=${KAGENT_PYTHON:-python3}

pkgs="cmake ninja-build g++ libcurl4-openssl-dev nlohmann-json3-dev doctest-dev libcli11-dev libfmt-dev libssl-dev libcpp-httplib-dev"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  echo "setup: installing $(echo $missing)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# Headless Chromium for the report's browser test (tests/report). Not needed to build or run
# kagent: where it cannot be installed, that test is skipped and says why.
if ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (the report's browser test)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null; } ||
    echo "setup: chromium could not be installed: the report's browser test will be skipped" >&2
fi

if ! "$PY" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.11.0")' 2>/dev/null; then
  echo "setup: installing torch==2.11.0 for $PY (large download)"
  "$PY" -m pip install -q torch==2.11.0 numpy
fi
# KernelBench level 3's Mamba problems import einops.
if ! "$PY" -c 'import einops' 2>/dev/null; then
  echo "setup: installing einops for $PY"
  "$PY" -m pip install -q einops==0.8.2
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "setup: nvcc not found: install the CUDA 13 toolkit" >&2; exit 1; }

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v "$PY")" >/dev/null
cmake --build build -j "$(nproc)"
echo "setup: built ./build/kagent"
