#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "traj_test_util.h"
#include "trajectory/run_store.h"

using namespace kagent;
using namespace kagent::traj;
using namespace kagent::traj::testing;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every line of trajectories.jsonl, parsed; fails the test on a bad line.
std::vector<Trajectory> read_lines(const fs::path& run) {
  std::string data = slurp(run / kTrajectoriesFile);
  if (!data.empty()) CHECK(data.back() == '\n');
  std::vector<Trajectory> out;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    REQUIRE_FALSE(line.empty());
    out.push_back(nlohmann::json::parse(line).get<Trajectory>());
  }
  return out;
}

Trajectory finished(Trajectory t, StopReason why = StopReason::TurnLimit) {
  t.status = SampleStatus::Stopped;
  t.stop_reason = why;
  return t;
}

RunStore::Options fast() {
  RunStore::Options o;
  o.durable = false;
  return o;
}

}  // namespace

TEST_CASE("run store: folder layout") {
  TempDir tmp;
  nlohmann::json config = {{"problem", "19_ReLU.py"}, {"samples", 4}, {"turns", 3}};
  auto store = RunStore::create(tmp.path() / "runs", "19_ReLU", config);
  const fs::path dir = store->dir();
  CHECK(dir.parent_path() == tmp.path() / "runs");
  CHECK(std::regex_match(dir.filename().string(), std::regex(R"(\d{8}-\d{6}-19_ReLU)")));
  CHECK(store->run_id() == dir.filename().string());
  CHECK(fs::is_regular_file(dir / "config.json"));
  CHECK(nlohmann::json::parse(slurp(dir / "config.json")) == config);
  CHECK(fs::is_regular_file(dir / "trajectories.jsonl"));
  CHECK(fs::file_size(dir / "trajectories.jsonl") == 0);
  CHECK(fs::is_directory(dir / "partial"));
  CHECK(fs::is_regular_file(dir / "summary.json"));
  CHECK_FALSE(fs::exists(dir / "best.cu"));

  // Same second, same problem: a second folder, never the same one.
  auto other = RunStore::create(tmp.path() / "runs", "19_ReLU", config);
  CHECK(other->dir() != dir);
  // Odd characters in the problem name do not make odd paths.
  auto odd = RunStore::create(tmp.path() / "runs", "a b/c", config);
  CHECK(odd->dir().parent_path() == tmp.path() / "runs");
  CHECK(odd->dir().filename().string().find("a_b_c") != std::string::npos);

  // An explicit path; refusing to start a second run on top of the first.
  auto at = RunStore::create_at(tmp.path() / "mine", config, fast());
  CHECK(at->dir() == tmp.path() / "mine");
  CHECK_THROWS(RunStore::create_at(tmp.path() / "mine", config));
  CHECK_THROWS(RunStore::open(tmp.path() / "nothing-here"));
  CHECK(RunStore::make_run_name("x", 0).size() == std::string("19700101-000000-x").size());
}

