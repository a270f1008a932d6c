// The HTTP face of `kagent serve` (cpp-httplib): routes, bearer token, request-size limit,
// JSON errors, 503 while the workers start, per-route metrics. The routes and their shapes
// are in api_schema.cpp (GET /v1/schema) and docs/serve.md.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/admission.h"
#include "serve/api_error.h"
#include "serve/episodes.h"
#include "serve/evaluations.h"
#include "serve/server_metrics.h"

namespace kagent::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                       // 0: any free port
  std::string token;                     // empty: no authentication
  size_t max_body_bytes = 8u << 20;
  size_t threads = 128;                  // connections served at once (a step holds one while it runs)
};

// What the routes need besides episodes and evaluations.
struct ServerState {
  // Why evaluations cannot run now: 503 "starting" (with Retry-After) while the workers start,
  // "no_gpu" when they see no GPU outside --compile-only, "workers_failed"; nullopt when they can.
  // The routes that evaluate answer it; /health reports it as its status.
  std::function<std::optional<ApiError>()> unavailable;
  std::function<nlohmann::json()> health;            // workers, device, counts
  std::function<QueueState()> queue;
  std::function<PoolCounters()> pool;
  // With --queue: 503 "degraded" while the cluster's Redis cannot be reached (requests still
  // wait for it, within a bound); /health only. Unset: never.
  std::function<std::optional<ApiError>()> degraded;
  std::function<std::string()> extra_metrics;        // appended to /metrics (the queue's and cluster's)
  nlohmann::json schema;                             // GET /v1/schema
};

class HttpServer {
 public:
  HttpServer(HttpOptions options, Episodes& episodes, Evaluations& evaluations, ServerMetrics& metrics, ServerState state);
  ~HttpServer();
  // Binds (never sharing the port with another listener: no SO_REUSEPORT); returns the port.
  // Throws std::runtime_error saying why when it cannot.
  int bind();
  // Serves until stop(); returns false when serving failed.
  bool serve();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kagent::serve
