#!/usr/bin/env bash
# .ci/toolkit_view.sh VIEW: makes VIEW a CUDA toolkit with nvcc and only what nvcc runs (the
# toolkit's other folders linked in as they are), and prints VIEW/bin. CI builds and tests
# with it first on PATH, so every other tool kagent needs (cuobjdump, nvdisasm) must come from
# scripts/setup.sh, as on a machine whose toolkit has nothing but nvcc.
set -euo pipefail
view=$1
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || { echo "toolkit_view: no nvcc (install the CUDA 13 toolkit)" >&2; exit 1; }
bin=$(dirname "$(readlink -f "$nvcc")")
root=$(dirname "$bin")
rm -rf "$view"
mkdir -p "$view/bin"
for entry in "$root"/*; do
  [ "$(basename "$entry")" = bin ] || ln -s "$entry" "$view/"
done
# What nvcc itself runs or reads from its own folder (nvcc.profile: cicc comes from nvvm/).
for name in nvcc.profile cudafe++ ptxas fatbinary nvlink bin2c crt __nvcc_device_query; do
  if [ -e "$bin/$name" ]; then ln -s "$bin/$name" "$view/bin/$name"; fi
done
# nvcc copied, not linked: CMake and nvcc both take the real folder of the nvcc they run.
cp "$bin/nvcc" "$view/bin/nvcc"
echo "$view/bin"
