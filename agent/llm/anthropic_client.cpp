#include "llm/anthropic_client.h"

#include <fmt/format.h>

#include "llm/sse_parser.h"

namespace kagent::llm {

using nlohmann::json;

namespace {

long int_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<long>() : 0;
}

std::string str_or_empty(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Anthropic counts cached prompt tokens apart; the prompt is all of them. It does not report
// thinking tokens separately (they are inside output_tokens), so reasoning_tokens stays 0.
void read_usage(const json& u, Usage& out) {
  if (!u.is_object()) return;
  if (u.contains("input_tokens"))
    out.prompt_tokens = int_field(u, "input_tokens") + int_field(u, "cache_creation_input_tokens") +
                        int_field(u, "cache_read_input_tokens");
  if (u.contains("output_tokens")) out.completion_tokens = int_field(u, "output_tokens");
  out.total_tokens = out.prompt_tokens + out.completion_tokens;
}

[[noreturn]] void throw_error_event(const json& j) {
  const json& e = j.contains("error") ? j["error"] : j;
  std::string type = str_or_empty(e, "type"), msg = str_or_empty(e, "message");
  if (type == "overloaded_error" || type == "api_error" || type == "rate_limit_error")
    throw RecoverableError(type == "rate_limit_error" ? ErrorKind::RateLimited : ErrorKind::ServerError,
                           fmt::format("{} mid-stream: {}", type, msg), 200);
  throw TerminalError(ErrorKind::BadRequest, fmt::format("{}: {}", type, msg), 200);
}

class AnthropicDecoder : public StreamDecoder {
 public:
  AnthropicDecoder(ChatResponse& out, const StreamCallback& emit)
      : out_(out), emit_(emit), sse_([this](const SseEvent& e) { on_event(e); }) {}

  void feed(std::string_view bytes) override { sse_.feed(bytes); }

  void finish() override {
    sse_.finish();
    if (stopped_) return;
    throw RecoverableError(ErrorKind::StreamCut,
                           sse_.saw_any() ? "answer cut off: the stream ended before message_stop"
                                          : "empty stream: no events before the connection closed",
                           200);
  }

 private:
  void piece(bool reasoning, const std::string& t) {
    if (t.empty()) return;
    (reasoning ? out_.reasoning : out_.text).append(t);
    emit_(StreamEvent{reasoning ? StreamEvent::Kind::Reasoning : StreamEvent::Kind::Text, t});
  }

  void on_event(const SseEvent& e) {
    json j = parse_json_or_throw(e.data, "stream event");
    std::string type = str_or_empty(j, "type");
    if (type.empty()) type = e.event;
    if (type == "message_start") {
      const json& m = j["message"];
      if (m.is_object()) {
        out_.model = str_or_empty(m, "model");
        if (m.contains("usage")) read_usage(m["usage"], out_.usage);
      }
    } else if (type == "content_block_start") {
      const json& b = j["content_block"];
      if (b.is_object()) {
        std::string bt = str_or_empty(b, "type");
        if (bt == "text") piece(false, str_or_empty(b, "text"));
        if (bt == "thinking") piece(true, str_or_empty(b, "thinking"));
      }
    } else if (type == "content_block_delta") {
      const json& d = j["delta"];
      if (d.is_object()) {
        std::string dt = str_or_empty(d, "type");
        if (dt == "text_delta") piece(false, str_or_empty(d, "text"));
        if (dt == "thinking_delta") piece(true, str_or_empty(d, "thinking"));
        // signature_delta, input_json_delta: not part of a plain chat answer
      }
    } else if (type == "message_delta") {
      if (j.contains("delta") && j["delta"].is_object()) {
        std::string sr = str_or_empty(j["delta"], "stop_reason");
        if (!sr.empty()) out_.finish_reason = sr;
      }
      if (j.contains("usage")) {
        // message_delta carries the final output count (and sometimes input again).
        Usage u = out_.usage;
        read_usage(j["usage"], u);
        out_.usage = u;
      }
    } else if (type == "message_stop") {
      stopped_ = true;
    } else if (type == "error") {
      throw_error_event(j);
    }
    // "ping" and unknown future events are ignored.
  }

  ChatResponse& out_;
  const StreamCallback& emit_;
  SseParser sse_;
  bool stopped_ = false;
};

}  // namespace

int AnthropicClient::thinking_budget(const std::string& effort) {
  if (effort == "low") return 2048;
  if (effort == "medium") return 8192;
  if (effort == "high") return 24576;
  return 0;
}

HttpRequest AnthropicClient::build(const ChatRequest& req, const Sampling& s) const {
  json messages = json::array();
  for (const auto& m : req.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  int max_tokens = s.max_tokens.value_or(kDefaultMaxTokens);
  json body = {{"model", cfg_.model}, {"messages", messages}, {"max_tokens", max_tokens}};
  if (!req.system.empty()) body["system"] = req.system;
  if (cfg_.stream) body["stream"] = true;
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.reasoning_effort) {
    // The API wants 1024 <= budget < max_tokens; shrink the budget to fit rather than fail.
    int budget = std::min(thinking_budget(*s.reasoning_effort), max_tokens - 1);
    if (budget >= 1024) body["thinking"] = {{"type", "enabled"}, {"budget_tokens", budget}};
  }
  for (const auto& [k, v] : cfg_.extra_body.items()) body[k] = v;

  HttpRequest http;
  http.url = endpoint_url(cfg_.base_url, "messages");
  if (!cfg_.api_key.empty()) http.headers.push_back("x-api-key: " + cfg_.api_key);
  http.headers.push_back("anthropic-version: 2023-06-01");
  http.headers.push_back(cfg_.stream ? "Accept: text/event-stream" : "Accept: application/json");
  http.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return http;
}

std::unique_ptr<StreamDecoder> AnthropicClient::decoder(ChatResponse& out, const StreamCallback& emit) const {
  return std::make_unique<AnthropicDecoder>(out, emit);
}

void AnthropicClient::parse_whole(const std::string& body, ChatResponse& out) const {
  json j = parse_json_or_throw(body, "response");
  if (str_or_empty(j, "type") == "error") throw_error_event(j);
  out.model = str_or_empty(j, "model");
  out.finish_reason = str_or_empty(j, "stop_reason");
  if (j.contains("usage")) read_usage(j["usage"], out.usage);
  auto content = j.find("content");
  if (content == j.end() || !content->is_array())
    throw RecoverableError(ErrorKind::MalformedResponse, "response has no content array", 200);
  for (const auto& b : *content) {
    std::string bt = str_or_empty(b, "type");
    if (bt == "text") out.text += str_or_empty(b, "text");
    if (bt == "thinking") out.reasoning += str_or_empty(b, "thinking");
  }
}

}  // namespace kagent::llm
