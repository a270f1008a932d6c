// Every file a command reads, replaced by what a wrong path or a broken disk gives: random
// bytes, an empty file, a folder, a file far larger than any such file (100 MiB, sparse), text
// that is not UTF-8, and JSON cut short. Each is one line on stderr and the exit status the
// command's docs give that input; never a signal (a `kagent eval` of random bytes once aborted
// with rc 134), never a library's exception text, never bytes that are not UTF-8, and never a
// worker or nvcc started for it (each run takes milliseconds; a worker would take seconds).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collect_fixtures.h"
#include "collection_builder.h"
#include "common/utf8.h"
#include "kagent_process.h"
#include "temp_dir.h"

using namespace kagent::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

enum class Bad { Random, Empty, Folder, Huge, NotUtf8, CutShort };
constexpr Bad kAll[] = {Bad::Random, Bad::Empty, Bad::Folder, Bad::Huge, Bad::NotUtf8, Bad::CutShort};

const char* name(Bad b) {
  switch (b) {
    case Bad::Random: return "3000 random bytes";
    case Bad::Empty: return "an empty file";
    case Bad::Folder: return "a folder";
    case Bad::Huge: return "100 MiB";
    case Bad::NotUtf8: return "text that is not UTF-8";
    case Bad::CutShort: return "JSON cut short";
  }
  return "?";
}

// Replaces `path` with the bad input. `good` is what the file should hold (cut short for CutShort).
void make_bad(const fs::path& path, Bad b, const std::string& good) {
  fs::remove_all(path);
  fs::create_directories(path.parent_path());
  switch (b) {
    case Bad::Random: {
      std::mt19937 rng(46049);
      std::string bytes(3000, '\0');
      for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
      std::ofstream(path, std::ios::binary) << bytes;
      break;
    }
    case Bad::Empty: std::ofstream(path).close(); break;
    case Bad::Folder: fs::create_directories(path / "inside"); break;
    case Bad::Huge: {
      std::ofstream(path).close();
      fs::resize_file(path, 100u << 20);  // sparse: no disk, no time
      break;
    }
    case Bad::NotUtf8: std::ofstream(path, std::ios::binary) << "{\"text\": \"caf\xe9 \xff\xfe\", \"x\": 1}\n# \xc3\x28\n"; break;
    case Bad::CutShort: std::ofstream(path, std::ios::binary) << good.substr(0, good.size() / 2); break;
  }
}

// What a fuzzed run must look like, whatever the input: one error line, or (status 0: a file
// whose bad lines the command skips and says so) warnings only.
void check_clean(const KagentRun& r, const std::string& command, int want) {
  INFO("stderr: " << kagent::valid_utf8(r.err));
  CHECK_MESSAGE(r.status < 128, "a signal: status " << r.status);
  CHECK(r.status == want);
  if (want != 0) {
    CHECK(r.err_lines() == 1);
    CHECK(r.err.rfind("kagent " + command + ": error: ", 0) == 0);
  } else {
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) CHECK(line.rfind("kagent " + command + ": warning: ", 0) == 0);
  }
  for (const char* raw : {"[json.exception", "json.exception", "filesystem error", "basic_string", "stoi", "stod",
                          "terminate called", "what():"})
    CHECK_MESSAGE(!has(r.err, raw), "library text: " << raw);
  CHECK(kagent::is_valid_utf8(r.err));
  CHECK(kagent::is_valid_utf8(r.out));
}

const std::string kCandidate =
    "#include <ATen/ATen.h>\n__global__ void k(const float* x, float* y, int64_t n) {\n"
    "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;\n}\n"
    "at::Tensor forward(at::Tensor x) {\n  at::Tensor y = at::empty_like(x);\n  int64_t n = x.numel();\n"
    "  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n  return y;\n}\n";

// One file input of one command: the command line with the file at `file`, the exit status each
// bad input gives (absent: that input does not apply, e.g. JSON cut short for a Python file).
struct Slot {
  std::string what, command;
  std::function<std::vector<std::string>(const std::string& file)> args;
  std::string good;  // the file's valid content, for CutShort
  std::map<Bad, int> want;
};

