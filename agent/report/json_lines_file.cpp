#include "report/json_lines_file.h"

#include "common/files.h"

namespace kagent::report {

void read_json_lines(const std::filesystem::path& file, std::vector<std::string>& warnings,
                     const std::function<void(std::string_view line, size_t line_number)>& each) {
  const std::string name = file.filename().string();
  if (!std::filesystem::exists(file)) return;
  std::string data;
  try {
    data = read_file(file);
  } catch (const std::exception& e) {
    warnings.push_back(name + " unreadable: " + e.what());
    return;
  }
  size_t pos = 0, lineno = 0;
  while (pos < data.size()) {
    const size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) {
      // A line is written with one write that ends in its newline: without one, the writer was cut off.
      warnings.push_back(name + ": the last line is torn (" + std::to_string(data.size() - pos) +
                         " bytes without a newline) and is left out");
      return;
    }
    ++lineno;
    const std::string_view line(data.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      each(line, lineno);
    } catch (const std::exception& e) {
      warnings.push_back(name + " line " + std::to_string(lineno) + " unreadable: " + e.what());
    }
  }
}

}  // namespace kagent::report
