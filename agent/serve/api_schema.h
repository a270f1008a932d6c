// GET /v1/schema: the routes, their request and response fields, error codes and limits, as
// JSON, so a client can check what this server speaks.
#pragma once

#include <nlohmann/json.hpp>

namespace kagent::serve {

nlohmann::json api_schema(size_t max_body_bytes, double task_timeout_s);

}  // namespace kagent::serve
