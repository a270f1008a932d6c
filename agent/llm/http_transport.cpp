#include "llm/http_transport.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "llm/llm_error.h"
#include "llm/retry_policy.h"

namespace kagent::llm {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

using clock = std::chrono::steady_clock;

// What one transfer's callbacks share with post().
struct TransferState {
  CURL* easy = nullptr;
  const BodySink* sink = nullptr;
  HttpResult* result = nullptr;
  clock::time_point last_activity;
  bool connected = false;  // connection made (or reused) and the request about to go out
  bool status_known = false;
  bool to_sink = false;
  std::exception_ptr sink_error;
  std::optional<double> retry_after, retry_after_ms;
};

constexpr size_t kMaxErrorBody = 1 << 20;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Called once the connection is up: from here on, silence counts against the read timeout.
int on_prereq(void* user, char*, char*, int, int) {
  auto* st = static_cast<TransferState*>(user);
  st->last_activity = clock::now();
  st->connected = true;
  return CURL_PREREQFUNC_OK;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<TransferState*>(user);
  st->last_activity = clock::now();
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon == std::string::npos) {
    // A new status line (after a 100 Continue, say) starts a new header block.
    if (line.rfind("HTTP/", 0) == 0) st->retry_after.reset(), st->retry_after_ms.reset();
    return size * n;
  }
  std::string name = lower(line.substr(0, colon));
  std::string value = line.substr(colon + 1);
  if (name == "retry-after") st->retry_after = parse_retry_after(value);
  if (name == "retry-after-ms")
    if (auto ms = parse_retry_after(value)) st->retry_after_ms = *ms / 1000.0;
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<TransferState*>(user);
  const size_t len = size * n;
  st->last_activity = clock::now();
  if (!st->status_known) {
    long code = 0;
    curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE, &code);
    st->result->status = static_cast<int>(code);
    st->status_known = true;
    st->to_sink = st->sink && *st->sink && code >= 200 && code < 300;
  }
  if (st->to_sink) {
    try {
      (*st->sink)(std::string_view(data, len));
    } catch (...) {
      st->sink_error = std::current_exception();
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
  } else if (st->result->body.size() < kMaxErrorBody) {
    st->result->body.append(data, len);
  }
  return len;
}

}  // namespace

struct HttpTransport::Connection {
  // One easy handle in its own multi: the multi lets post() wait in short slices (to check
  // cancellation and idle time); the pair stays together so the multi's connection cache
  // keeps the TCP connection alive for the next request.
  CurlEasy easy{curl_easy_init()};
  CurlMulti multi{curl_multi_init()};
};

HttpTransport::HttpTransport(TransportOptions opts) : opts_(opts) { global_init_once(); }
HttpTransport::~HttpTransport() = default;

std::unique_ptr<HttpTransport::Connection> HttpTransport::checkout() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<Connection>();
  if (!c->easy || !c->multi) throw TerminalError(ErrorKind::Config, "libcurl initialisation failed");
  return c;
}

void HttpTransport::checkin(std::unique_ptr<Connection> c) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(c));
}

HttpResult HttpTransport::post(const HttpRequest& req, const BodySink& sink, const CancelToken* cancel) {
  auto conn = checkout();
  CURL* e = conn->easy.get();
  CURLM* m = conn->multi.get();
  curl_easy_reset(e);  // keeps the live connections, forgets last request's options

  HttpResult result;
  TransferState st;
  st.easy = e;
  st.sink = &sink;
  st.result = &result;

  CurlSlist headers;
  auto add_header = [&headers](const char* h) {
    curl_slist* l = curl_slist_append(headers.get(), h);
    if (!l) throw TerminalError(ErrorKind::Config, "out of memory building HTTP headers");
    (void)headers.release();  // curl_slist_append returned the same list, now longer
    headers.reset(l);
  };
  for (const auto& h : req.headers) add_header(h.c_str());
  add_header("Content-Type: application/json");
  add_header("Expect:");  // else libcurl sends "Expect: 100-continue" for large bodies and waits for it
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, req.body.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts_.connect_timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &st);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, &st);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "kagent/0.1");

  const auto t0 = clock::now();
  st.last_activity = t0;
  curl_multi_add_handle(m, e);
  // The handle leaves the multi on every path out, so the connection is reusable.
  struct Detach {
    CURLM* m;
    CURL* e;
    bool done = false;
    void now() {
      if (!done) curl_multi_remove_handle(m, e);
      done = true;
    }
    ~Detach() { now(); }
  } detach{m, e};

  auto secs = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
  int running = 1;
  while (true) {
    CURLMcode mc = curl_multi_perform(m, &running);
    if (mc != CURLM_OK) throw RecoverableError(ErrorKind::Network, fmt::format("libcurl: {}", curl_multi_strerror(mc)));
    if (!running) break;
    auto now = clock::now();
    if (cancel && cancel->cancelled()) throw TerminalError(ErrorKind::Cancelled, "cancelled");
    // While connecting, libcurl enforces the connect timeout; this is only a backstop.
    double idle_limit = opts_.read_timeout_s + (st.connected ? 0 : opts_.connect_timeout_s);
    double idle = secs(now - st.last_activity);
    if (opts_.read_timeout_s > 0 && idle > idle_limit)
      throw RecoverableError(ErrorKind::ReadTimeout,
                             fmt::format("no data from {} for {:.1f} s (read timeout)", req.url, idle), result.status);
    if (opts_.total_timeout_s > 0 && secs(now - t0) > opts_.total_timeout_s)
      throw RecoverableError(ErrorKind::ReadTimeout,
                             fmt::format("{} took longer than {:.1f} s (total timeout)", req.url, opts_.total_timeout_s),
                             result.status);
    double wait = 0.1;
    if (opts_.read_timeout_s > 0) wait = std::min(wait, std::max(0.001, idle_limit - idle));
    curl_multi_poll(m, nullptr, 0, static_cast<int>(wait * 1000) + 1, nullptr);
  }

  CURLcode rc = CURLE_OK;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(m, &left))
    if (msg->msg == CURLMSG_DONE) rc = msg->data.result;

  long code = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
  result.status = static_cast<int>(code);
  char* ct = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) result.content_type = ct;
  result.retry_after_s = st.retry_after_ms ? st.retry_after_ms : st.retry_after;
  detach.now();  // before checkin: another thread may take the connection right away

  if (st.sink_error) {
    checkin(std::move(conn));
    std::rethrow_exception(st.sink_error);
  }
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    std::string msg = fmt::format("{}: {}", req.url, why);
    checkin(std::move(conn));
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
        throw RecoverableError(ErrorKind::ConnectFailed, "cannot connect to " + msg);
      case CURLE_OPERATION_TIMEDOUT:
        throw RecoverableError(ErrorKind::ConnectTimeout, "connect timeout: " + msg);
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        throw TerminalError(ErrorKind::Config, "bad URL " + msg);
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_GOT_NOTHING:
        if (result.status >= 200 && result.status < 300)
          throw RecoverableError(ErrorKind::StreamCut, "answer cut off: " + msg, result.status);
        throw RecoverableError(ErrorKind::Network, "connection lost: " + msg, result.status);
      default:
        throw RecoverableError(ErrorKind::Network, msg, result.status);
    }
  }
  checkin(std::move(conn));
  return result;
}

}  // namespace kagent::llm
