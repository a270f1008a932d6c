#include "llm/llm_client.h"

#include <chrono>

#include <fmt/format.h>

#include "llm/anthropic_client.h"
#include "llm/http_chat_client.h"
#include "llm/openai_client.h"
#include "llm/replay_client.h"

namespace kagent::llm {

std::unique_ptr<LlmClient> make_client(const LlmConfig& cfg, ClientHooks hooks) {
  validate_llm_config(cfg);
  if (cfg.is_replay()) return std::make_unique<ReplayClient>(cfg, std::move(hooks));
  if (cfg.provider == "anthropic") return std::make_unique<AnthropicClient>(cfg, std::move(hooks));
  return std::make_unique<OpenAiClient>(cfg, std::move(hooks));
}

nlohmann::json parse_json_or_throw(std::string_view text, const char* what) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    std::string head = nlohmann::json(std::string(text.substr(0, 80)))
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw RecoverableError(ErrorKind::MalformedResponse, fmt::format("malformed JSON in {}: {}", what, head), 200);
  }
  return j;
}

HttpChatClient::HttpChatClient(LlmConfig cfg, ClientHooks hooks)
    : cfg_(std::move(cfg)), hooks_(std::move(hooks)), transport_(cfg_.transport) {}

std::string HttpChatClient::describe() const {
  return fmt::format("{} {} at {}", cfg_.provider, cfg_.model, cfg_.base_url);
}

ChatResponse HttpChatClient::chat(const ChatRequest& req, const StreamCallback& on_event) {
  RetryStream stream(on_event);
  return run_with_retries(cfg_.retry, hooks_.cancel, hooks_.on_attempt,
                          [&](int) { return attempt(req, stream); });
}

ChatResponse HttpChatClient::attempt(const ChatRequest& req, RetryStream& stream) {
  stream.begin_attempt();
  const Sampling& s = req.sampling ? *req.sampling : cfg_.sampling;
  HttpRequest http = build(req, s);
  ChatResponse out;
  const auto t0 = std::chrono::steady_clock::now();
  // Timestamps the first delta, then forwards it.
  StreamCallback emit = [&](const StreamEvent& ev) {
    if (out.first_token_s < 0)
      out.first_token_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stream(ev);
  };
  std::unique_ptr<StreamDecoder> dec;
  BodySink sink;
  if (cfg_.stream) {
    dec = decoder(out, emit);
    sink = [&dec](std::string_view bytes) { dec->feed(bytes); };
  }
  HttpResult res = transport_.post(http, sink, hooks_.cancel);
  if (res.status < 200 || res.status >= 300) throw_http_error(res.status, res.body, res.retry_after_s, http.url);
  if (dec) {
    dec->finish();
  } else {
    parse_whole(res.body, out);
    if (!out.reasoning.empty()) emit(StreamEvent{StreamEvent::Kind::Reasoning, out.reasoning});
    if (!out.text.empty()) emit(StreamEvent{StreamEvent::Kind::Text, out.text});
  }
  if (out.usage.total_tokens == 0) out.usage.total_tokens = out.usage.prompt_tokens + out.usage.completion_tokens;
  return out;
}

}  // namespace kagent::llm
