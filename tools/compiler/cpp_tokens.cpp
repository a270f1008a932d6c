#include "compiler/cpp_tokens.h"

#include <array>
#include <cctype>
#include <cstring>

namespace kagent {

namespace {
bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::optional<std::vector<CppToken>> cpp_tokens(std::string_view s) {
  std::vector<CppToken> out;
  bool line_start = true;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string_view::npos) i = s.size();
      continue;
    }
    if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos) return std::nullopt;
      i = end + 2;
      continue;
    }
    if (c == '#' && line_start) {
      std::string line;
      while (i < s.size() && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
          line += ' ';
          i += 2;
          continue;
        }
        line += s[i++];
      }
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
      out.push_back({CppTokenKind::Preprocessor, line});
      continue;
    }
    line_start = false;
    if (word_start(c)) {
      size_t j = i;
      while (j < s.size() && word_char(s[j])) ++j;
      if (j < s.size() && (s[j] == '"' || s[j] == '\'') && s.substr(i, j - i).find('R') != std::string_view::npos)
        return std::nullopt;  // a raw string literal
      out.push_back({CppTokenKind::Word, std::string(s.substr(i, j - i))});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      while (j < s.size() && (word_char(s[j]) || s[j] == '.' || s[j] == '\'' ||
                              ((s[j] == '+' || s[j] == '-') && std::strchr("eEpP", s[j - 1]) != nullptr)))
        ++j;
      out.push_back({CppTokenKind::Literal, std::string(s.substr(i, j - i))});
      i = j;
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      if (j >= s.size() || s[j] != c) return std::nullopt;
      out.push_back({CppTokenKind::Literal, std::string(s.substr(i, j + 1 - i))});
      i = j + 1;
      continue;
    }
    // `>` stays single, so that `>>` closing two template lists reads as two.
    static constexpr std::array<std::string_view, 9> kTwo{"::", "->", "&&", "||", "<=", ">=", "==", "!=", "..."};
    std::string_view p = s.substr(i, 1);
    for (auto t : kTwo)
      if (s.compare(i, t.size(), t) == 0) p = t;
    out.push_back({CppTokenKind::Punct, std::string(p)});
    i += p.size();
  }
  return out;
}

}  // namespace kagent
