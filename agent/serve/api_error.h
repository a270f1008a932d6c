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

}  // namespace kagent::serve
