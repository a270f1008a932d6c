#include "compiler/binding_declarations.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "compiler/cpp_tokens.h"

namespace kagent {

namespace {

bool is_one_of(std::string_view w, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), w) != set.end();
}

// Words before a parameter's last word that make that last word part of the type
// (`const Tensor`, `unsigned x`): then the last word is not renamed.
bool type_modifier(std::string_view w) {
  return is_one_of(w, {"const", "volatile", "unsigned", "signed", "long", "short", "struct", "class", "enum",
                       "typename", "union"});
}

bool builtin_type(std::string_view w) {
  return is_one_of(w, {"int", "long", "short", "char", "unsigned", "signed", "float", "double", "bool", "void", "auto",
                       "wchar_t", "char8_t", "char16_t", "char32_t", "const", "volatile"});
}

// Words that make a declaration something other than a plain function the binding can take.
bool unsupported_specifier(std::string_view w) {
  return is_one_of(w, {"static", "inline", "extern", "template", "constexpr", "consteval", "friend", "virtual",
                       "typedef", "using", "operator", "decltype", "auto", "__attribute__", "__global__",
                       "__device__", "__host__", "alignas", "thread_local"});
}

struct Statement {
  size_t begin, end;  // token indexes, end is the `;`
};

std::string join(const std::vector<CppToken>& t, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) out += (out.empty() ? "" : " ") + t[i].text;
  return out;
}

// Renames the parameters of the declaration whose `(` is at `open` and `)` at `close`; an
// error text when a parameter is beyond this reader (function pointers, arrays, packs).
std::string rename_parameters(std::vector<CppToken>& t, size_t open, size_t close) {
  size_t start = open + 1;
  int next = 0;
  while (start < close) {
    int depth = 0;
    bool after_default = false;
    size_t end = start, assign = close;
    for (; end < close; ++end) {
      const std::string& x = t[end].text;
      if (t[end].kind != CppTokenKind::Punct) continue;
      if (x == "=" && depth == 0 && !after_default) {
        after_default = true;
        assign = end;
      } else if (x == "(" || x == "[" || x == "{" || (x == "<" && !after_default)) {
        ++depth;
      } else if (x == ")" || x == "]" || x == "}" || (x == ">" && !after_default)) {
        --depth;
      } else if (x == "," && depth == 0) {
        break;
      }
    }
    const size_t type_end = std::min(end, assign);
    for (size_t i = start; i < type_end; ++i)
      if (t[i].text == "(" || t[i].text == "[" || t[i].text == "...")
        return "a parameter is a function pointer, an array or a pack";
    if (type_end == start) {
      if (!(start == open + 1 && end == close)) return "a parameter is empty";
    } else if (type_end - start >= 2) {
      CppToken& last = t[type_end - 1];
      const CppToken& before = t[type_end - 2];
      const bool before_ends_type = (before.kind == CppTokenKind::Word && !type_modifier(before.text)) ||
                                    (before.kind == CppTokenKind::Punct && is_one_of(before.text, {">", "&", "&&", "*"}));
      if (last.kind == CppTokenKind::Word && !builtin_type(last.text) && before_ends_type)
        last.text = fmt::format("kagent_p{}", next++);
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

std::string binding_slot_name(size_t slot) { return fmt::format("kagent_f{}", slot); }

SharedDeclarations shared_declarations(const std::vector<std::string>& cpp_sources,
                                       const std::vector<std::string>& functions) {
  SharedDeclarations out;
  std::string joined;
  for (size_t i = 0; i < cpp_sources.size(); ++i) joined += (i ? "\n" : "") + cpp_sources[i];
  auto tokens = cpp_tokens(joined);
  if (!tokens) {
    out.why_not = "cpp_sources has a raw string or an unterminated literal or comment";
    return out;
  }
  std::vector<CppToken>& t = *tokens;
  if (functions.empty()) {
    out.why_not = "the call lists no functions";
    return out;
  }
  // Statements at the top level, split at `;`; a brace anywhere is a body or a block.
  std::vector<Statement> statements;
  size_t begin = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == CppTokenKind::Preprocessor) {
      if (begin != i) {
        out.why_not = "a preprocessor line inside a declaration";
        return out;
      }
      begin = i + 1;
      continue;
    }
    if (t[i].kind == CppTokenKind::Punct && (t[i].text == "{" || t[i].text == "}")) {
      out.why_not = "cpp_sources has a body or a block (not declarations only)";
      return out;
    }
    if (t[i].kind == CppTokenKind::Punct && t[i].text == ";") {
      statements.push_back({begin, i});
      begin = i + 1;
    }
  }
  if (begin != t.size()) {
    out.why_not = "cpp_sources ends inside a declaration";
    return out;
  }
  for (const auto& tok : t)
    if (tok.kind == CppTokenKind::Word && (tok.text.rfind("kagent_", 0) == 0 || tok.text == "TORCH_EXTENSION_NAME" ||
                                   tok.text.rfind("PYBIND11", 0) == 0)) {
      out.why_not = "cpp_sources names " + tok.text;
      return out;
    }
  for (size_t slot = 0; slot < functions.size(); ++slot) {
    const std::string name = functions[slot].substr(functions[slot].find('=') + 1);
    std::vector<size_t> at;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind == CppTokenKind::Word && t[i].text == name) at.push_back(i);
      if (t[i].kind == CppTokenKind::Preprocessor && t[i].text.find(name) != std::string::npos) {
        out.why_not = name + " appears in a preprocessor line";
        return out;
      }
    }
    if (at.size() != 1) {
      out.why_not = fmt::format("{} appears {} times in cpp_sources (one declaration expected)", name, at.size());
      return out;
    }
    const size_t n = at[0];
    const auto st = std::find_if(statements.begin(), statements.end(),
                                 [n](const Statement& s) { return s.begin <= n && n < s.end; });
    // `R name ( params )`: a return type before, the parameter list closing the statement.
    if (st == statements.end() || n == st->begin || n + 1 >= st->end || t[n + 1].text != "(" ||
        t[st->end - 1].text != ")" || t[n - 1].text == "::") {
      out.why_not = name + " is not declared as `type " + name + "(parameters);` at global scope";
      return out;
    }
    int depth = 0;
    for (size_t i = n + 1; i < st->end; ++i) {
      if (t[i].text == "(") ++depth;
      if (t[i].text == ")" && --depth == 0 && i != st->end - 1) {
        out.why_not = name + "'s declaration goes on after its parameter list";
        return out;
      }
    }
    for (size_t i = st->begin; i < n; ++i)
      if (t[i].kind == CppTokenKind::Word && unsupported_specifier(t[i].text)) {
        out.why_not = name + "'s declaration has `" + t[i].text + "`";
        return out;
      }
    if (auto why = rename_parameters(t, n + 1, st->end - 1); !why.empty()) {
      out.why_not = name + ": " + why;
      return out;
    }
    t[n].text = binding_slot_name(slot);
  }
  // Preprocessor lines on lines of their own, every statement on one line, tokens one space apart.
  std::string text;
  size_t i = 0;
  for (const auto& s : statements) {
    for (; i < s.begin; ++i) text += t[i].text + "\n";
    text += join(t, s.begin, s.end) + ";\n";
    i = s.end + 1;
  }
  for (; i < t.size(); ++i) text += t[i].text + "\n";
  out.text = std::move(text);
  return out;
}

}  // namespace kagent
