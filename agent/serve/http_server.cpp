#include "serve/http_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <httplib.h>

#include "serve/api_error.h"

namespace kagent::serve {

using nlohmann::json;

namespace {

json error_body(const std::string& code, const std::string& message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The JSON object a POST carries; throws ApiError 400 for anything else.
json parse_body(const httplib::Request& req) {
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded()) throw ApiError(400, "malformed_json", "the body is not valid JSON");
  if (!j.is_object()) throw ApiError(400, "bad_request", "the body must be a JSON object");
  return j;
}

const char* code_for_status(int status) {
  switch (status) {
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 413: return "body_too_large";
    case 400: return "bad_request";
    default: return "error";
  }
}

}  // namespace

struct HttpServer::Impl {
  HttpOptions opt;
  Episodes& episodes;
  Evaluations& evaluations;
  ServerMetrics& metrics;
  ServerState state;
  httplib::Server svr;
  int port = 0;
  int listen_fd = -1;  // the listening socket, as the socket-options hook last saw it

  using Handler = std::function<std::pair<int, json>(const httplib::Request&)>;

  // One route: readiness, errors as JSON, metrics. `latency_kind` non-empty: observed.
  void route(const char* method, const std::string& pattern, const std::string& name, bool needs_ready,
             const std::string& latency_kind, Handler h) {
    auto wrapped = [this, name, needs_ready, latency_kind, h](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      int status = 500;
      try {
        if (needs_ready)
          if (auto why = state.unavailable()) throw *why;
        auto [st, body] = h(req);
        status = st;
        send_json(res, st, body);
      } catch (const ApiError& e) {
        status = e.status;
        if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
        send_json(res, e.status, error_body(e.code, e.what()));
      } catch (const json::exception& e) {
        status = 400;
        send_json(res, 400, error_body("bad_request", e.what()));
      } catch (const std::exception& e) {
        status = 500;
        send_json(res, 500, error_body("internal", e.what()));
      }
      metrics.count_request(name, status);
      if (!latency_kind.empty() && status < 400)
        metrics.observe(latency_kind, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    const std::string m = method;
    if (m == "GET") svr.Get(pattern, wrapped);
    else if (m == "POST") svr.Post(pattern, wrapped);
    else svr.Delete(pattern, wrapped);
  }

  void install() {
    svr.new_task_queue = [n = opt.threads] { return new httplib::ThreadPool(n); };
    // SO_REUSEADDR only (a restart may take a port in TIME_WAIT). httplib's default adds
    // SO_REUSEPORT, with which a second server binds the same port and takes part of the traffic.
    svr.set_socket_options([this](auto sock) {
      listen_fd = sock;
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
    });
    svr.set_payload_max_length(opt.max_body_bytes);
    svr.set_keep_alive_max_count(100000);
    svr.set_keep_alive_timeout(30);
    svr.set_read_timeout(60);
    svr.set_write_timeout(60);
    svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (opt.token.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
      const std::string auth = req.get_header_value("Authorization");
      if (auth.empty()) {
        res.set_header("WWW-Authenticate", "Bearer");
        send_json(res, 401, error_body("missing_token", "Authorization: Bearer <token> is required"));
      } else if (auth != "Bearer " + opt.token) {
        send_json(res, 403, error_body("wrong_token", "the bearer token is not this server's"));
      } else {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      metrics.count_request("auth", res.status);
      return httplib::Server::HandlerResponse::Handled;
    });
    // What httplib answers itself (no route, a body over the limit) gets a JSON body too.
    svr.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        const std::string code = code_for_status(res.status);
        send_json(res, res.status, error_body(code, code == "body_too_large" ? "the body is over the server's limit of " +
                                                                                  std::to_string(opt.max_body_bytes) + " bytes"
                                                                            : code));
        metrics.count_request(code, res.status);
      }
    });

