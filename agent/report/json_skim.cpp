#include "report/json_skim.h"

namespace kagent::report {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The index just past the string that opens at text[i] (a '"'), or text.size().
size_t skip_string(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return text.size();
}

// The index just past the value that starts at text[i] (after whitespace).
size_t skip_value(std::string_view text, size_t i) {
  while (i < text.size() && is_space(text[i])) ++i;
  if (i >= text.size()) return i;
  if (text[i] == '"') return skip_string(text, i);
  if (text[i] == '{' || text[i] == '[') {
    int depth = 0;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        i = skip_string(text, i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return i;
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < text.size() && text[i] != ',' && text[i] != '}' && text[i] != ']') ++i;
  return i;
}

}  // namespace

std::string skim_json(std::string_view text, const std::set<std::string_view>& keys, int min_depth) {
  std::string out;
  out.reserve(text.size() / 4);
  int depth = 0;
  size_t copied = 0;  // text[copied, i) is still to be copied to out
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      --depth;
      ++i;
    } else if (c == '"') {
      const size_t end = skip_string(text, i);
      size_t colon = end;
      while (colon < text.size() && is_space(text[colon])) ++colon;
      const bool is_key = colon < text.size() && text[colon] == ':';
      if (is_key && depth >= min_depth && end - i >= 2 && keys.count(text.substr(i + 1, end - i - 2))) {
        // The member goes whole: with the comma after it, or for the last member the one before.
        out.append(text, copied, i - copied);
        const size_t value_end = skip_value(text, colon + 1);
        size_t next = value_end;
        while (next < text.size() && is_space(text[next])) ++next;
        if (next < text.size() && text[next] == ',') {
          copied = i = next + 1;
        } else {
          while (!out.empty() && is_space(out.back())) out.pop_back();
          if (!out.empty() && out.back() == ',') out.pop_back();
          copied = i = value_end;
        }
      } else {
        i = end;
      }
    } else {
      ++i;
    }
  }
  out.append(text, copied, std::string_view::npos);
  return out;
}

}  // namespace kagent::report
