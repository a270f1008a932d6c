#include <doctest/doctest.h>

#include <set>
#include <stdexcept>

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
  CHECK(d.value("metrics_source", "") == "metrics.json");
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

namespace {
// verdict_mix_problems() as a collection ruled by `policy`.
json verdict_mix(const TempDir& tmp, const std::string& policy, bool metrics) {
  const auto dir = tmp.path() / "mix";
  write_collection_of(dir, verdict_mix_problems(), policy, metrics);
  return collection_page_data(dir);
}

const json& problem_row(const json& d, const std::string& name) {
  for (const auto& p : d["problems"])
    if (p["name"] == name) return p;
  FAIL("no row for " << name);
  throw std::logic_error("unreachable");
}

const json& group_all(const json& groups) { return groups.back(); }
}  // namespace

// Issue 49: the page said "the collection has no metrics.json yet" beside collect's own file,
// because it took collect's computed_by for the report's.
TEST_CASE("metrics.json as kagent collect writes it (with computed_by) is said to be read from the file") {
  TempDir with, without;
  const json d = verdict_mix(with, "kernelbench", true);
  CHECK(d["metrics"].value("computed_by", "") == "kagent collect");
  CHECK(d.value("metrics_source", "") == "metrics.json");
  CHECK(verdict_mix(without, "kernelbench", false).value("metrics_source", "") == "computed");
}

// Issue 49: only the ruling policy's numbers were on the page, and a strict-rejected answer
// counted as solved however the numbers were read.
TEST_CASE("both policies' numbers: a turn strict rejects is solved under kernelbench only") {
  TempDir tmp;
  const json d = verdict_mix(tmp, "kernelbench", true);
  CHECK(d.value("policy", "") == "kernelbench");
  REQUIRE(d.contains("policies"));
  CHECK(d["policies"]["kernelbench"]["problems_solved"] == 2);
  CHECK(d["policies"]["strict"]["problems_solved"] == 1);
  CHECK(d["policies"]["kernelbench"]["samples_correct"] == 2);
  CHECK(d["policies"]["strict"]["samples_correct"] == 1);
  const json& flagged = problem_row(d, "L1_1_flagged");
  CHECK(flagged["outcome"] == "solved");  // the ruling policy's
  CHECK(flagged["policies"]["kernelbench"]["outcome"] == "solved");
  CHECK(flagged["policies"]["strict"]["outcome"] == "unsolved");
  CHECK(flagged["policies"]["kernelbench"]["best_speedup_eager"] == 2.0);
  CHECK(flagged["policies"]["strict"]["best_speedup_eager"].is_null());
  // fast_1 over eager among the 5 samples: the flagged 2.0x and 1.5x under kernelbench, 1.5x under strict.
  const json& m = d["metrics"];
  CHECK(group_all(m["policies"]["kernelbench"])["fast_p"]["eager"]["1.0"].get<double>() == doctest::Approx(0.4));
  CHECK(group_all(m["policies"]["strict"])["fast_p"]["eager"]["1.0"].get<double>() == doctest::Approx(0.2));
  // Each sample's speedups under each policy, for the page's fast_p curve.
  const json& s = flagged["sample_speedups"][0]["policies"];
  CHECK(s["kernelbench"]["correct"] == true);
  CHECK(s["strict"]["correct"] == false);

  // A collection ruled by strict: the same turn is unsolved on the page's main outcome.
  TempDir strict_tmp;
  const json ds = verdict_mix(strict_tmp, "strict", true);
  CHECK(problem_row(ds, "L1_1_flagged")["outcome"] == "unsolved");
  CHECK(ds["policies"]["strict"]["problems_solved"] == 1);
  CHECK(ds["policies"]["kernelbench"]["problems_solved"] == 2);
}

// Issue 49: compile_error, no_kernel and the rest were all one "unsolved".
TEST_CASE("the verdict breakdown counts every turn by its verdict under each policy, rejections by guard") {
  TempDir tmp;
  const json d = verdict_mix(tmp, "kernelbench", true);
  REQUIRE(d.contains("policies"));
  const json kernelbench = {{"compile_error", 2}, {"correct", 2},       {"rejected:no_kernel", 1},
                            {"wrong", 1},         {"runtime_error", 1}, {"timeout", 1},
                            {"no_verdict:format", 1}};
  const json strict = {{"compile_error", 2}, {"correct", 1},       {"rejected:library_share", 1}, {"rejected:no_kernel", 1},
                       {"wrong", 1},         {"runtime_error", 1}, {"timeout", 1},                {"no_verdict:format", 1}};
  CHECK(d["policies"]["kernelbench"]["verdicts"] == kernelbench);
  CHECK(d["policies"]["strict"]["verdicts"] == strict);
  CHECK(d["policies"]["kernelbench"]["turns"] == 9);
  CHECK(problem_row(d, "L1_2_no_kernel")["policies"]["strict"]["verdicts"] == json{{"rejected:no_kernel", 1}});
}

// Issue 49: the torch.compile view showed 0.0% fast_p where torch.compile was never timed; the
// page needs to know that nothing was measured to say n/a.
TEST_CASE("the page data says how many turns were timed against each baseline") {
  TempDir tmp;
  const json d = verdict_mix(tmp, "kernelbench", true);
  REQUIRE(d.contains("timed_turns"));
  CHECK(d["timed_turns"]["eager"] == 3);
  CHECK(d["timed_turns"]["compiled"] == 0);
  CHECK(problem_row(d, "L1_1_flagged")["timed_turns"]["compiled"] == 0);
}

TEST_CASE("a metrics.json from before policies keeps its groups and gets every policy's computed") {
  TempDir tmp;
  const auto dir = tmp.path() / "mix";
  write_collection_of(dir, verdict_mix_problems(), "kernelbench", true);
  json file = json::parse(read_file(dir / "metrics.json"));
  file.erase("policies");
  file.erase("policy");
  write_text(dir / "metrics.json", file.dump());
  const json d = collection_page_data(dir);
  CHECK(d.value("metrics_source", "") == "metrics.json");
  CHECK(d["metrics"]["groups"] == file["groups"]);
  CHECK(d["metrics"].value("policies_computed", false));
  REQUIRE(d["metrics"].contains("policies"));
  CHECK(d["metrics"]["policies"]["kernelbench"] == file["groups"]);
  CHECK(group_all(d["metrics"]["policies"]["strict"])["fast_p"]["eager"]["1.0"].get<double>() == doctest::Approx(0.2));
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
