#include "cli/input_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "cli/errors.h"
#include "common/files.h"
#include "common/units.h"
#include "common/utf8.h"

namespace kagent::cli {

namespace fs = std::filesystem;

std::optional<InputFileError> check_input_file(const fs::path& path, const std::string& what, std::uintmax_t max_bytes,
                                               bool text) {
  using Kind = InputFileError::Kind;
  const std::string name = what + " " + path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return InputFileError{Kind::Missing, "no such file: " + path.string()};
  if (fs::is_directory(st)) return InputFileError{Kind::Folder, name + " is a folder, not a file"};
  if (!fs::is_regular_file(st)) return InputFileError{Kind::NotAFile, name + " is not a regular file"};
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return InputFileError{Kind::Unreadable, fmt::format("cannot read {}: {}", name, ec.message())};
  if (size > max_bytes)
    return InputFileError{Kind::TooLarge, fmt::format("{} is {}; a {} is at most {}", name, format_bytes(double(size)), what,
                                                      format_bytes(double(max_bytes)))};
  if (size == 0) return InputFileError{Kind::Empty, name + " is empty"};
  if (!text) return std::nullopt;
  std::string data;
  try {
    data = read_file(path);
  } catch (const std::exception&) {
    return InputFileError{Kind::Unreadable, "cannot read " + name};
  }
  if (!is_valid_utf8(data)) return InputFileError{Kind::NotText, name + " is not UTF-8 text"};
  return std::nullopt;
}

std::optional<std::string> output_folder_problem(const fs::path& dir) {
  std::error_code ec;
  const fs::path full = fs::absolute(dir, ec).lexically_normal();
  if (ec) return fmt::format("cannot create the folder {}: {}", dir.string(), ec.message());
  // The nearest part of the path that exists must be a folder this process can write in (or
  // `dir` itself, existing, must be a folder).
  fs::path at = full;
  while (!at.empty() && !fs::exists(at, ec)) {
    if (at == at.parent_path()) break;
    at = at.parent_path();
  }
  if (at == full) {
    if (!fs::is_directory(full, ec)) return fmt::format("{} is a file, not a folder", dir.string());
    return std::nullopt;
  }
  if (!fs::is_directory(at, ec))
    return fmt::format("cannot create the folder {}: {} is a file, not a folder", dir.string(), at.string());
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    return fmt::format("cannot create the folder {}: {} ({})", dir.string(), std::strerror(errno), at.string());
  return std::nullopt;
}

JsonInput read_json_input(const fs::path& path, const std::string& what, std::uintmax_t max_bytes) {
  JsonInput in;
  if (auto err = check_input_file(path, what, max_bytes, /*text=*/false)) {
    in.error = std::move(err);
    return in;
  }
  try {
    in.value = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    // plain_message: "not valid JSON (line 1, column 5)", "cut short: ...", "empty: no JSON in it".
    in.error = InputFileError{InputFileError::Kind::NotJson, what + " " + path.string() + ": " + plain_message(e.what())};
  } catch (const std::exception&) {
    in.error = InputFileError{InputFileError::Kind::Unreadable, "cannot read " + what + " " + path.string()};
  }
  return in;
}

}  // namespace kagent::cli
