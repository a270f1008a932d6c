#include "dataset/jsonl_writer.h"

#include <string>

#include "common/files.h"

namespace kagent::dataset {

void write_jsonl(const std::filesystem::path& file, const std::vector<nlohmann::json>& rows) {
  std::string text;
  for (const auto& r : rows) {
    // Model output may hold invalid UTF-8; a replacement character keeps the line loadable.
    text += r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  }
  write_file_atomic(file, text, /*durable=*/true);
}

}  // namespace kagent::dataset
