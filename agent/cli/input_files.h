// The files a command reads, checked before anything starts (a worker, nvcc, a run folder):
// one that is missing, a folder, empty, far larger than any such file, not UTF-8 text, or not
// the JSON it should be gets one line saying so, never a library's exception text and never an
// abort. Each command maps the kinds to its own documented exit statuses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent::cli {

// Larger than any problem file or kernel (KernelBench's largest are a few KiB; a model answers
// in tens of KiB): a file past it is a wrong path, not work.
inline constexpr std::uintmax_t kMaxSourceBytes = 16u << 20;
// A JSON input (a config, a reward config, a replay file of many answers).
inline constexpr std::uintmax_t kMaxJsonBytes = 256u << 20;

struct InputFileError {
  enum class Kind { Missing, Folder, NotAFile, Unreadable, TooLarge, Empty, NotText, NotJson } kind;
  std::string line;  // "problem file p.py is a folder, not a file"
  // No file to read at that path (missing, a folder, a device): the commands' "file not found".
  bool no_file() const { return kind == Kind::Missing || kind == Kind::Folder || kind == Kind::NotAFile; }
};

// `what` names the file's role ("problem file", "candidate"). `text`: must be UTF-8 text.
std::optional<InputFileError> check_input_file(const std::filesystem::path& path, const std::string& what,
                                               std::uintmax_t max_bytes, bool text);

// Reads a JSON file checked as above, or returns what is wrong ("config.json: cut short: the
// JSON ends early (line 3, column 1)").
struct JsonInput {
  nlohmann::json value;
  std::optional<InputFileError> error;
};
JsonInput read_json_input(const std::filesystem::path& path, const std::string& what,
                          std::uintmax_t max_bytes = kMaxJsonBytes);

// Whether `dir` (an output folder) exists as a folder or can be made, without making it: the
// reason it cannot ("cannot create the folder x/y: Permission denied", "x is a file, not a
// folder"), or nullopt. For the flags that name where output goes, checked before work starts.
std::optional<std::string> output_folder_problem(const std::filesystem::path& dir);

}  // namespace kagent::cli
