// The HTML page: the embedded template with its style, the vendored jsdiff (with its
// license), the page script and the page data as one JSON block, all inline, so the page
// opens anywhere with no network.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kagent::report {

// `data`: {"kind": "run"|"collection", ...} as report_writer assembles it; `title` is plain text.
std::string render_page(const nlohmann::json& data, const std::string& title);

}  // namespace kagent::report
