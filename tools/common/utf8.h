// Text from outside kagent (a candidate file, a compiler's output quoting it, a model's answer)
// may hold bytes that are not UTF-8. JSON text is UTF-8 and nlohmann refuses to write anything
// else (type_error.316, thrown from a dump: a `kagent eval` of random bytes aborted on it), so
// such text is made valid where it enters kagent's records, and every record is dumped with
// dump_json, which does the same to whatever is left.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kagent {

// `text` with each byte that does not start or continue a well-formed UTF-8 sequence replaced
// by U+FFFD (the replacement character): valid text comes back unchanged.
std::string valid_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

// j.dump(indent) that never throws on text that is not UTF-8: such bytes become U+FFFD.
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace kagent
