#!/usr/bin/env bash
# Takes a fresh Debian/Ubuntu machine to a built kagent: system packages, PyTorch 2.11.0
# (the version on the H200 machines) and a Release build in ./build.
# Needs the CUDA 13 toolkit (nvcc) already installed, as it is on kagent's machines.
# KAGENT_WERROR=ON (as CI sets it) makes every compiler warning in kagent's code an error.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
PY=${KAGENT_PYTHON:-python3}

# libhiredis-dev: the client of `kagent serve --queue redis://` (several machines on one queue);
# redis-server runs that queue and its test (tests/serve; skipped with the reason without it).
pkgs="cmake ninja-build g++ libcurl4-openssl-dev nlohmann-json3-dev doctest-dev libcli11-dev libfmt-dev libssl-dev libcpp-httplib-dev zlib1g-dev libhiredis-dev redis-server"
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

# Slurm and munge for the sbatch script's test (tests/slurm), which starts its own cluster on
# loopback. Not needed to build or run kagent: without them that test is skipped and says why.
slurm_pkgs="munge slurmctld slurmd slurm-client"
slurm_missing=$(for p in $slurm_pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$slurm_missing" ]; then
  echo "setup: installing $(echo $slurm_missing) (the Slurm test)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $slurm_missing >/dev/null; } ||
    echo "setup: Slurm could not be installed: the sbatch script's test will be skipped" >&2
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
# The training-data and trainer packages the tests load the datasets and adapters with
# (datasets, TRL, skyrl-gym; pytest). verl and verifiers do not install on a CPU image: their
# adapter tests skip and say so.
for mod_pkg in pytest:pytest datasets:datasets trl:trl skyrl_gym:skyrl-gym; do
  "$PY" -c "import ${mod_pkg%%:*}" 2>/dev/null && continue
  echo "setup: installing ${mod_pkg#*:} for $PY"
  "$PY" -m pip install -q "${mod_pkg#*:}" || echo "setup: ${mod_pkg#*:} could not be installed: its tests will be skipped" >&2
done
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "setup: nvcc not found: install the CUDA 13 toolkit" >&2; exit 1; }
# cuobjdump disassembles candidates (their SASS) and runs nvdisasm to do it; some toolkit
# installs have neither (only nvcc and what nvcc runs). NVIDIA's PyPI wheels bring both
# (kagent tells cuobjdump where nvdisasm is). .ci/run hides the toolkit's copies, so a tool
# missing here fails CI.
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for tool in cuobjdump nvdisasm; do
  if [ ! -x "$(dirname "$(command -v nvcc)")/$tool" ] && [ ! -x "$site/nvidia/cu13/bin/$tool" ]; then
    echo "setup: installing $tool (nvidia-cuda-$tool) for $PY"
    "$PY" -m pip install -q "nvidia-cuda-$tool>=13,<14"
  fi
done

# ccache, where installed, makes a rebuild (another clone, a changed header) cost only what changed.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v "$PY")" \
  -DKAGENT_WERROR="${KAGENT_WERROR:-OFF}" "${launcher[@]}" >/dev/null
cmake --build build -j "$(nproc)"
echo "setup: built ./build/kagent"
