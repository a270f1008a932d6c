// C++ text as tokens, without a compiler: what binding_declarations.h reads declarations from and
// micro_header.h scans an answer's names with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kagent {

enum class CppTokenKind { Word, Punct, Literal, Preprocessor };

struct CppToken {
  CppTokenKind kind;
  std::string text;
};

// Tokens of C++ text, comments dropped, each preprocessor line one token (continuations
// joined). nullopt on what this reader does not take (raw strings, an unterminated literal).
std::optional<std::vector<CppToken>> cpp_tokens(std::string_view s);

}  // namespace kagent
