// An HTTP error with the JSON body every endpoint answers with:
//   {"error": {"code": "unknown_episode", "message": "..."}}
// Handlers throw it; the router turns it into the status and body (and Retry-After when set).
#pragma once

#include <stdexcept>
#include <string>

namespace kagent::serve {

struct ApiError : std::runtime_error {
  ApiError(int status, std::string code, const std::string& message, int retry_after_s = 0)
      : std::runtime_error(message), status(status), code(std::move(code)), retry_after_s(retry_after_s) {}
  int status;
  std::string code;
  int retry_after_s;  // > 0: sent as Retry-After
};

// 503 no_gpu: the server is not --compile-only and its workers see no GPU, so nothing can be
// evaluated (and a verdict that never ran must not reach a trainer as reward 0).
inline ApiError no_gpu_error() {
  return ApiError(503, "no_gpu",
                  "no CUDA device is visible to kagent serve's workers, so answers cannot be run; restart it on a GPU "
                  "machine, or with --compile-only to compile and check answers without one");
}

}  // namespace kagent::serve