std::map<Bad, int> all(int status) {
  std::map<Bad, int> m;
  for (Bad b : kAll) m[b] = status;
  return m;
}

// A suite given as a list file: 4 when it names no problem (empty, or a folder without any), 3
// when it cannot be read as a list (docs/collect.md).
std::map<Bad, int> suite_statuses() {
  auto m = all(3);
  m[Bad::Empty] = 4;
  m[Bad::Folder] = 4;
  return m;
}

// A run's config.json or a collection's manifest.json: 5 unreadable, 4 a folder (then the folder
// is no run at all: docs/report.md, docs/curate.md).
std::map<Bad, int> settings_statuses() {
  auto m = all(5);
  m[Bad::Folder] = 4;
  return m;
}

// A file of lines the command reads past (a bad line is a warning): 0, and `folder` for a
// folder in its place.
std::map<Bad, int> tolerated(int folder) {
  auto m = all(0);
  m[Bad::Folder] = folder;
  return m;
}

}  // namespace

TEST_CASE("every command's file inputs: bad bytes give one line and a documented status, never an abort") {
  TempDir dir("kagent-fuzz");
  const std::string d = dir.str();
  const std::string problem = dir.write("good/1_relu.py", tiny_problem("torch.relu(x)"));
  const std::string candidate = dir.write("good/relu.cu", kCandidate);
  const std::string replay = write_tiny_replay(dir, "good/replay.jsonl", {"1_relu"}, 1, 1, 0);
  const std::string suite = fs::path(problem).parent_path().string();
  const json manifest_example = kagent::collect::testing::test_manifest({{"a", 1, {}, ""}}, 1, 1);
  const std::string reward_config = R"({"name": "kevin", "correct_weight": 0.3, "speedup_weight": 1.0})";
  // A collection of one problem with a finished sample: its folder is also a `kagent solve` run.
  auto collection = [&](const std::string& at) {
    const fs::path c = dir.path() / at;
    kagent::collect::testing::build_collection(
        c, {{"a", 1, {kagent::collect::testing::trajectory("a", 1, 0, {{kagent::Status::Correct, 1.5, 1.2}})}, ""}}, 1, 1);
    return c;
  };
  const std::string llm = "--provider";
  const std::string reward_collection = collection("c-reward").string();

  std::vector<Slot> slots = {
      // eval: exit 3 a path that is no file, 4 a problem that cannot load, 13 an invalid candidate.
      {"eval PROBLEM", "eval", [&](const std::string& f) { return std::vector<std::string>{"eval", f, candidate}; }, "",
       {{Bad::Random, 4}, {Bad::Empty, 4}, {Bad::Folder, 3}, {Bad::Huge, 4}, {Bad::NotUtf8, 4}}},
      {"eval CANDIDATE", "eval", [&](const std::string& f) { return std::vector<std::string>{"eval", problem, f, "--format", "cuda"}; }, "",
       {{Bad::Random, 13}, {Bad::Empty, 13}, {Bad::Folder, 3}, {Bad::Huge, 13}, {Bad::NotUtf8, 13}}},
      // solve: 3 no such file, 4 the problem does not load, 5 the replay file, 7 no run to resume.
      {"solve PROBLEM", "solve",
       [&](const std::string& f) { return std::vector<std::string>{"solve", f, llm, "replay:" + replay, "--runs-dir", d + "/runs"}; }, "",
       {{Bad::Random, 4}, {Bad::Empty, 4}, {Bad::Folder, 3}, {Bad::Huge, 4}, {Bad::NotUtf8, 4}}},
      {"solve --provider replay:FILE", "solve",
       [&](const std::string& f) { return std::vector<std::string>{"solve", problem, llm, "replay:" + f, "--runs-dir", d + "/runs"}; },
       kagent::read_file(replay), all(5)},
      {"solve --resume RUN (config.json)", "solve",
       [&](const std::string& f) { return std::vector<std::string>{"solve", "--resume", fs::path(f).parent_path().string()}; },
       R"({"problem": "/x.py", "samples": 1, "turns": 1})", all(7)},
      // collect: 3 the suite cannot be read, 4 it holds no problem, 5 the replay file, 7 no
      // collection to resume.
      {"collect SUITE (a list file)", "collect",
       [&](const std::string& f) { return std::vector<std::string>{"collect", f, llm, "replay:" + replay, "--compile-only"}; },
       problem + "\n", suite_statuses()},
      {"collect --provider replay:FILE", "collect",
       [&](const std::string& f) {
         return std::vector<std::string>{"collect", suite, llm, "replay:" + f, "--compile-only", "--out", d + "/never"};
       },
       kagent::read_file(replay), all(5)},
      {"collect --resume (manifest.json)", "collect",
       [&](const std::string& f) { return std::vector<std::string>{"collect", "--resume", fs::path(f).parent_path().string(), llm, "replay:" + replay}; },
       manifest_example.dump(2), all(7)},
      {"collect --metrics (manifest.json)", "collect",
       [&](const std::string& f) { return std::vector<std::string>{"collect", "--metrics", fs::path(f).parent_path().string()}; },
       manifest_example.dump(2), all(7)},
      // baselines: 3 the suite.
      {"baselines SUITE (a list file)", "baselines", [&](const std::string& f) { return std::vector<std::string>{"baselines", f}; },
       problem + "\n", suite_statuses()},
      // report, curate, rollout: 4 not a run (its config.json or manifest.json a folder), 5 a run's
      // own settings unreadable.
      {"report RUN (config.json)", "report",
       [&](const std::string& f) { return std::vector<std::string>{"report", fs::path(f).parent_path().string()}; },
       R"({"problem": "/x.py", "samples": 1, "turns": 1})", settings_statuses()},
      {"report COLLECTION (manifest.json)", "report",
       [&](const std::string& f) { return std::vector<std::string>{"report", fs::path(f).parent_path().string()}; },
       manifest_example.dump(2), settings_statuses()},
      {"curate RUN (config.json)", "curate",
       [&](const std::string& f) { return std::vector<std::string>{"curate", fs::path(f).parent_path().string(), "--out", d + "/never"}; },
       R"({"problem": "/x.py", "samples": 1, "turns": 1})", settings_statuses()},
      {"rollout COLLECTION (manifest.json)", "rollout",
       [&](const std::string& f) { return std::vector<std::string>{"rollout", fs::path(f).parent_path().string(), "--out", d + "/never"}; },
       manifest_example.dump(2), settings_statuses()},
      // rollout --reward-config: 2, a flag refused.
      {"rollout --reward-config FILE", "rollout",
       [&](const std::string& f) {
         return std::vector<std::string>{"rollout", reward_collection, "--out", d + "/never", "--reward-config", f};
       },
       reward_config, all(2)},
      // serve: 3 the data folder or the suite cannot be used.
      {"serve --problems SUITE (a list file)", "serve",
       [&](const std::string& f) { return std::vector<std::string>{"serve", "--problems", f, "--data", d + "/sdata", "--compile-only", "--port", "0"}; },
       problem + "\n", all(3)},
      {"solve --config FILE", "solve",
       [&](const std::string& f) { return std::vector<std::string>{"solve", problem, "--config", f, llm, "replay:" + replay}; },
       R"({"model": "m"})", all(5)},
      {"collect --merge OUT RUN (manifest.json)", "collect",
       [&](const std::string& f) {
         return std::vector<std::string>{"collect", "--merge", d + "/never", fs::path(f).parent_path().string()};
       },
       manifest_example.dump(2), all(7)},
      // A collection's index and a run's trajectories: a bad line is skipped (the report's page
      // says so), the rest is read. The metrics come from the run folders, whatever the index
      // holds; a folder in place of the trajectories leaves no run at all (4).
      {"collect --metrics (index.jsonl)", "collect",
       [&](const std::string& f) { return std::vector<std::string>{"collect", "--metrics", fs::path(f).parent_path().string()}; },
       "", tolerated(0)},
      {"report RUN (trajectories.jsonl)", "report",
       [&](const std::string& f) { return std::vector<std::string>{"report", fs::path(f).parent_path().string(), "--out", f + ".html"}; },
       "", tolerated(4)},
      // serve --data names a folder: a file there is 3.
      {"serve --data (a file)", "serve",
       [&](const std::string& f) { return std::vector<std::string>{"serve", "--data", f, "--compile-only", "--port", "0"}; }, "",
       [] {
         auto m = all(3);
         m.erase(Bad::Folder);  // a folder is what --data wants
         return m;
       }()},
      // llm: 2 an unusable replay or config file (docs/llm.md).
      {"llm --config FILE", "llm", [&](const std::string& f) { return std::vector<std::string>{"llm", "--config", f, "hi"}; },
       R"({"model": "m"})", all(2)},
      {"llm --provider replay:FILE", "llm", [&](const std::string& f) { return std::vector<std::string>{"llm", llm, "replay:" + f, "hi"}; },
       kagent::read_file(replay), [] {
         auto m = all(2);
         m[Bad::Empty] = 8;  // a replay of no answers runs out on its first request (docs/llm.md)
         return m;
       }()},
  };
  // A file inside a folder that is otherwise good: a run (a collection's problem folder) or a collection.
  int runs = 0;
  for (const auto& slot : slots) {
    for (const auto& [bad, want] : slot.want) {
      CAPTURE(slot.what);
      const std::string input = name(bad);
      CAPTURE(input);
      std::string file = d + "/in/" + std::to_string(runs) + "/input";
      const std::string c = fmt::format("c{}", runs);  // not "c" + to_string: GCC 12's false -Wrestrict
      if (has(slot.what, "config.json")) file = (collection(c) / "problems/a/config.json").string();
      else if (has(slot.what, "manifest.json")) file = (collection(c) / "manifest.json").string();
      else if (has(slot.what, "index.jsonl")) file = (collection(c) / "index.jsonl").string();
      else if (has(slot.what, "trajectories.jsonl")) file = (collection(c) / "problems/a/trajectories.jsonl").string();
      // JSON cut short: the slot's example, or the good file the fuzzed one replaces.
      const std::string good = slot.good.empty() && fs::is_regular_file(file) ? kagent::read_file(file) : slot.good;
      make_bad(file, bad, good);
      const KagentRun r = run_kagent(slot.args(file), {}, d);
      check_clean(r, slot.command, want);
      fs::remove_all(file);  // the 100 MiB file goes at once
      ++runs;
    }
  }
  CHECK(runs > 110);
  CHECK_FALSE(fs::exists(d + "/never"));  // refused before an output folder was made
  CHECK_FALSE(fs::exists(d + "/runs"));   // and before a run folder
}

