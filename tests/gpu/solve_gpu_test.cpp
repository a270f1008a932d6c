// `kagent solve` end to end on the GPU: the shipped replay example (compile error, wrong,
// correct but slow, fast) with real compilation, evaluation and profiling. Each next prompt
// must carry the evidence of the turn before. Skips, saying why, without a GPU.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/gzip_file.h"
#include "prompt/sass_feedback.h"
#include "temp_dir.h"

namespace fs = std::filesystem;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::string messages_of(const nlohmann::json& turn) {
  std::string s;
  for (const auto& m : turn["messages"]) s += m["content"].get<std::string>() + "\n";
  return s;
}
}  // namespace

TEST_CASE("kagent solve: the shipped replay example with real evaluation") {
  const fs::path root = KAGENT_SOURCE_DIR;
  const kagent::testing::TempDir dir("kagent-solve-gpu");
  const fs::path& runs = dir.path();
  // Two counter passes (the worker's default is one): the roofline's FLOPs reach the feedback.
  std::string cmd = fmt::format("KAGENT_PROFILER_PASSES=2 {}/kagent solve {} --llm replay:{} --runs-dir {} --json > {}/out.json 2> {}/err.txt",
                                KAGENT_BINARY_DIR, (root / "examples/elementwise_gelu.py").string(),
                                (root / "examples/elementwise_gelu.replay.jsonl").string(), runs.string(),
                                runs.string(), runs.string());
  int ws = std::system(cmd.c_str());
  int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  std::string err = kagent::read_file(runs / "err.txt");
  INFO(err);
  auto summary = nlohmann::json::parse(kagent::read_file(runs / "out.json"), nullptr, false);
  REQUIRE_FALSE(summary.is_discarded());
  CHECK(status == 0);
  fs::path run = summary["run"].get<std::string>();
  auto t = nlohmann::json::parse(kagent::read_file(run / "trajectories.jsonl"));
  REQUIRE(t["turns"].size() == 4);
  const auto& turns = t["turns"];
  CHECK(turns[0]["eval"]["status"] == "compile_error");
  CHECK(turns[1]["eval"]["status"] == "wrong");
  CHECK(turns[2]["eval"]["status"] == "correct");
  CHECK(turns[3]["eval"]["status"] == "correct");
  double slow = turns[2]["eval"]["timing"]["speedup_eager"].get<double>();
  double fast = turns[3]["eval"]["timing"]["speedup_eager"].get<double>();
  CHECK(fast > 2 * slow);
  // Each prompt carries the evidence of the turn before.
  CHECK(has(messages_of(turns[1]), "no suitable conversion function"));
  CHECK(has(messages_of(turns[2]), "elements outside atol="));
  std::string m4 = messages_of(turns[3]);
  CHECK(has(m4, "over eager"));
  CHECK(has(m4, "## Profile"));
  // Every compiled turn refers to its SASS in the run folder, and the file opens; the feedback
  // carries the machine-code lines, each within the stated limit (FeedbackLimits::sass).
  for (size_t i = 1; i < turns.size(); ++i) {
    const auto& sass = turns[i]["eval"]["compile"]["sass"];
    INFO("turn " << i + 1 << ": " << sass.dump());
    REQUIRE(sass["available"] == true);
    CHECK(sass["file"] == fmt::format("candidates/s0-t{}.sass.gz", i + 1));
    const std::string text = kagent::read_gzip_file(run / sass["file"].get<std::string>());
    CHECK(has(text, "Function : "));
    CHECK_FALSE(sass["kernels"].empty());
  }
  const std::string fb = turns[3]["feedback"].get<std::string>();
  const size_t sass_at = fb.find("## Machine code (SASS for sm_");
  REQUIRE(sass_at != std::string::npos);
  const kagent::prompt::SassFeedbackLimits limits;
  std::string section = fb.substr(sass_at, fb.find("\n\n", sass_at) - sass_at);
  for (size_t start = 0; start < section.size();) {
    size_t end = std::min(section.find('\n', start), section.size());
    const std::string line = section.substr(start, end - start);
    if (line.rfind("- ", 0) == 0) CHECK(line.size() <= limits.line_bytes + 40);  // "- note: " and the cut marker
    start = end + 1;
  }
  CHECK(has(m4, "roofline "));  // FLOPs, bytes, intensity and position in the profile text
  std::cout << "Solve replay feedback, turn 4:\n" << section << "\n";
  CHECK(t["best_turn"] == 3);
  CHECK(fs::exists(run / "best.cu"));
  std::cout << fmt::format("Solve replay: {} -> {} -> correct {:.2f}x -> correct {:.2f}x over eager on {}; best turn {}\n",
                           turns[0]["eval"]["status"].get<std::string>(), turns[1]["eval"]["status"].get<std::string>(),
                           slow, fast, t["versions"]["gpu"].get<std::string>(), t["best_turn"].get<int>() + 1);
}
