#include "llm/think_splitter.h"

namespace kagent::llm {

namespace {
constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

// Length of the longest suffix of s that is a proper prefix of tag.
size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}
}  // namespace

void ThinkSplitter::feed(std::string_view content) {
  std::string s = pending_;
  s.append(content);
  pending_.clear();
  std::string_view rest = s;
  while (!rest.empty()) {
    std::string_view tag = in_think_ ? kClose : kOpen;
    size_t pos = rest.find(tag);
    if (pos != std::string_view::npos) {
      if (pos > 0) emit_(in_think_, rest.substr(0, pos));
      rest.remove_prefix(pos + tag.size());
      in_think_ = !in_think_;
      continue;
    }
    size_t keep = partial_tag_suffix(rest, tag);
    if (rest.size() > keep) emit_(in_think_, rest.substr(0, rest.size() - keep));
    pending_ = std::string(rest.substr(rest.size() - keep));
    break;
  }
}

void ThinkSplitter::finish() {
  if (!pending_.empty()) emit_(in_think_, pending_);
  pending_.clear();
}

}  // namespace kagent::llm
