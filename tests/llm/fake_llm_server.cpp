#include "fake_llm_server.h"

#include <httplib.h>

#include <fmt/format.h>

namespace kagent::testing {

using nlohmann::json;
using clock = std::chrono::steady_clock;

struct FakeLlmServer::Shared {
  mutable std::mutex mu;
  std::condition_variable release_cv;
  bool releasing = false;
  std::deque<Script> queue;
  Script fallback;
  std::vector<SeenRequest> seen;
  clock::time_point t0 = clock::now();
  int in_flight = 0, max_in_flight = 0;

  void enter() {
    std::lock_guard lock(mu);
    max_in_flight = std::max(max_in_flight, ++in_flight);
  }
  void leave() {
    std::lock_guard lock(mu);
    --in_flight;
  }

  Script next(SeenRequest r) {
    std::lock_guard lock(mu);
    r.at_s = std::chrono::duration<double>(clock::now() - t0).count();
    seen.push_back(std::move(r));
    if (queue.empty()) return fallback;
    Script s = queue.front();
    queue.pop_front();
    return s;
  }
};

namespace {

// httplib listens with a backlog of 5; dozens of clients connecting at once would overflow it
// and wait a full second for the SYN retransmit. Listening again with a real backlog fixes that.
class Server : public httplib::Server {
 public:
  void widen_backlog() { ::listen(svr_sock_, 1024); }
};

// Word-sized pieces (or fixed 3-byte pieces for <think> tags, to split tags across events).
std::vector<std::string> pieces(const std::string& s, bool tiny = false) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j;
    if (tiny) {
      j = std::min(s.size(), i + 3);
    } else {
      j = s.find(' ', i);
      j = j == std::string::npos ? s.size() : j + 1;
    }
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string sse(const json& j, const std::string& event = "") {
  std::string s = event.empty() ? "" : "event: " + event + "\n";
  return s + "data: " + j.dump() + "\n\n";
}

// The events of an OpenAI chat-completions stream for script s.
std::vector<std::string> openai_events(const Script& s, const json& req) {
  std::vector<std::string> ev;
  const std::string model = req.value("model", "fake");
  bool lp = req.value("logprobs", false), ids = req.value("return_token_ids", false);
  auto chunk = [&](json delta, json finish = nullptr) {
    json choice = {{"index", 0}, {"delta", delta}, {"finish_reason", finish}};
    return json{{"id", "chatcmpl-fake"}, {"object", "chat.completion.chunk"}, {"model", model}, {"choices", {choice}}};
  };
  ev.push_back(sse(chunk({{"role", "assistant"}, {"content", ""}})));
  long n_reason = 0, n_text = 0, tok = 100;
  if (s.behavior == Behavior::Refusal) {
    ev.push_back(sse(chunk({{"refusal", "I can't help with that."}})));
  } else if (s.style == ReasoningStyle::ThinkTags && !s.reasoning.empty()) {
    for (auto& p : pieces("<think>" + s.reasoning + "</think>" + s.text, true)) ev.push_back(sse(chunk({{"content", p}})));
    n_reason = static_cast<long>(pieces(s.reasoning).size());
    n_text = static_cast<long>(pieces(s.text).size());
  } else {
    const char* field = s.style == ReasoningStyle::Reasoning ? "reasoning" : "reasoning_content";
    for (auto& p : pieces(s.reasoning)) ev.push_back(sse(chunk({{field, p}}))), ++n_reason;
    if (s.behavior != Behavior::Empty)
      for (auto& p : pieces(s.text)) {
        json c = chunk({{"content", p}});
        if (lp) c["choices"][0]["logprobs"] = {{"content", {{{"token", p}, {"logprob", -0.5}, {"top_logprobs", json::array()}}}}};
        if (ids) c["choices"][0]["token_ids"] = {tok++};
        ev.push_back(sse(c));
        ++n_text;
      }
  }
  ev.push_back(sse(chunk(json::object(), "stop")));
  json usage = {{"prompt_tokens", 10},
                {"completion_tokens", n_reason + n_text},
                {"total_tokens", 10 + n_reason + n_text},
                {"completion_tokens_details", {{"reasoning_tokens", n_reason}}}};
  if (req.contains("stream_options"))
    ev.push_back(sse({{"id", "chatcmpl-fake"}, {"model", model}, {"choices", json::array()}, {"usage", usage}}));
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

json openai_whole(const Script& s, const json& req) {
  json msg = {{"role", "assistant"}, {"content", s.behavior == Behavior::Empty ? "" : s.text}};
  if (s.behavior == Behavior::Refusal) msg = {{"role", "assistant"}, {"content", nullptr}, {"refusal", "I can't help with that."}};
  if (!s.reasoning.empty()) {
    if (s.style == ReasoningStyle::ThinkTags) msg["content"] = "<think>" + s.reasoning + "</think>" + s.text;
    else msg[s.style == ReasoningStyle::Reasoning ? "reasoning" : "reasoning_content"] = s.reasoning;
  }
  long nr = static_cast<long>(pieces(s.reasoning).size()), nt = static_cast<long>(pieces(s.text).size());
  return {{"id", "chatcmpl-fake"},
          {"object", "chat.completion"},
          {"model", req.value("model", "fake")},
          {"choices", {{{"index", 0}, {"message", msg}, {"finish_reason", "stop"}}}},
          {"usage",
           {{"prompt_tokens", 10},
            {"completion_tokens", nr + nt},
            {"total_tokens", 10 + nr + nt},
            {"completion_tokens_details", {{"reasoning_tokens", nr}}}}}};
}

std::vector<std::string> anthropic_events(const Script& s, const json& req) {
  std::vector<std::string> ev;
  const std::string model = req.value("model", "fake");
  ev.push_back(sse({{"type", "message_start"},
                    {"message",
                     {{"id", "msg_fake"}, {"type", "message"}, {"role", "assistant"}, {"model", model},
                      {"content", json::array()}, {"stop_reason", nullptr},
                      {"usage", {{"input_tokens", 10}, {"output_tokens", 1}}}}}},
                   "message_start"));
  int index = 0;
  long n = 0;
  if (!s.reasoning.empty()) {
    ev.push_back(sse({{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "thinking"}, {"thinking", ""}}}},
                     "content_block_start"));
    for (auto& p : pieces(s.reasoning))
      ev.push_back(sse({{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "thinking_delta"}, {"thinking", p}}}},
                       "content_block_delta")),
          ++n;
    ev.push_back(sse({{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "signature_delta"}, {"signature", "sig"}}}},
                     "content_block_delta"));
    ev.push_back(sse({{"type", "content_block_stop"}, {"index", index}}, "content_block_stop"));
    ++index;
  }
  ev.push_back(sse({{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}},
                   "content_block_start"));
  ev.push_back(sse({{"type", "ping"}}, "ping"));
  if (s.behavior != Behavior::Empty && s.behavior != Behavior::Refusal)
    for (auto& p : pieces(s.text))
      ev.push_back(sse({{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "text_delta"}, {"text", p}}}},
                       "content_block_delta")),
          ++n;
  ev.push_back(sse({{"type", "content_block_stop"}, {"index", index}}, "content_block_stop"));
  ev.push_back(sse({{"type", "message_delta"},
                    {"delta", {{"stop_reason", s.behavior == Behavior::Refusal ? "refusal" : "end_turn"}}},
                    {"usage", {{"output_tokens", n}}}},
                   "message_delta"));
  ev.push_back(sse({{"type", "message_stop"}}, "message_stop"));
  return ev;
}