TEST_CASE("run store: finished samples are appended lines; best file and summary follow the best") {
  TempDir tmp;
  auto store = RunStore::create_at(tmp.path() / "run", {{"samples", 3}});
  const fs::path dir = store->dir();

  Trajectory a = make_trajectory(0);
  a.turns = {make_turn(0, Status::CompileError), make_turn(1, Status::Correct, 1.5, "// kernel A1")};
  store->save_partial(a);
  CHECK(fs::exists(dir / "partial/sample-0.json"));
  // A correct turn in a partial sample already produces best.cu.
  CHECK(slurp(dir / "best.cu") == "// kernel A1");
  CHECK(store->best()->sample == 0);
  CHECK(store->best()->turn == 1);
  store->finish_sample(finished(a));
  CHECK_FALSE(fs::exists(dir / "partial/sample-0.json"));

  Trajectory b = make_trajectory(1);
  b.turns = {make_turn(0, Status::Correct, 1.5, "// kernel B0 (tie: not better)"),
             make_turn(1, Status::Wrong, 5.0, "// wrong but fast")};
  store->finish_sample(finished(b));
  CHECK(slurp(dir / "best.cu") == "// kernel A1");

  Trajectory c = make_trajectory(2);
  c.turns = {make_turn(0, Status::Correct, 3.0, "class ModelNew: pass  # load_inline")};
  c.turns[0].eval->format = "kernelbench";
  store->finish_sample(finished(c, StopReason::TargetSpeedup));
  CHECK(slurp(dir / "best.py") == "class ModelNew: pass  # load_inline");
  CHECK_FALSE(fs::exists(dir / "best.cu"));  // one best file only

  auto lines = read_lines(dir);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].sample == 0);
  CHECK(lines[0].best_turn == 1);
  CHECK(lines[0].turns[1].reward.has_value());
  CHECK(lines[0].run_id == "run");
  CHECK_FALSE(lines[0].finished_at.empty());
  CHECK(lines[1].best_turn == 0);
  CHECK(lines[2].stop_reason == StopReason::TargetSpeedup);

  auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  CHECK(summary["best"]["sample"] == 2);
  CHECK(summary["best"]["file"] == "best.py");
  CHECK(summary["best"]["speedup_eager"].get<double>() == doctest::Approx(3.0));
  CHECK(summary["best"]["speedup_compiled"].get<double>() == doctest::Approx(1.5));
  CHECK(summary["samples_finished"] == 3);
  CHECK(summary["samples"].size() == 3);
  CHECK(summary["samples"][1]["correct_turns"] == 1);
  CHECK(summary["samples"][2]["stop_reason"] == "target_speedup");
  CHECK(summary["tokens"]["prompt"] == (100 + 101) + (100 + 101) + 100);
  CHECK(summary["problem"]["name"] == "19_ReLU");

  // No second line for a sample, no partial after the end, no line for a running sample.
  CHECK_THROWS_AS(store->finish_sample(finished(a)), std::logic_error);
  CHECK_THROWS_AS(store->save_partial(a), std::logic_error);
  CHECK_THROWS_AS(store->finish_sample(make_trajectory(7)), std::invalid_argument);
  CHECK(read_lines(dir).size() == 3);
}

TEST_CASE("run store: destroyed mid-sample, then resumed") {
  TempDir tmp;
  fs::path dir = tmp.path() / "run";
  {
    auto store = RunStore::create_at(dir, {{"samples", 2}}, fast());
    Trajectory done = make_trajectory(0);
    done.turns = {make_turn(0, Status::Correct, 1.1)};
    store->finish_sample(finished(done));
    Trajectory t = make_trajectory(1);
    t.turns = {make_turn(0, Status::Wrong), make_turn(1, Status::Correct, 2.0, "// s1t1")};
    store->save_partial(t);
  }  // the store goes away without finishing sample 1
  auto store = RunStore::open(dir, fast());
  auto st = store->resume();
  CHECK(st.is_finished(0));
  CHECK_FALSE(st.partial_for(0).has_value());
  auto p = st.partial_for(1);
  REQUIRE(p.has_value());
  CHECK(p->next_turn() == 2);
  CHECK(p->status == SampleStatus::Running);
  CHECK(p->turns[1].code == "// s1t1");
  CHECK(store->best()->sample == 1);
  CHECK(st.config["samples"] == 2);
  CHECK(st.warnings.empty());
}

