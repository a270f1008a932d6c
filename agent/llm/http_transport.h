// HTTP POST over libcurl for the LLM clients: RAII handles, a pool of reusable connections
// (so keep-alive works across requests and threads), streaming of the body to a sink,
// connect/read/total timeouts, and cancellation. Transport failures become LlmErrors.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include "llm/cancel.h"

namespace kagent::llm {

// ---- RAII owners for libcurl handles ----
struct CurlEasyDeleter { void operator()(CURL* h) const { curl_easy_cleanup(h); } };
struct CurlMultiDeleter { void operator()(CURLM* h) const { curl_multi_cleanup(h); } };
struct CurlSlistDeleter { void operator()(curl_slist* l) const { curl_slist_free_all(l); } };
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

struct TransportOptions {
  double connect_timeout_s = 10;
  double read_timeout_s = 120;  // longest silence allowed (the first byte may take connect + read)
  double total_timeout_s = 0;   // 0: no limit on the whole transfer
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // JSON, POSTed
};

struct HttpResult {
  int status = 0;
  std::string content_type;
  std::optional<double> retry_after_s;  // from retry-after-ms or Retry-After
  std::string body;                     // the body, unless a 2xx body went to the sink
};

// Receives the body of a 2xx answer piece by piece. May throw an LlmError to abort the transfer;
// post() then rethrows it.
using BodySink = std::function<void(std::string_view)>;

class HttpTransport {
 public:
  explicit HttpTransport(TransportOptions opts);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Thread-safe; each call borrows a pooled connection. Throws RecoverableError for network
  // failures and timeouts, TerminalError(Cancelled) when cancelled, TerminalError(Config) for a bad URL.
  // A non-2xx answer is returned, not thrown: the caller knows the protocol's error format.
  HttpResult post(const HttpRequest& req, const BodySink& sink, const CancelToken* cancel);

  const TransportOptions& options() const { return opts_; }

 private:
  struct Connection;
  std::unique_ptr<Connection> checkout();
  void checkin(std::unique_ptr<Connection> c);

  TransportOptions opts_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace kagent::llm