json anthropic_whole(const Script& s, const json& req) {
  json content = json::array();
  if (!s.reasoning.empty()) content.push_back({{"type", "thinking"}, {"thinking", s.reasoning}, {"signature", "sig"}});
  if (s.behavior != Behavior::Empty && s.behavior != Behavior::Refusal) content.push_back({{"type", "text"}, {"text", s.text}});
  long n = static_cast<long>(pieces(s.reasoning).size() + pieces(s.text).size());
  return {{"id", "msg_fake"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", req.value("model", "fake")},
          {"content", content},
          {"stop_reason", s.behavior == Behavior::Refusal ? "refusal" : "end_turn"},
          {"usage", {{"input_tokens", 10}, {"output_tokens", n}}}};
}

json error_body(bool anthropic, const std::string& type, const std::string& message, const std::string& code = "") {
  if (anthropic) return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  json e = {{"message", message}, {"type", type}};
  if (!code.empty()) e["code"] = code;
  return {{"error", e}};
}

}  // namespace

FakeLlmServer::FakeLlmServer(int threads, int keep_alive_s) : shared_(std::make_shared<Shared>()), server_(std::make_unique<Server>()) {
  auto sh = shared_;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server_->set_keep_alive_max_count(1000000);
  server_->set_keep_alive_timeout(keep_alive_s);

  auto handle = [sh](bool anthropic) {
    return [sh, anthropic](const httplib::Request& req, httplib::Response& res) {
      SeenRequest seen;
      seen.path = req.path;
      seen.body = json::parse(req.body, nullptr, false);
      seen.authorization = req.get_header_value("Authorization");
      seen.api_key = req.get_header_value("x-api-key");
      seen.anthropic_version = req.get_header_value("anthropic-version");
      json body = seen.body.is_discarded() ? json::object() : seen.body;
      Script s = sh->next(std::move(seen));
      sh->enter();
      // Leaves when the handler returns, unless a stream's releaser takes over the duty.
      auto in_flight = std::shared_ptr<void>(nullptr, [sh](void*) { sh->leave(); });
      const bool stream = body.value("stream", false);

      auto fail = [&](int status, const json& b) {
        res.status = status;
        res.set_content(b.dump(), "application/json");
      };
      switch (s.behavior) {
        case Behavior::RateLimit:
          if (!s.retry_after.empty()) res.set_header("Retry-After", s.retry_after);
          if (!s.retry_after_ms.empty()) res.set_header("retry-after-ms", s.retry_after_ms);
          return fail(429, error_body(anthropic, "rate_limit_error", "Rate limit reached for requests"));
        case Behavior::ServerError:
          return fail(500, error_body(anthropic, "api_error", "The server had an error while processing your request"));
        case Behavior::Overloaded: return fail(529, error_body(anthropic, "overloaded_error", "Overloaded"));
        case Behavior::Unauthorized:
          return fail(401, error_body(anthropic, "authentication_error", "Incorrect API key provided", "invalid_api_key"));
        case Behavior::NotFound:
          return fail(404, error_body(anthropic, "not_found_error",
                                      fmt::format("The model `{}` does not exist", body.value("model", "")), "model_not_found"));
        case Behavior::ContextTooLong:
          return fail(400, error_body(anthropic, "invalid_request_error",
                                      "This model's maximum context length is 8192 tokens; your messages resulted in 9000",
                                      "context_length_exceeded"));
        case Behavior::Hang: {
          std::unique_lock lock(sh->mu);
          sh->release_cv.wait_for(lock, std::chrono::seconds(30), [&] { return sh->releasing; });
          return fail(503, error_body(anthropic, "api_error", "released"));
        }
        case Behavior::Malformed:
          if (!stream) {
            res.set_content("{\"choices\": [ {\"message\": oops", "application/json");
            return;
          }
          break;
        default: break;
      }
      if (!stream) {
        res.set_content((anthropic ? anthropic_whole(s, body) : openai_whole(s, body)).dump(), "application/json");
        return;
      }
      auto events = std::make_shared<std::vector<std::string>>(anthropic ? anthropic_events(s, body) : openai_events(s, body));
      if (s.behavior == Behavior::Malformed) events->insert(events->begin() + 1, "data: {\"choices\": [ {\"delta\": oops\n\n");
      if (s.behavior == Behavior::MidStreamError) {
        events->resize(std::min<size_t>(events->size(), anthropic ? 4 : 2));  // through the first text delta
        events->push_back(anthropic ? sse(error_body(true, "overloaded_error", "Overloaded"), "error")
                                    : sse(error_body(false, "server_error", "backend overloaded")));
      }
      res.set_chunked_content_provider(
          "text/event-stream", [events, s, i = size_t{0}](size_t, httplib::DataSink& sink) mutable {
            bool cutting = s.behavior == Behavior::Cut || s.behavior == Behavior::CutClean;
            if (i >= events->size() || (cutting && i >= static_cast<size_t>(s.cut_after))) {
              if (s.behavior == Behavior::Cut) return false;  // drops the connection mid-body
              sink.done();
              return true;
            }
            if (s.chunk_delay_ms > 0 && i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(s.chunk_delay_ms));
            const std::string& e = (*events)[i++];
            return sink.write(e.data(), e.size());
          },
          [in_flight](bool) {});  // holds in_flight until the stream is over
    };
  };
  server_->Post("/v1/chat/completions", handle(false));
  server_->Post("/v1/messages", handle(true));

  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("fake LLM server: cannot bind 127.0.0.1");
  static_cast<Server&>(*server_).widen_backlog();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeLlmServer::~FakeLlmServer() {
  {
    std::lock_guard lock(shared_->mu);
    shared_->releasing = true;
  }
  shared_->release_cv.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeLlmServer::base_url() const { return fmt::format("http://127.0.0.1:{}", port_); }

void FakeLlmServer::push(Script s) {
  std::lock_guard lock(shared_->mu);
  shared_->queue.push_back(std::move(s));
}

void FakeLlmServer::set_default(Script s) {
  std::lock_guard lock(shared_->mu);
  shared_->fallback = std::move(s);
}

std::vector<SeenRequest> FakeLlmServer::requests() const {
  std::lock_guard lock(shared_->mu);
  return shared_->seen;
}

int FakeLlmServer::max_in_flight() const {
  std::lock_guard lock(shared_->mu);
  return shared_->max_in_flight;
}

size_t FakeLlmServer::request_count() const {
  std::lock_guard lock(shared_->mu);
  return shared_->seen.size();
}

}  // namespace kagent::testing
