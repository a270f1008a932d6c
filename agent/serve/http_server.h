// The HTTP face of `kagent serve` (cpp-httplib): routes, bearer token, request-size limit,
// JSON errors, 503 while the workers start, per-route metrics. The routes and their shapes
// are in api_schema.cpp (GET /v1/schema) and docs/serve.md.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/admission.h"
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
  std::function<bool()> ready;                       // every worker started
  std::function<nlohmann::json()> health;            // workers, device, counts
  std::function<QueueState()> queue;
  std::function<PoolCounters()> pool;
  nlohmann::json schema;                             // GET /v1/schema
};

class HttpServer {
 public:
  HttpServer(HttpOptions options, Episodes& episodes, Evaluations& evaluations, ServerMetrics& metrics, ServerState state);
  ~HttpServer();
  // Binds; returns the port. Throws std::runtime_error when it cannot.
  int bind();
  // Serves until stop(); returns false when serving failed.
  bool serve();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kagent::serve
