// The machine's NVIDIA GPUs as the driver lists them, counted without a CUDA context (the
// orchestrator holds none): what `kagent serve --gpus` is checked against at start-up, before
// a worker is started on an index that does not exist.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kagent::serve {

// GPUs in /proc/driver/nvidia/gpus (one folder each), else /dev/nvidia<N> device files; 0
// without the driver.
int machine_gpu_count();

// Why `indices` cannot be used on a machine with `count` GPUs ("5: this machine has 1 GPU
// (index 0)"); nullopt when every index exists.
std::optional<std::string> gpu_indices_problem(const std::vector<int>& indices, int count);

}  // namespace kagent::serve
