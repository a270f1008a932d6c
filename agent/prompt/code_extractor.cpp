#include "prompt/code_extractor.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kagent::prompt {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

struct Fence {
  char ch = 0;      // '`' or '~'
  size_t len = 0;   // number of fence characters
  std::string_view info;  // text after the fence, trimmed
};

// A fence line: up to 3 spaces, then 3+ of '`' or '~'.
std::optional<Fence> fence_of(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
  char ch = line[i];
  size_t j = i;
  while (j < line.size() && line[j] == ch) ++j;
  if (j - i < 3) return std::nullopt;
  std::string_view info = line.substr(j);
  while (!info.empty() && std::isspace(static_cast<unsigned char>(info.front()))) info.remove_prefix(1);
  while (!info.empty() && std::isspace(static_cast<unsigned char>(info.back()))) info.remove_suffix(1);
  if (ch == '`' && info.find('`') != std::string_view::npos) return std::nullopt;  // inline code, not a fence
  return Fence{ch, j - i, info};
}

// The language tag: the info string's first word, cut at '{' or ':' ("cuda:kernel.cu", "cuda {.numberLines}").
std::string tag_of(std::string_view info) {
  size_t n = 0;
  while (n < info.size() && !std::isspace(static_cast<unsigned char>(info[n])) && info[n] != '{' && info[n] != ':' &&
         info[n] != ',')
    ++n;
  return lower(info.substr(0, n));
}

bool is_closing(std::string_view line, const Fence& open) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t j = i;
  while (j < line.size() && line[j] == open.ch) ++j;
  if (j - i < open.len) return false;
  for (size_t k = j; k < line.size(); ++k)
    if (!std::isspace(static_cast<unsigned char>(line[k]))) return false;
  return true;
}

const char* fence_word(AnswerFormat f) { return f == AnswerFormat::Cuda ? "```cuda" : "```python"; }

}  // namespace

bool language_matches(AnswerFormat format, std::string_view tag) {
  std::string t = lower(tag);
  if (format == AnswerFormat::Cuda)
    return t == "cuda" || t == "cu" || t == "cpp" || t == "c++" || t == "cxx" || t == "cuh";
  return t == "python" || t == "py" || t == "python3";
}

Extraction extract_code(std::string_view answer, AnswerFormat format) {
  Extraction result;
  int count = 0;
  std::optional<ExtractedCode> first;
  std::vector<std::string> others;

  std::optional<Fence> open;
  bool open_matches = false;
  std::string open_tag;
  size_t open_line = 0, body_begin = 0;
  bool truncated = false;

  size_t pos = 0, line_no = 0;
  while (pos < answer.size()) {
    size_t nl = answer.find('\n', pos);
    size_t end = nl == std::string_view::npos ? answer.size() : nl;
    std::string_view line = answer.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    size_t next = nl == std::string_view::npos ? answer.size() : nl + 1;

    if (!open) {
      if (auto f = fence_of(line)) {
        open = f;
        open_tag = tag_of(f->info);
        open_matches = language_matches(format, open_tag);
        open_line = line_no;
        body_begin = next;
      }
    } else if (is_closing(line, *open)) {
      if (open_matches) {
        if (++count == 1) {
          std::string code(answer.substr(body_begin, pos - body_begin));
          // normalise CRLF answers to LF
          code.erase(std::remove(code.begin(), code.end(), '\r'), code.end());
          if (!code.empty() && code.back() != '\n') code += '\n';
          first = ExtractedCode{std::move(code), open_tag, open_line};
        }
      } else {
        if (std::find(others.begin(), others.end(), open_tag) == others.end()) others.push_back(open_tag);
      }
      open.reset();
    }
    pos = next;
  }
  if (open && open_matches) truncated = true;

  FormatError err;
  err.count = count;
  err.other_languages = others;
  if (truncated) {
    err.kind = format_error::kNoCode;
    err.truncated = true;
    err.message = fmt::format("the answer ends inside the {} block opened on line {} (truncated?); no complete code",
                              fence_word(format), open_line);
  } else if (count == 0) {
    err.kind = format_error::kNoCode;
    err.message = fmt::format("no {} block in the answer", fence_word(format));
    if (!others.empty()) err.message += fmt::format(" (only blocks tagged: {})", fmt::join(others, ", "));
  } else if (count > 1) {
    err.kind = format_error::kSeveralBlocks;
    err.message = fmt::format("{} {} blocks in the answer; exactly one is expected", count, fence_word(format));
  } else {
    result.code = std::move(first);
    return result;
  }
  result.error = std::move(err);
  return result;
}

}  // namespace kagent::prompt