// The bad input issue 49 met, each with the words it now gets (before: rc 134, "no such file",
// a run folder made then exit 6, "[json.exception.parse_error.101]", "filesystem error: cannot
// create directories", "the port is in use").
TEST_CASE("bad input that aborted or misled: one line that says what is wrong") {
  TempDir dir("kagent-bad-input");
  const std::string d = dir.str();
  const std::string problem = dir.write("p/1_relu.py", tiny_problem("torch.relu(x)"));
  const std::string replay = write_tiny_replay(dir, "replay.jsonl", {"1_relu"}, 1, 1, 0);
  const std::string a_file = dir.write("a-file", "x");
  auto line_has = [](const KagentRun& r, int status, const std::string& prefix, const std::string& words) {
    INFO(r.err);
    CHECK(r.status == status);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.rfind(prefix, 0) == 0);
    CHECK(has(r.err, words));
  };

  SUBCASE("a .cu of 3000 random bytes: an invalid candidate, not an abort") {
    make_bad(d + "/garbage.cu", Bad::Random, "");
    line_has(run_kagent({"eval", problem, d + "/garbage.cu"}, {}, d), 13, "kagent eval: error: ", "is not UTF-8 text");
  }
  SUBCASE("a folder given as the problem") {
    fs::create_directories(d + "/folder.py");
    line_has(run_kagent({"eval", d + "/folder.py", a_file}, {}, d), 3, "kagent eval: error: ", "is a folder, not a file");
    line_has(run_kagent({"solve", d + "/folder.py", "--provider", "replay:" + replay}, {}, d), 3, "kagent solve: error: ",
             "is a folder, not a file");
  }
  SUBCASE("a folder given as the replay file: refused before a run folder is made") {
    fs::create_directories(d + "/answers");
    line_has(run_kagent({"solve", problem, "--provider", "replay:" + d + "/answers", "--runs-dir", d + "/runs"}, {}, d), 5,
             "kagent solve: error: ", "replay file " + d + "/answers is a folder, not a file");
    CHECK_FALSE(fs::exists(d + "/runs"));
    dir.write("none.jsonl", "# no answers\n");
    line_has(run_kagent({"solve", problem, "--provider", "replay:" + d + "/none.jsonl", "--runs-dir", d + "/runs"}, {}, d), 5,
             "kagent solve: error: ", "holds no answers");
    CHECK_FALSE(fs::exists(d + "/runs"));
  }
  SUBCASE("a config.json or manifest.json that is not JSON: the file and what is wrong, in words") {
    dir.write("run/config.json", "{\"problem\": ");
    dir.write("run/trajectories.jsonl", "");
    const KagentRun r = run_kagent({"report", d + "/run"}, {}, d);
    line_has(r, 5, "kagent report: error: ", d + "/run/config.json");
    CHECK(has(r.err, "cut short: the JSON ends early (line 1, column 13)"));
    CHECK_FALSE(has(r.err, "json.exception"));
    line_has(run_kagent({"solve", "--resume", d + "/run"}, {}, d), 7, "kagent solve: error: ",
             "cannot resume " + d + "/run: " + d + "/run/config.json: cut short: the JSON ends early (line 1, column 13)");
    dir.write("coll/manifest.json", "not json");
    const KagentRun m = run_kagent({"collect", "--resume", d + "/coll", "--provider", "replay:" + replay}, {}, d);
    line_has(m, 7, "kagent collect: error: ", d + "/coll/manifest.json");
    CHECK(has(m.err, "not valid JSON (line 1, column 2)"));
    CHECK_FALSE(has(m.err, "json.exception"));
  }
  SUBCASE("an --out that cannot be created") {
    const KagentRun r = run_kagent({"collect", fs::path(problem).parent_path().string(), "--provider", "replay:" + replay,
                                    "--compile-only", "--out", a_file + "/sub"},
                                   {}, d);
    line_has(r, 2, "kagent collect: error: ", "--out: cannot create the folder " + a_file + "/sub: " + a_file +
                                                  " is a file, not a folder");
    CHECK_FALSE(has(r.err, "filesystem error"));
  }
  SUBCASE("collect --metrics says which record it read past (its sample is not counted)") {
    kagent::collect::testing::build_collection(
        dir.path() / "c", {{"a", 1, {kagent::collect::testing::trajectory("a", 1, 0, {{kagent::Status::Correct, 1.5, 1.2}})}, ""}}, 2, 1);
    std::ofstream(dir.path() / "c/problems/a/trajectories.jsonl", std::ios::app) << "{\"sample\": 1, \"turns\": [\xff\n";
    const KagentRun r = run_kagent({"collect", "--metrics", d + "/c"}, {}, d);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.rfind("kagent collect: warning: a: trajectories.jsonl line 2 unreadable: not valid JSON (line 1, column 25)", 0) == 0);
  }
  SUBCASE("--host an address of another machine") {
    const KagentRun r = run_kagent({"serve", "--host", "192.0.2.1", "--port", "0", "--compile-only", "--data", d + "/sdata"}, {}, d);
    line_has(r, 5, "kagent serve: error: ", "--host 192.0.2.1 is not an address of this machine");
    CHECK_FALSE(has(r.err, "in use"));
  }
}
