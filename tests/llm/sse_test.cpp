// SSE framing and <think> splitting, fed in every possible chunking.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "llm/sse_parser.h"
#include "llm/think_splitter.h"

using namespace kagent::llm;

namespace {
std::vector<SseEvent> parse_in_chunks(const std::string& text, size_t chunk) {
  std::vector<SseEvent> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e); });
  for (size_t i = 0; i < text.size(); i += chunk) p.feed(std::string_view(text).substr(i, chunk));
  p.finish();
  return out;
}
}  // namespace

TEST_CASE("sse: events, comments, multi-line data, CRLF, any chunking") {
  const std::string text =
      ": keep-alive\r\n"
      "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
      "data: line1\ndata: line2\n\n"
      "data:nospace\n\n"
      "data: [DONE]\n\n";
  for (size_t chunk = 1; chunk <= text.size(); ++chunk) {
    auto ev = parse_in_chunks(text, chunk);
    REQUIRE(ev.size() == 4);
    CHECK(ev[0].event == "message_start");
    CHECK(ev[0].data == "{\"a\":1}");
    CHECK(ev[1].event.empty());
    CHECK(ev[1].data == "line1\nline2");
    CHECK(ev[2].data == "nospace");
    CHECK(ev[3].data == "[DONE]");
  }
}

TEST_CASE("sse: an unterminated last event is delivered by finish()") {
  auto ev = parse_in_chunks("data: x\n\ndata: tail", 4);
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].data == "tail");
}

TEST_CASE("think splitter: tags split at every byte boundary") {
  const std::string content = "<think>I should say hi.</think>Hi there! a<b <thin";
  for (size_t chunk = 1; chunk <= content.size(); ++chunk) {
    std::string text, reasoning;
    ThinkSplitter s([&](bool r, std::string_view t) { (r ? reasoning : text).append(t); });
    for (size_t i = 0; i < content.size(); i += chunk) s.feed(std::string_view(content).substr(i, chunk));
    s.finish();
    CHECK(reasoning == "I should say hi.");
    CHECK(text == "Hi there! a<b <thin");
  }
}

TEST_CASE("think splitter: content without tags passes straight through") {
  std::vector<std::string> parts;
  ThinkSplitter s([&](bool r, std::string_view t) {
    CHECK_FALSE(r);
    parts.emplace_back(t);
  });
  s.feed("plain ");
  s.feed("text");
  s.finish();
  CHECK(parts == std::vector<std::string>{"plain ", "text"});
}
