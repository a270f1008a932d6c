// Drops members with named keys from JSON text before it is parsed, in one pass over the bytes. A collection page reads thousands of trajectories of
// which nearly all bytes are text it does not show (messages, code, reasoning); a JSON
// parser would still decode every one of those strings, this pass only steps over them.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace kagent::report {

// `text` without the members whose key is in `keys` and sits at nesting depth `min_depth` or
// deeper (the top-level object's keys are at depth 1): readers see those keys as absent.
// Malformed text is returned as far as it could be followed, for the parser to report.
std::string skim_json(std::string_view text, const std::set<std::string_view>& keys, int min_depth);

}  // namespace kagent::report
