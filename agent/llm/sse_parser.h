// Incremental parser for Server-Sent Events (text/event-stream): bytes in, whole events out,
// whatever the chunking. Handles CRLF, comments, multi-line data and named events.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kagent::llm {

struct SseEvent {
  std::string event;  // "event:" field; empty when the server sent none
  std::string data;   // "data:" lines joined with '\n'
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}
  void feed(std::string_view bytes);
  // At end of stream: dispatches an event the server did not terminate with a blank line.
  void finish();
  bool saw_any() const { return saw_any_; }

 private:
  void line(std::string_view l);
  void dispatch();
  Handler on_event_;
  std::string buf_;
  SseEvent cur_;
  bool has_data_ = false;
  bool saw_any_ = false;
};

}  // namespace kagent::llm
