#include "llm/openai_client.h"

#include <fmt/format.h>

#include "llm/sse_parser.h"
#include "llm/think_splitter.h"

namespace kagent::llm {

using nlohmann::json;

namespace {

const std::string* str_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

long int_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<long>() : 0;
}

void read_usage(const json& u, Usage& out) {
  if (!u.is_object()) return;
  out.prompt_tokens = int_field(u, "prompt_tokens");
  out.completion_tokens = int_field(u, "completion_tokens");
  out.total_tokens = int_field(u, "total_tokens");
  if (auto d = u.find("completion_tokens_details"); d != u.end() && d->is_object())
    out.reasoning_tokens = int_field(*d, "reasoning_tokens");
}

// logprobs.content entries and vLLM's token_ids, appended for RL consumers.
void read_token_info(const json& choice, ChatResponse& out) {
  if (auto lp = choice.find("logprobs"); lp != choice.end() && lp->is_object())
    if (auto c = lp->find("content"); c != lp->end() && c->is_array())
      for (const auto& e : *c) out.logprobs.push_back(e);
  if (auto ids = choice.find("token_ids"); ids != choice.end() && ids->is_array())
    for (const auto& id : *ids)
      if (id.is_number_integer()) out.token_ids.push_back(id.get<long>());
}

void throw_stream_error(const json& j) {
  const json& e = j["error"];
  std::string msg = e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>()
                                                                                       : e.dump();
  throw RecoverableError(ErrorKind::ServerError, "server error mid-stream: " + msg, 200);
}

class OpenAiDecoder : public StreamDecoder {
 public:
  OpenAiDecoder(ChatResponse& out, const StreamCallback& emit)
      : out_(out),
        emit_(emit),
        sse_([this](const SseEvent& e) { on_event(e); }),
        think_([this](bool reasoning, std::string_view t) { content(reasoning, t); }) {}

  void feed(std::string_view bytes) override { sse_.feed(bytes); }

  void finish() override {
    sse_.finish();
    think_.finish();
    if (done_ || finished_) return;
    throw RecoverableError(ErrorKind::StreamCut,
                           sse_.saw_any() ? "answer cut off: the stream ended before [DONE]"
                                          : "empty stream: no events before the connection closed",
                           200);
  }

 private:
  void content(bool reasoning, std::string_view t) {
    if (t.empty()) return;
    (reasoning ? out_.reasoning : out_.text).append(t);
    emit_(StreamEvent{reasoning ? StreamEvent::Kind::Reasoning : StreamEvent::Kind::Text, t});
  }

  void on_event(const SseEvent& e) {
    if (e.data == "[DONE]") {
      done_ = true;
      return;
    }
    json j = parse_json_or_throw(e.data, "stream event");
    if (j.contains("error")) throw_stream_error(j);
    if (auto m = str_field(j, "model")) out_.model = *m;
    if (auto u = j.find("usage"); u != j.end()) read_usage(*u, out_.usage);
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) return;
    for (const auto& ch : *choices) {
      if (ch.value("index", 0) != 0) continue;  // n > 1 is not used; keep the first choice
      if (auto d = ch.find("delta"); d != ch.end() && d->is_object()) {
        // Servers name the reasoning field differently: DeepSeek/vLLM reasoning_content, others reasoning.
        for (const char* k : {"reasoning_content", "reasoning"})
          if (auto r = str_field(*d, k)) content(true, *r);
        if (auto c = str_field(*d, "content")) think_.feed(*c);
        if (auto r = str_field(*d, "refusal")) out_.refusal += *r;
      }
      if (auto f = str_field(ch, "finish_reason")) {
        out_.finish_reason = *f;
        finished_ = true;
      }
      read_token_info(ch, out_);
    }
  }

  ChatResponse& out_;
  const StreamCallback& emit_;
  SseParser sse_;
  ThinkSplitter think_;
  bool done_ = false, finished_ = false;
};

}  // namespace

HttpRequest OpenAiClient::build(const ChatRequest& req, const Sampling& s) const {
  json messages = json::array();
  if (!req.system.empty()) messages.push_back({{"role", "system"}, {"content", req.system}});
  for (const auto& m : req.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", cfg_.model}, {"messages", messages}};
  if (cfg_.stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};  // else no usage in a stream
  }
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.max_tokens) {
    // OpenAI's reasoning models accept only the newer name; other servers know the older one.
    bool openai_proper = cfg_.base_url.find("api.openai.com") != std::string::npos;
    body[openai_proper ? "max_completion_tokens" : "max_tokens"] = *s.max_tokens;
  }
  if (s.reasoning_effort) body["reasoning_effort"] = *s.reasoning_effort;
  if (s.logprobs) {
    body["logprobs"] = true;
    if (s.top_logprobs) body["top_logprobs"] = *s.top_logprobs;
  }
  if (s.return_token_ids) body["return_token_ids"] = true;
  for (const auto& [k, v] : cfg_.extra_body.items()) body[k] = v;

  HttpRequest http;
  http.url = endpoint_url(cfg_.base_url, "chat/completions");
  if (!cfg_.api_key.empty()) http.headers.push_back("Authorization: Bearer " + cfg_.api_key);
  http.headers.push_back(cfg_.stream ? "Accept: text/event-stream" : "Accept: application/json");
  http.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return http;
}

std::unique_ptr<StreamDecoder> OpenAiClient::decoder(ChatResponse& out, const StreamCallback& emit) const {
  return std::make_unique<OpenAiDecoder>(out, emit);
}

void OpenAiClient::parse_whole(const std::string& body, ChatResponse& out) const {
  json j = parse_json_or_throw(body, "response");
  if (j.contains("error")) throw_stream_error(j);
  if (auto m = str_field(j, "model")) out.model = *m;
  if (auto u = j.find("usage"); u != j.end()) read_usage(*u, out.usage);
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty())
    throw RecoverableError(ErrorKind::MalformedResponse, "response has no choices", 200);
  const json& ch = (*choices)[0];
  if (auto f = str_field(ch, "finish_reason")) out.finish_reason = *f;
  read_token_info(ch, out);
  auto msg = ch.find("message");
  if (msg == ch.end() || !msg->is_object()) return;  // an empty answer is still an answer
  for (const char* k : {"reasoning_content", "reasoning"})
    if (auto r = str_field(*msg, k)) out.reasoning += *r;
  if (auto r = str_field(*msg, "refusal")) out.refusal = *r;
  if (auto c = str_field(*msg, "content")) {
    ThinkSplitter split([&](bool reasoning, std::string_view t) { (reasoning ? out.reasoning : out.text).append(t); });
    split.feed(*c);
    split.finish();
  }
}

}  // namespace kagent::llm
