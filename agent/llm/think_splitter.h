// Splits "<think>...</think>" out of streamed content (DeepSeek-R1, QwQ and others served
// without a reasoning parser put the reasoning there). Tags may be split across chunks.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kagent::llm {

class ThinkSplitter {
 public:
  // kind: true for reasoning, false for answer text.
  using Emit = std::function<void(bool reasoning, std::string_view text)>;
  explicit ThinkSplitter(Emit emit) : emit_(std::move(emit)) {}
  void feed(std::string_view content);
  void finish();  // flushes a held-back partial tag as plain text

 private:
  Emit emit_;
  std::string pending_;  // possible start of a tag, held until decided
  bool in_think_ = false;
};

}  // namespace kagent::llm
