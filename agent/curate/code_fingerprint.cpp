#include "curate/code_fingerprint.h"

#include <cctype>

#include "common/sha256.h"

namespace kagent::curate {

std::string normalise_code(std::string_view code) {
  std::string out;
  bool space = false;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  // Whitespace survives only where it separates two words ("int a"); around punctuation it goes.
  auto emit = [&](char c) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      return;
    }
    if (space && word(out.back()) && word(c)) out += ' ';
    space = false;
    out += c;
  };
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '"' || c == '\'') {  // a literal, copied whole
      emit(c);
      for (++i; i < code.size() && code[i] != c && code[i] != '\n'; ++i) {
        out += code[i];
        if (code[i] == '\\' && i + 1 < code.size()) out += code[++i];
      }
      if (i < code.size()) emit(code[i]);
    } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      while (i < code.size() && code[i] != '\n') ++i;
      space = !out.empty();
    } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
      const size_t end = code.find("*/", i + 2);
      i = end == std::string_view::npos ? code.size() : end + 1;
      space = !out.empty();
    } else if (c == '#' && (i + 1 >= code.size() || code[i + 1] == ' ' || code[i + 1] == '\n')) {
      // "# comment" in Python; C preprocessor lines (#include) have no space after '#'.
      while (i < code.size() && code[i] != '\n') ++i;
      space = !out.empty();
    } else {
      emit(c);
    }
  }
  return out;
}

std::string code_fingerprint(std::string_view code) { return sha256_hex(normalise_code(code)); }

}  // namespace kagent::curate