    route("POST", "/v1/episodes", "episodes.create", true, "",
          [this](const httplib::Request& r) { return std::pair{200, episodes.create(parse_body(r))}; });
    route("POST", R"(/v1/episodes/([^/]+)/step)", "episodes.step", true, "step",
          [this](const httplib::Request& r) { return std::pair{200, episodes.step(r.matches[1].str(), parse_body(r))}; });
    route("GET", R"(/v1/episodes/([^/]+))", "episodes.get", false, "",
          [this](const httplib::Request& r) { return std::pair{200, episodes.get(r.matches[1].str())}; });
    route("DELETE", R"(/v1/episodes/([^/]+))", "episodes.delete", false, "", [this](const httplib::Request& r) {
      episodes.remove(r.matches[1].str());
      return std::pair{200, json{{"episode_id", r.matches[1].str()}, {"deleted", true}}};
    });
    route("POST", "/v1/evaluate", "evaluate", true, "evaluate", [this](const httplib::Request& r) {
      json body = parse_body(r);
      if (body.value("async", false)) return std::pair{202, json{{"id", evaluations.submit(body)}, {"status", "queued"}}};
      return std::pair{200, evaluations.evaluate(body)};
    });
    route("POST", "/v1/evaluate/batch", "evaluate.batch", true, "evaluate",
          [this](const httplib::Request& r) {
            json body = parse_body(r);
            const bool async = body.value("async", false);
            return std::pair{async ? 202 : 200, evaluations.evaluate_batch(body)};
          });
    route("GET", R"(/v1/results/([^/]+))", "results", false, "",
          [this](const httplib::Request& r) { return std::pair{200, evaluations.result(r.matches[1].str())}; });
    route("POST", "/v1/reward", "reward", true, "reward",
          [this](const httplib::Request& r) { return std::pair{200, evaluations.reward(parse_body(r))}; });
    route("GET", "/v1/schema", "schema", false, "", [this](const httplib::Request&) {
      return std::pair{200, state.schema};
    });
    // 200 only when evaluations can run; else 503 with the reason as status (and the error).
    svr.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      json h = state.health();
      auto why = state.unavailable();
      if (!why && state.degraded) why = state.degraded();
      h["status"] = why ? why->code : "ok";
      if (why && why->code != "starting") h["error"] = why->what();
      if (why && why->retry_after_s > 0) res.set_header("Retry-After", std::to_string(why->retry_after_s));
      send_json(res, why ? 503 : 200, h);
      metrics.count_request("health", res.status);
    });
    svr.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.status = 200;
      res.set_content(metrics.prometheus(state.pool(), state.queue()) + (state.extra_metrics ? state.extra_metrics() : ""),
                      "text/plain; version=0.0.4");
      metrics.count_request("metrics", 200);
    });
  }
};

HttpServer::HttpServer(HttpOptions options, Episodes& episodes, Evaluations& evaluations, ServerMetrics& metrics,
                       ServerState state)
    : impl_(new Impl{std::move(options), episodes, evaluations, metrics, std::move(state), {}, 0}) {
  impl_->install();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  auto& i = *impl_;
  errno = 0;
  if (i.opt.port == 0) i.port = i.svr.bind_to_any_port(i.opt.host);
  else i.port = i.svr.bind_to_port(i.opt.host, i.opt.port) ? i.opt.port : -1;
  if (i.port > 0) {
    // httplib (0.11, built into Debian's library) listens with a backlog of 5: a trainer that
    // opens 64 connections at once gets some reset and one stuck in SYN-SENT for minutes. Linux
    // takes a second listen() on a listening socket as the new backlog (capped by somaxconn).
    if (i.listen_fd >= 0 && ::listen(i.listen_fd, SOMAXCONN) != 0)
      throw std::runtime_error(std::string("cannot widen the listen backlog: ") + std::strerror(errno));
    return i.port;
  }
  const int err = errno;
  const std::string where = i.opt.host + ":" + std::to_string(i.opt.port);
  // Something answering there is the common case: another server (kagent or not) holds the port.
  if (i.opt.port != 0) {
    httplib::Client probe(i.opt.host, i.opt.port);
    probe.set_connection_timeout(1, 0);
    if (probe.Get("/")) throw std::runtime_error("cannot listen on " + where + ": the port is in use by another server");
  }
  throw std::runtime_error("cannot listen on " + where + (err ? std::string(": ") + std::strerror(err) : std::string()));
}

bool HttpServer::serve() { return impl_->svr.listen_after_bind(); }
void HttpServer::stop() { impl_->svr.stop(); }

}  // namespace kagent::serve