TEST_CASE("run store: a killed process loses nothing and duplicates nothing on resume") {
  TempDir tmp;
  fs::path dir = tmp.path() / "run";
  {
    auto store = RunStore::create_at(dir, {{"samples", 4}, {"turns", 3}});
    Trajectory t = make_trajectory(0);
    t.turns = {make_turn(0, Status::Correct, 1.0), make_turn(1, Status::Correct, 1.2)};
    store->finish_sample(finished(t));
  }

  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child: resume, run some turns, then die without any cleanup.
    int rc = 0;
    try {
      auto store = RunStore::open(dir).release();  // leaked on purpose: no destructor runs
      Trajectory s1 = make_trajectory(1);
      s1.turns.push_back(make_turn(0, Status::CompileError));
      store->save_partial(s1);
      s1.turns.push_back(make_turn(1, Status::Correct, 1.8, "// s1 turn1"));
      store->save_partial(s1);
      Trajectory s2 = make_trajectory(2);
      s2.turns = {make_turn(0, Status::Correct, 1.3)};
      store->save_partial(s2);
      store->finish_sample(finished(s2));
      Trajectory s3 = make_trajectory(3);
      s3.turns = {make_format_error_turn(0)};
      store->save_partial(s3);
      // Simulate a kill landing between finish_sample's append and its unlink (a stale
      // partial of finished sample 2), a torn append (half a line) and a leftover temp file.
      std::ofstream(dir / "partial/sample-2.json") << nlohmann::json(s2).dump();
      std::ofstream(dir / kTrajectoriesFile, std::ios::app) << R"({"sample": 3, "turns": [{"ind)";
      std::ofstream(dir / "partial/sample-9.json.tmp.1234") << "{";
    } catch (...) {
      rc = 3;
    }
    ::_exit(rc);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  // Read-only scan sees the torn tail but changes nothing.
  auto before = fs::file_size(dir / kTrajectoriesFile);
  auto scanned = RunStore::scan(dir);
  CHECK(fs::file_size(dir / kTrajectoriesFile) == before);
  CHECK_FALSE(scanned.warnings.empty());

  auto store = RunStore::open(dir);
  auto st = store->resume();
  CHECK(st.finished.size() == 2);
  CHECK(st.is_finished(0));
  CHECK(st.is_finished(2));
  CHECK(st.partial.size() == 2);
  CHECK_FALSE(fs::exists(dir / "partial/sample-2.json"));       // stale partial removed
  CHECK_FALSE(fs::exists(dir / "partial/sample-9.json.tmp.1234"));
  REQUIRE(st.warnings.size() == 1);                             // the torn line
  CHECK(st.warnings[0].find("torn") != std::string::npos);

  // Sample 1 continues at turn 2 with its two turns intact.
  auto s1 = st.partial_for(1);
  REQUIRE(s1.has_value());
  CHECK(s1->next_turn() == 2);
  CHECK(s1->turns[0].eval->status == Status::CompileError);
  CHECK(s1->turns[1].code == "// s1 turn1");
  auto s3 = st.partial_for(3);
  REQUIRE(s3.has_value());
  CHECK(s3->next_turn() == 1);
  CHECK(store->best()->sample == 1);  // 1.8 from the partial of sample 1

  // The resumed loop: skip finished ones, continue the others.
  for (int i = 0; i < 4; ++i) {
    if (st.is_finished(i)) continue;
    Trajectory t = st.partial_for(i).value_or(make_trajectory(i));
    for (int turn = t.next_turn(); turn < 3; ++turn) {
      t.turns.push_back(make_turn(turn, Status::Correct, 1.0 + turn));
      store->save_partial(t);
    }
    store->finish_sample(finished(t));
  }

  auto lines = read_lines(dir);
  REQUIRE(lines.size() == 4);
  std::set<int> samples;
  for (const auto& t : lines) samples.insert(t.sample);
  CHECK(samples == std::set<int>{0, 1, 2, 3});
  for (const auto& t : lines) {
    for (size_t k = 0; k < t.turns.size(); ++k) CHECK(t.turns[k].index == static_cast<int>(k));
  }
  CHECK(lines[2].turns.size() == 3);  // sample 1: two from the child + one now, nothing repeated
  CHECK(lines[2].turns[1].code == "// s1 turn1");
  CHECK(lines[3].turns.size() == 3);
  CHECK(fs::is_empty(dir / "partial"));
  CHECK(RunStore::scan(dir).warnings.empty());
  auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  CHECK(summary["samples_finished"] == 4);
  CHECK(summary["samples_in_progress"] == 0);
}

TEST_CASE("run store: 8 threads finishing samples concurrently give 8 whole lines") {
  TempDir tmp;
  auto store = RunStore::create_at(tmp.path() / "run", {{"samples", 8}});
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      try {
        Trajectory t = make_trajectory(i);
        for (int turn = 0; turn < 3; ++turn) {
          // Big turns: each line is far over PIPE_BUF, so only the lock keeps them whole.
          t.turns.push_back(make_turn(turn, Status::Correct, 1.0 + 0.1 * i + turn,
                                      std::string(100000, static_cast<char>('a' + i))));
          store->save_partial(t);
        }
        store->finish_sample(finished(t));
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  auto lines = read_lines(store->dir());
  REQUIRE(lines.size() == 8);
  std::set<int> samples;
  for (const auto& t : lines) {
    samples.insert(t.sample);
    CHECK(t.turns.size() == 3);
    CHECK(t.turns[2].code == std::string(100000, static_cast<char>('a' + t.sample)));
  }
  CHECK(samples.size() == 8);
  CHECK(store->best()->sample == 7);
  CHECK(store->best()->turn == 2);
  CHECK(slurp(store->dir() / "best.cu") == std::string(100000, 'h'));
  CHECK(fs::is_empty(store->dir() / "partial"));
}
