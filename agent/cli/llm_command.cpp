#include "cli/llm_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/errors.h"
#include "cli/llm_flags.h"
#include "llm/cancel.h"
#include "llm/llm_client.h"
#include "llm/llm_config.h"

namespace kagent::cli {

namespace {

using namespace kagent::llm;

struct LlmOptions {
  LlmFlags flags;
  std::string prompt;
  std::string system;
  bool json = false;
  bool verbose = false;
};

int exit_status(ErrorKind k) {
  switch (k) {
    case ErrorKind::MissingKey: return kLlmMissingKey;
    case ErrorKind::Config: return kLlmConfig;
    case ErrorKind::ConnectFailed:
    case ErrorKind::ConnectTimeout: return kLlmUnreachable;
    case ErrorKind::Auth: return kLlmAuth;
    case ErrorKind::NotFound:
    case ErrorKind::ContextTooLong:
    case ErrorKind::BadRequest: return kLlmRejected;
    case ErrorKind::Cancelled: return kLlmInterrupted;
    case ErrorKind::Exhausted: return kLlmExhausted;
    default: return kLlmGaveUp;
  }
}

// Prints the stream: answer to stdout, reasoning to stderr (dimmed on a terminal).
class StreamPrinter {
 public:
  StreamPrinter() : dim_(isatty(STDERR_FILENO) != 0) {}

  void operator()(const StreamEvent& ev) {
    switch (ev.kind) {
      case StreamEvent::Kind::Reasoning:
        if (!in_reasoning_) {
          std::fputs(dim_ ? "\x1b[2m[reasoning]\n" : "[reasoning]\n", stderr);
          in_reasoning_ = true;
        }
        std::fwrite(ev.text.data(), 1, ev.text.size(), stderr);
        std::fflush(stderr);
        break;
      case StreamEvent::Kind::Text:
        end_reasoning();
        std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
        std::fflush(stdout);
        wrote_text_ = true;
        last_ = ev.text.empty() ? last_ : ev.text.back();
        break;
      case StreamEvent::Kind::Restart:
        end_reasoning();
        finish_line();
        std::fputs("[kagent: the answer was interrupted; retrying from the start]\n", stderr);
        break;
    }
  }

  void end_reasoning() {
    if (!in_reasoning_) return;
    std::fputs(dim_ ? "\n\x1b[0m[answer]\n" : "\n[answer]\n", stderr);
    in_reasoning_ = false;
  }

  void finish_line() {
    end_reasoning();
    if (wrote_text_ && last_ != '\n') std::fputc('\n', stdout);
    std::fflush(stdout);
    wrote_text_ = false;
  }

 private:
  bool dim_;
  bool in_reasoning_ = false;
  bool wrote_text_ = false;
  char last_ = '\n';
};

std::string summary(const ChatResponse& r) {
  std::string s = fmt::format("[{}finish: {} | tokens: prompt {}, completion {}", r.model.empty() ? "" : r.model + " | ",
                              r.finish_reason.empty() ? "?" : r.finish_reason, r.usage.prompt_tokens,
                              r.usage.completion_tokens);
  if (r.usage.reasoning_tokens) s += fmt::format(" (reasoning {})", r.usage.reasoning_tokens);
  s += fmt::format(", total {} | latency {:.3f} s", r.usage.total_tokens, r.latency_s);
  if (r.first_token_s >= 0) s += fmt::format(", first token {:.3f} s", r.first_token_s);
  s += fmt::format(" | {} attempt{}]", r.attempts.size(), r.attempts.size() == 1 ? "" : "s");
  return s;
}

int run_llm(LlmOptions& o) {
  auto fail = [](const std::string& msg, int status) {
    print_error("llm", msg);
    return status;
  };
  if (o.prompt == "-") {
    o.prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    // `echo "..." | kagent llm -` sends what was typed, not the newline echo adds.
    while (!o.prompt.empty() && (o.prompt.back() == '\n' || o.prompt.back() == '\r')) o.prompt.pop_back();
  }
  if (o.prompt.empty()) return fail("empty prompt", kLlmConfig);

  CancelToken cancel;
  ScopedSignalCancel stop_signals(cancel);
  try {
    LlmConfig cfg = resolve_llm_config(o.flags);
    ClientHooks hooks;
    hooks.cancel = &cancel;
    if (o.verbose)
      hooks.on_attempt = [max = cfg.retry.max_attempts](const AttemptRecord& a) {
        std::fprintf(stderr, "kagent llm: %s\n", describe_attempt(a, max).c_str());
      };
    auto client = make_client(cfg, hooks);
    if (o.verbose) std::fprintf(stderr, "kagent llm: %s\n", client->describe().c_str());

    ChatRequest req;
    req.system = o.system;
    req.messages.push_back({"user", o.prompt});
    StreamPrinter printer;
    StreamCallback on_event;
    if (!o.json) on_event = [&printer](const StreamEvent& ev) { printer(ev); };
    ChatResponse r;
    try {
      r = client->chat(req, on_event);
    } catch (...) {
      printer.finish_line();  // what streamed before the failure stays, on its own line
      throw;
    }
    if (o.json) {
      std::printf("%s\n", to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return kLlmOk;
    }
    printer.finish_line();
    if (!r.refusal.empty()) std::fprintf(stderr, "[refusal] %s\n", r.refusal.c_str());
    if (r.text.empty() && r.refusal.empty()) std::fputs("[empty answer]\n", stderr);
    std::fprintf(stderr, "%s\n", summary(r).c_str());
    return kLlmOk;
  } catch (const LlmError& e) {
    if (e.kind() == ErrorKind::Cancelled || stop_signals.interrupted()) return fail("interrupted", kLlmInterrupted);
    std::string msg = e.what();
    if (is_recoverable(e.kind()) && e.attempts.size() > 1)
      msg += fmt::format(" (gave up after {} attempts)", e.attempts.size());
    return fail(msg, exit_status(e.kind()));
  } catch (const std::exception& e) {
    return fail(e.what(), kLlmInternal);
  }
}

}  // namespace

Command add_llm_command(CLI::App& app) {
  auto opts = std::make_shared<LlmOptions>();
  CLI::App* sub = app.add_subcommand("llm", "Send one prompt to the configured model and stream the answer");
  sub->add_option("prompt", opts->prompt, "the prompt; - reads it from stdin")->required();
  sub->add_option("--system", opts->system, "system prompt");
  sub->add_flag("--json", opts->json, "print the whole response as JSON instead of streaming");
  sub->add_flag("-v,--verbose", opts->verbose, "log the client and every failed attempt to stderr");
  add_llm_flags(*sub, opts->flags);
  return Command{sub, [opts] { return run_llm(*opts); }};
}

}  // namespace kagent::cli
