// Writes a dataset file of JSON lines whole: into a temporary file beside it, then renamed, so
// a reader never sees half a dataset.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent::dataset {

// One compact JSON object per line, UTF-8 kept as is. Throws std::runtime_error on I/O errors.
void write_jsonl(const std::filesystem::path& file, const std::vector<nlohmann::json>& rows);

}  // namespace kagent::dataset
