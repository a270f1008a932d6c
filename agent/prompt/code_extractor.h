// Pulls the candidate's code out of a model answer: exactly one fenced block in the asked
// language. Anything else is a FormatError, which the loop turns into format_error.txt.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prompt/answer_format.h"

namespace kagent::prompt {

namespace format_error {
inline constexpr const char* kNoCode = "no_code";
inline constexpr const char* kSeveralBlocks = "several_blocks";
}  // namespace format_error

struct FormatError {
  std::string kind;          // format_error::kNoCode | kSeveralBlocks
  int count = 0;             // complete blocks in the asked language that were found
  bool truncated = false;    // no_code because the answer ends inside an unterminated block
  std::vector<std::string> other_languages;  // distinct tags of complete blocks in other languages ("" = untagged)
  std::string message;       // one human line (logs, trajectories); the model gets format_error.txt
};

struct ExtractedCode {
  std::string code;          // the block's lines, ending with a newline
  std::string language;      // the tag as written, lower-cased ("cuda", "cu", "python", ...)
  size_t line = 0;           // 1-based line of the opening fence
};

struct Extraction {
  std::optional<ExtractedCode> code;
  std::optional<FormatError> error;  // exactly one of the two is set
  bool ok() const { return code.has_value(); }
};

// The tags accepted for a format: cuda, cu, cpp, c++, cxx, cuh for Cuda; python, py, python3
// for KernelBench. Tags compare case-insensitively; the first word of the info string counts.
bool language_matches(AnswerFormat format, std::string_view tag);

// Fences: a line that starts (after at most 3 spaces) with 3+ backticks or tildes opens a
// block; a line of only the same character, at least as many, closes it. One pass over the
// answer (linear time; answers of megabytes are fine).
Extraction extract_code(std::string_view answer, AnswerFormat format);

}  // namespace kagent::prompt
