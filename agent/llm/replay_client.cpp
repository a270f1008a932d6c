#include "llm/replay_client.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/utf8.h"

namespace kagent::llm {

using nlohmann::json;

ReplayClient::ReplayClient(const LlmConfig& cfg, ClientHooks hooks) : cfg_(cfg), hooks_(std::move(hooks)) {
  const std::string path = cfg_.replay_file();
  // A folder opens as a stream that reads nothing: it would pass for a file of 0 answers, and a
  // run would start (a run folder made) only to run out on its first request.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw TerminalError(ErrorKind::Config, fmt::format("replay file {} is a folder, not a file", path));
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw TerminalError(ErrorKind::Config, fmt::format("replay file {} is not a regular file", path));
  std::ifstream in(path);
  if (!in) throw TerminalError(ErrorKind::Config, fmt::format("cannot read replay file {}", path));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw TerminalError(ErrorKind::Config, fmt::format("{}:{}: not a JSON object{}", path, n,
                                                         is_valid_utf8(line) ? "" : " (not UTF-8 text)"));
    bool has_text = j.contains("text") && j["text"].is_string();
    bool has_error = j.contains("error") && j["error"].is_object();
    if (!has_text && !has_error)
      throw TerminalError(ErrorKind::Config, fmt::format("{}:{}: needs a \"text\" string or an \"error\" object", path, n));
    if (has_error && !kind_from_name(j["error"].value("kind", "")))
      throw TerminalError(ErrorKind::Config,
                          fmt::format("{}:{}: unknown error kind \"{}\"", path, n, j["error"].value("kind", "")));
    entries_.push_back(std::move(j));
  }
}

std::string ReplayClient::describe() const {
  return fmt::format("replay of {} ({} answers)", cfg_.replay_file(), entries_.size());
}

ChatResponse ReplayClient::chat(const ChatRequest& req, const StreamCallback& on_event) {
  RetryStream stream(on_event);
  return run_with_retries(cfg_.retry, hooks_.cancel, hooks_.on_attempt, [&](int) { return play(req.tag, stream); });
}

namespace {
// An entry with "problem"/"sample"/"turn" keys answers only requests tagged the same (so
// problems of a collection, parallel samples and resumed runs get their own answers); an entry
// without them answers any request. A request without a tag (`kagent llm`) takes the entries
// in file order, whatever their keys.
bool entry_matches(const json& entry, const json& tag) {
  if (!tag.is_object()) return true;
  for (const char* key : {"problem", "sample", "turn"})
    if (entry.contains(key) && (!tag.contains(key) || tag[key] != entry[key])) return false;
  return true;
}
}  // namespace

ChatResponse ReplayClient::play(const json& tag, RetryStream& stream) {
  json e;
  size_t index = 0;
  {
    std::lock_guard lock(mu_);
    if (used_.size() != entries_.size()) used_.assign(entries_.size(), false);
    size_t i = 0;
    while (i < entries_.size() && (used_[i] || !entry_matches(entries_[i], tag))) ++i;
    if (i == entries_.size()) {
      std::string which = tag.is_object() && tag.contains("sample")
                              ? fmt::format(" for sample {} turn {}", tag.value("sample", 0), tag.value("turn", 0) + 1)
                              : "";
      if (tag.is_object() && tag.contains("problem") && tag["problem"].is_string())
        which = fmt::format(" for problem {}{}{}", tag["problem"].get<std::string>(), which.empty() ? "" : ",",
                            which.empty() ? std::string() : which.substr(4));
      throw TerminalError(ErrorKind::Exhausted, fmt::format("replay file {} has no more answers{} (it holds {})",
                                                            cfg_.replay_file(), which, entries_.size()));
    }
    used_[i] = true;
    ++next_;
    index = i;
    e = entries_[index];
  }
  stream.begin_attempt();
  const CancelToken never;
  const CancelToken& cancel = hooks_.cancel ? *hooks_.cancel : never;
  if (int ms = e.value("delay_ms", 0); ms > 0 && !cancel.sleep_for(std::chrono::milliseconds(ms)))
    throw TerminalError(ErrorKind::Cancelled, "cancelled");
  if (e.contains("error") && e["error"].is_object()) {
    const json& err = e["error"];
    throw_error(*kind_from_name(err.value("kind", "")),
                err.value("message", fmt::format("recorded error (answer #{})", index + 1)), err.value("http_status", 0));
  }
  ChatResponse r;
  r.text = e.value("text", "");
  r.reasoning = e.value("reasoning", "");
  r.finish_reason = e.value("finish_reason", "stop");
  r.model = e.value("model", "replay");
  if (e.contains("usage") && e["usage"].is_object()) {
    const json& u = e["usage"];
    r.usage.prompt_tokens = u.value("prompt_tokens", 0L);
    r.usage.completion_tokens = u.value("completion_tokens", 0L);
    r.usage.reasoning_tokens = u.value("reasoning_tokens", 0L);
    r.usage.total_tokens = u.value("total_tokens", r.usage.prompt_tokens + r.usage.completion_tokens);
  }
  if (stream) {
    // Word-sized pieces, so a consumer sees the same shape of stream as from a server.
    auto emit_pieces = [&](StreamEvent::Kind kind, const std::string& s) {
      size_t i = 0;
      while (i < s.size()) {
        size_t j = s.find_first_of(" \n", i);
        j = j == std::string::npos ? s.size() : j + 1;
        if (r.first_token_s < 0) r.first_token_s = 0;
        stream(StreamEvent{kind, std::string_view(s).substr(i, j - i)});
        i = j;
      }
    };
    emit_pieces(StreamEvent::Kind::Reasoning, r.reasoning);
    emit_pieces(StreamEvent::Kind::Text, r.text);
  }
  return r;
}

}  // namespace kagent::llm
