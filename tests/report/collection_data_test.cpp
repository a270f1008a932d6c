#include <doctest/doctest.h>

#include <set>

#include "report/collection_data.h"
#include "report/report_error.h"
#include "report_test_util.h"

using namespace kagent;
using namespace kagent::report;
using namespace kagent::report::testing;
using nlohmann::json;

namespace {
std::filesystem::path make_collection(const TempDir& tmp, bool metrics, double running = 0.0) {
  CollectionOptions c;
  c.problems = 24;
  c.metrics = metrics;
  c.problem_errors = 0.1;
  c.running = running;
  const auto dir = tmp.path() / "coll";
  write_synthetic_collection(dir, synth_options(3, 3), c);
  return dir;
}
}  // namespace

TEST_CASE("a collection: every listed problem has a row, outcomes agree with index.jsonl") {
  TempDir tmp;
  const auto dir = make_collection(tmp, true);
  const json d = collection_page_data(dir);
  REQUIRE(d["problems"].size() == 24);
  std::set<std::string> solved_in_index, errors_in_index;
  std::istringstream index(read_file(dir / "index.jsonl"));
  for (std::string line; std::getline(index, line);) {
    const json j = json::parse(line);
    if (j["status"] == "problem_error") errors_in_index.insert(j["problem"]);
    else if (j["correct"] == true) solved_in_index.insert(j["problem"]);
  }
  int solved = 0, errors = 0;
  for (const auto& p : d["problems"]) {
    const std::string name = p["name"];
    if (p["outcome"] == "solved") {
      ++solved;
      CHECK(solved_in_index.count(name) == 1);
      CHECK(p["run"]["samples"].size() == 3);
      CHECK(p["sample_speedups"].size() == 3);
    }
    if (p["outcome"] == "problem_error") {
      ++errors;
      CHECK(errors_in_index.count(name) == 1);
      CHECK(p["reason"].get<std::string>().find("get_inputs") != std::string::npos);
    }
  }
  CHECK(solved == static_cast<int>(solved_in_index.size()));
  CHECK(errors == static_cast<int>(errors_in_index.size()));
  CHECK_FALSE(d["metrics"].contains("computed_by"));  // read from metrics.json
  CHECK(d["baselines"]["gpu"] == "NVIDIA H200");
  CHECK(d["warnings"].empty());
}

TEST_CASE("a collection without metrics.json gets the metrics computed, the same as collect's file") {
  TempDir with, without;
  const json from_file = collection_page_data(make_collection(with, true))["metrics"];
  json computed = collection_page_data(make_collection(without, false))["metrics"];
  CHECK(computed.contains("computed_by"));
  CHECK(computed["groups"] == from_file["groups"]);
}

TEST_CASE("a collection in progress: running problems and a torn index line are shown, not fatal") {
  TempDir tmp;
  const auto dir = make_collection(tmp, false, 0.3);
  append_text(dir / "index.jsonl", R"({"problem": "L1_1_Re)");
  const json d = collection_page_data(dir);
  int running = 0;
  for (const auto& p : d["problems"]) running += p["outcome"] == "running" || (p["run"].is_object() && p["run"]["samples_running"] > 0);
  CHECK(running > 0);
  bool torn = false;
  for (const auto& w : d["warnings"]) torn |= w.get<std::string>().find("index.jsonl: the last line is torn") != std::string::npos;
  CHECK(torn);
}

TEST_CASE("a manifest of another kind, or unreadable, is a ReportError") {
  TempDir tmp;
  auto status_of = [&](const std::string& manifest) {
    write_text(tmp.path() / "manifest.json", manifest);
    try {
      collection_page_data(tmp.path());
    } catch (const ReportError& e) {
      return e.exit_status();
    }
    return 0;
  };
  CHECK(status_of(R"({"kind": "something-else"})") == report_exit::kNotARun);
  CHECK(status_of("{broken") == report_exit::kUnreadable);
  CHECK(status_of(R"({"kind": "kagent-collection"})") == 0);  // empty, but a collection
}

TEST_CASE("a problem whose run folder holds malformed settings is listed as unreadable, the others stay") {
  TempDir tmp;
  const auto dir = make_collection(tmp, true);
  const json before = collection_page_data(dir)["problems"];
  size_t broken = 0;
  while (!before[broken]["run"].is_object()) ++broken;
  write_text(dir / "problems" / before[broken]["name"].get<std::string>() / "config.json", R"({"samples": "four", "turns": []})");
  const json d = collection_page_data(dir);
  for (size_t i = 0; i < before.size(); ++i)
    CHECK((d["problems"][i]["outcome"] == "unreadable") == (i == broken));
  CHECK(d["warnings"].size() == 1);
}
