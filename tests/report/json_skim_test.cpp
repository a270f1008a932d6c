#include <doctest/doctest.h>

#include "report/json_skim.h"
#include "report_test_util.h"

using namespace kagent::report;
using nlohmann::json;

namespace {
// What nlohmann's own parser makes of the text with those keys discarded.
json reference(const std::string& text, const std::set<std::string_view>& keys, int min_depth) {
  json::parser_callback_t cb = [&](int depth, json::parse_event_t e, json& parsed) {
    if (e == json::parse_event_t::key && depth >= min_depth && keys.count(parsed.get<std::string>())) {
      return false;
    }
    return true;
  };
  json j = json::parse(text, cb);
  return j;
}

// The document without those keys anywhere (the parser's callback keeps top-level ones).
json without(json j, const std::set<std::string_view>& keys) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (keys.count(it.key())) it = j.erase(it);
      else {
        it.value() = without(it.value(), keys);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) v = without(v, keys);
  }
  return j;
}
}  // namespace

TEST_CASE("skim_json drops the values of the named keys at or below a depth, and nothing else") {
  const std::string text = R"({"code": "top stays", "turns": [{"code": "x \"}]{[ \\", "n": 1, "eval": {"log": ["a", {"b": "}"}],
      "status": "wrong", "code" : 5}, "text": "\"code\": not a key", "messages": [{"role": "user"}]}, {"code": null}], "log": true})";
  const std::set<std::string_view> keys = {"code", "log", "messages"};
  const json skimmed = json::parse(skim_json(text, keys, 3));
  CHECK(skimmed["code"] == "top stays");                 // depth 1: kept
  CHECK(skimmed["log"] == true);
  CHECK_FALSE(skimmed["turns"][0].contains("code"));
  CHECK_FALSE(skimmed["turns"][0]["eval"].contains("log"));
  CHECK_FALSE(skimmed["turns"][0]["eval"].contains("code"));  // whitespace before the colon, last member
  CHECK(skimmed["turns"][0]["eval"]["status"] == "wrong");
  CHECK(skimmed["turns"][0]["text"] == "\"code\": not a key");
  CHECK_FALSE(skimmed["turns"][0].contains("messages"));
  CHECK(skimmed["turns"][0]["n"] == 1);
  CHECK(skimmed["turns"][1] == json::object());               // the only member
  CHECK(without(skimmed, keys) == without(reference(text, keys, 3), keys));
}

TEST_CASE("skim_json on a real trajectory gives what the parser gives with those keys discarded") {
  const std::string line = kagent::read_file(testing::real_run_fixture() / "trajectories.jsonl");
  const std::set<std::string_view> keys = {"messages", "reasoning", "answer", "code", "feedback", "profile", "log"};
  const std::string skimmed = skim_json(line, keys, 3);
  CHECK(skimmed.size() * 3 < line.size());
  CHECK(without(json::parse(skimmed), keys) == without(reference(line, keys, 3), keys));
}

TEST_CASE("skim_json leaves malformed text for the parser to reject") {
  CHECK_THROWS(json::parse(skim_json(R"({"turns": [{"code": "unterminated)", {"code"}, 3)));
  CHECK_THROWS(json::parse(skim_json(R"({"turns": [{"code": )", {"code"}, 3)));
}
