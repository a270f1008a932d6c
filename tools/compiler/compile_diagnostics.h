// Turns nvcc / cudafe++ / g++ / ptxas / ld output into the short error text the model
// sees: the first errors, deduplicated, each with file:line:col, message, the offending
// source line and a caret; temp paths shown as the candidate's own file name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kagent {

struct Diagnostic {
  std::string file;         // display path: candidate name, "<kagent binding>", "ATen/core/Tensor.h", ...
  int line = 0;             // 0 when the tool gives none (ptxas, ld, nvcc fatal)
  int column = 0;           // 1-based, 0 when unknown
  std::string tool;         // "cudafe", "gcc", "ptxas", "ld", "nvcc"
  std::string message;
  std::string source_line;  // the offending line, when known
  std::string context;      // e.g. "detected during instantiation of ..." (first line only)
  bool in_binding = false;  // the error sits in kagent's appended code
};

struct DiagnosticsContext {
  std::string display_name = "kernel.cu";  // how the candidate's file is shown
  // Text replaced in the log before parsing, in order: {temp path of the candidate,
  // display_name}, {temp folder + "/", ""}, ... so no temp path reaches the model.
  std::vector<std::pair<std::string, std::string>> replacements;
  std::string_view source;                 // the candidate's text (for source lines)
  int user_lines = 0;                      // lines after this belong to kagent's appended binding
};

// Every error in the log (warnings and notes are dropped), in order, deduplicated.
std::vector<Diagnostic> parse_errors(std::string_view log, const DiagnosticsContext& ctx);

// The short text: the first `max_errors` errors, then "... and N more errors".
std::string format_errors(const std::vector<Diagnostic>& errors, int max_errors);

// reason::kMissingForward / kSignatureMismatch when the only errors are about `forward`
// itself (kagent's checks, or an undeclared `forward`), else "".
std::string classify_reason(const std::vector<Diagnostic>& errors);

// Whether a compiler's output says it could not get memory (cudafe++, cicc, cc1plus, ptxas and
// ld each say it their own way), as they do when they hit an address-space limit.
bool reports_memory_exhaustion(std::string_view output);

// Replaces every temp path with the display name and shortens library include paths.
std::string map_paths(std::string_view text, const DiagnosticsContext& ctx);

// Keeps the head and tail of a long log: "...\n[... cut N bytes]\n..." within `limit` bytes.
std::string cut_log(std::string_view log, std::size_t limit);

}  // namespace kagent
