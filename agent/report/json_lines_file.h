// An append-only JSON-lines file of a run or collection (trajectories.jsonl, index.jsonl) read
// back for a page: every whole line handed on, and what cannot be shown named as a warning.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kagent::report {

// Calls `each(line, line_number)` for every non-blank line that ends with a newline. A file
// that cannot be read, a last line without its newline (the writer was cut off: torn) and a
// line for which `each` throws become warnings starting with the file's name; `each` may also
// add its own. A missing file is no warning (nothing recorded yet).
void read_json_lines(const std::filesystem::path& file, std::vector<std::string>& warnings,
                     const std::function<void(std::string_view line, size_t line_number)>& each);

}  // namespace kagent::report
