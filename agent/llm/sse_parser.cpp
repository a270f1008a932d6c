#include "llm/sse_parser.h"

namespace kagent::llm {

void SseParser::feed(std::string_view bytes) {
  buf_.append(bytes);
  size_t start = 0;
  while (true) {
    size_t nl = buf_.find_first_of("\r\n", start);
    if (nl == std::string::npos) break;
    // A CR at the very end may be the first half of a CRLF split across chunks: wait for more.
    if (buf_[nl] == '\r' && nl + 1 == buf_.size()) break;
    line(std::string_view(buf_).substr(start, nl - start));
    start = nl + 1;
    if (buf_[nl] == '\r' && buf_[start] == '\n') ++start;
  }
  buf_.erase(0, start);
}

void SseParser::finish() {
  if (!buf_.empty()) {
    std::string rest;
    rest.swap(buf_);
    if (rest.back() == '\r') rest.pop_back();
    line(rest);
  }
  dispatch();
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {
    dispatch();
    return;
  }
  if (l.front() == ':') return;  // comment / keep-alive
  auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) cur_.data.push_back('\n');
    cur_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    cur_.event = value;
  }
  // "id" and "retry" do not matter for a single POST answer.
}

void SseParser::dispatch() {
  if (has_data_) {
    saw_any_ = true;
    on_event_(cur_);
  }
  cur_ = SseEvent{};
  has_data_ = false;
}

}  // namespace kagent::llm
