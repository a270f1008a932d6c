#include "profiler/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace kagent::profiler {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)::";

void erase_all(std::string& s, std::string_view what) {
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos)) s.erase(pos, what.size());
}

// Replaces every top-level template argument list "<...>" with "<...>".
std::string collapse_templates(const std::string& s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '<') {
      if (depth++ == 0) out += "<...>";
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

std::string qualified_name(std::string_view s) {
  // Parameter list: the parenthesised group that ends the string.
  size_t end = s.size();
  if (end > 0 && s[end - 1] == ')') {
    int depth = 0;
    for (size_t i = end; i-- > 0;) {
      if (s[i] == ')') ++depth;
      else if (s[i] == '(' && --depth == 0) {
        // "(anonymous namespace)" alone is no parameter list.
        if (i > 0) end = i;
        break;
      }
    }
  }
  std::string_view head = s.substr(0, end);
  // Return type: everything up to the last space outside <> and () (templates print one).
  size_t cut = 0;
  int angle = 0, paren = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(') ++paren;
    else if (c == ')' && paren > 0) --paren;
    else if (c == ' ' && angle == 0 && paren == 0) cut = i + 1;
  }
  std::string name(head.substr(cut));
  return name.empty() ? std::string(s) : name;
}

std::string kernel_family(std::string_view demangled) {
  std::string name = qualified_name(demangled);
  erase_all(name, kAnonymous);
  return collapse_templates(name);
}

std::string short_kernel_name(std::string_view demangled, size_t max_chars) {
  std::string name = qualified_name(demangled);
  erase_all(name, kAnonymous);
  if (name.size() <= max_chars) return name;
  name = collapse_templates(name);
  if (name.size() <= max_chars) return name;
  // Keep the innermost scopes that fit: "...::kernel<...>".
  size_t keep = std::string::npos;
  for (size_t sep = name.rfind("::"); sep != std::string::npos && sep > 0; sep = name.rfind("::", sep - 1)) {
    if (3 + name.size() - sep > max_chars) break;
    keep = sep;
  }
  if (keep != std::string::npos) name = "..." + name.substr(keep);
  if (name.size() > max_chars && max_chars > 3) name = name.substr(0, max_chars - 3) + "...";
  return name;
}

}  // namespace kagent::profiler
