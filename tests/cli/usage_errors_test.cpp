// Every command's usage errors, for every command `kagent --help` lists (so a new command is
// covered the day it is added): an unknown flag, a word for each number the command takes, a
// missing argument, an unknown command. Each gives exactly one line, "kagent <command>: error:
// ...", naming the flag and the value in plain words, and exit status 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>

#include "help_text.h"

using namespace kagent::testing;

namespace {

KagentRun run(const std::vector<std::string>& args) {
  const TempDir dir("kagent-usage");
  return run_kagent(args, {}, dir.str());
}

void check_usage_error(const KagentRun& r, const std::string& prefix, const std::vector<std::string>& needles) {
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind(prefix, 0) == 0);
  for (const auto& n : needles) CHECK_MESSAGE(has(r.err, n), "expected \"" << n << "\"");
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("the commands kagent lists") {
  const auto commands = kagent_commands();
  for (const char* c : {"eval", "solve", "llm", "report"})
    CHECK_MESSAGE(std::find(commands.begin(), commands.end(), c) != commands.end(), c);
}

TEST_CASE("an unknown flag: one line naming it, status 2") {
  for (const auto& command : kagent_commands()) {
    CAPTURE(command);
    check_usage_error(run({command, "--no-such-flag", "x"}), "kagent " + command + ": error: ",
                      {"unknown flag --no-such-flag"});
  }
}

TEST_CASE("a word where a number goes: one line naming the flag and the word, status 2") {
  int numbers = 0;
  for (const auto& command : kagent_commands()) {
    for (const auto& opt : command_help(command).options) {
      if (!opt.numeric()) continue;
      for (const auto& name : opt.names) {
        CAPTURE(command);
        CAPTURE(name);
        check_usage_error(run({command, name, "abc"}), "kagent " + command + ": error: ",
                          {name + ": 'abc' is not a number"});
        ++numbers;
      }
    }
  }
  CHECK(numbers > 20);  // the help was read: eval, solve and llm take many numbers
}

TEST_CASE("a number out of range, a fraction for a count, a value not in the list") {
  check_usage_error(run({"solve", "-n", "0", "p.py"}), "kagent solve: error: ", {"-n: '0' is too small (at least 1)"});
  check_usage_error(run({"solve", "--turns", "2.5", "p.py"}), "kagent solve: error: ",
                    {"--turns: '2.5' is not a whole number"});
  check_usage_error(run({"eval", "--timeout", "0", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--timeout: '0' must be more than 0"});
  check_usage_error(run({"llm", "--reasoning-effort", "extreme", "hi"}), "kagent llm: error: ",
                    {"--reasoning-effort: 'extreme' is not one of low, medium, high"});
  check_usage_error(run({"solve", "--history", "most", "p.py"}), "kagent solve: error: ",
                    {"--history: 'most' is not one of full, kernels, last"});
  check_usage_error(run({"eval", "--format", "fortran", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--format: 'fortran' is not one of cuda, kernelbench"});
  // An unknown policy or tolerance preset, on every command that evaluates.
  for (const char* command : {"eval", "solve", "collect"}) {
    std::vector<std::string> args = {command, "--policy", "lenient", "p.py"};
    if (std::string(command) == "eval") args.push_back("k.cu");
    check_usage_error(run(args), std::string("kagent ") + command + ": error: ",
                      {"--policy: 'lenient' is not one of kernelbench, strict"});
  }
  check_usage_error(run({"eval", "--speedup-rounds", "1", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--speedup-rounds: '1' round has no interval (0, or 2 to 20)"});
  check_usage_error(run({"collect", "--speedup-rounds", "21", "p.py"}), "kagent collect: error: ",
                    {"--speedup-rounds: '21' is too large (at most 20)"});
  // The timing loop's floors and cap: seconds, not negative, not past a minute.
  check_usage_error(run({"eval", "--timing-min-time", "abc", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--timing-min-time: 'abc' is not a number"});
  check_usage_error(run({"collect", "--timing-warmup=-0.5", "p.py"}), "kagent collect: error: ",
                    {"--timing-warmup: '-0.5' is not from 0 to 60"});
  check_usage_error(run({"serve", "--timing-max-time", "0"}), "kagent serve: error: ",
                    {"--timing-max-time: '0' is not from 0.001 to 60"});
  check_usage_error(run({"collect", "--timing-min-samples", "0", "p.py"}), "kagent collect: error: ",
                    {"--timing-min-samples: '0'"});
  check_usage_error(run({"eval", "--timing-min-samples", "2.5", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--timing-min-samples: '2.5'"});
  check_usage_error(run({"eval", "--tolerance", "loose", "p.py", "k.cu"}), "kagent eval: error: ",
                    {"--tolerance: 'loose' is not one of kernelbench-v0.1, kernelbench-2025"});
  check_usage_error(run({"llm", "--provider", "gemini", "hi"}), "kagent llm: error: ",
                    {"--provider: 'gemini' is not one of openai, anthropic, replay:FILE"});
  check_usage_error(run({"llm", "--max-attempts"}), "kagent llm: error: ", {"--max-attempts needs a value"});
}

TEST_CASE("a phase budget that is not PHASE=SECONDS, on every command that evaluates: one line, status 2") {
  // Each command's positional argument where it needs one: nothing runs, the flags are checked first.
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"eval", {"p.py", "k.cu"}}, {"solve", {"p.py"}}, {"collect", {"suite"}}, {"baselines", {"suite"}}, {"serve", {}}};
  for (const auto& [command, positional] : commands) {
    CAPTURE(command);
    const auto with = [&](std::vector<std::string> flags) {
      flags.insert(flags.begin(), command);
      flags.insert(flags.end(), positional.begin(), positional.end());
      return run(flags);
    };
    const std::string prefix = "kagent " + command + ": error: ";
    check_usage_error(with({"--phase-budget", "timing=abc"}), prefix, {"--phase-budget: 'timing=abc': 'abc' is not a number"});
    check_usage_error(with({"--phase-gpu-budget", "load=1,timing=-1"}), prefix,
                      {"--phase-gpu-budget: 'timing=-1': '-1' is negative"});
    check_usage_error(with({"--phase-gpu-budget", "timing=0"}), prefix, {"'timing=0': '0' must be more than 0"});
    check_usage_error(with({"--phase-budget", "timng=5"}), prefix, {"no phase 'timng'", "guards_after_timing"});
    check_usage_error(with({"--phase-budget", "timing"}), prefix, {"'timing' is not PHASE=SECONDS"});
  }
}

// nvcc splits -I, -L and -Xlinker values at commas: a cache folder with one would lose every
// kagent build to torch's, silently (a device call of 2026-11-30 ran at a tenth of its speed so).
TEST_CASE("a cache folder with a comma, by flag or by environment: one line, status 2, on every command that evaluates") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"eval", {"p.py", "k.cu"}}, {"solve", {"p.py"}}, {"collect", {"suite"}}, {"baselines", {"suite"}}, {"serve", {}}};
  for (const auto& [command, positional] : commands) {
    CAPTURE(command);
    const TempDir dir("kagent-usage");
    std::vector<std::string> args{command, "--cache-dir", "/tmp/a,b"};
    args.insert(args.end(), positional.begin(), positional.end());
    check_usage_error(run_kagent(args, {}, dir.str()), "kagent " + command + ": error: ",
                      {"--cache-dir", "/tmp/a,b", "comma"});
    std::vector<std::string> plain{command};
    plain.insert(plain.end(), positional.begin(), positional.end());
    check_usage_error(run_kagent(plain, {"KAGENT_CACHE_DIR=/tmp/x,y"}, dir.str()), "kagent " + command + ": error: ",
                      {"/tmp/x,y", "comma", "KAGENT_CACHE_DIR"});
  }
}

TEST_CASE("a number below its range: the flag and the value, never a type's limits") {
  // CLI11's own checks said "Value -1 not in range 0 to 1.79769e+308".
  int checked = 0;
  for (const auto& command : kagent_commands()) {
    const CommandHelp help = command_help(command);
    // Without its required argument nothing runs, whether or not -1 is allowed (the commands
    // that need none, serve among them, are checked by name below).
    if (!help.required_positional) continue;
    for (const auto& opt : help.options) {
      if (!opt.numeric()) continue;
      CAPTURE(command);
      CAPTURE(opt.names.back());
      ++checked;
      const KagentRun r = run({command, opt.names.back(), "-1"});
      INFO(r.err);
      CHECK(r.status == 2);
      CHECK(r.err_lines() == 1);
      for (const char* limit : {"e+308", "1.79769", "2147483647", "9223372036854775807", "4294967295"})
        CHECK_MESSAGE(!has(r.err, limit), "the message shows a type's limit " << limit);
      CHECK_MESSAGE(!std::regex_search(r.err, std::regex("[0-9]{12,}")), "the message shows a type's limit in full");
    }
  }
  CHECK(checked >= 15);  // the help was read: eval, solve, curate, rollout take many numbers
  check_usage_error(run({"curate", "--min-speedup", "-1", "runs", "--out", "o"}), "kagent curate: error: ",
                    {"--min-speedup: '-1' is too small (at least 0)"});
  check_usage_error(run({"curate", "-k", "0", "runs", "--out", "o"}), "kagent curate: error: ", {"-k: '0' is too small (at least 1)"});
  check_usage_error(run({"rollout", "--gamma", "2", "runs", "--out", "o"}), "kagent rollout: error: ",
                    {"--gamma: '2' is not from 0 to 1"});
  check_usage_error(run({"serve", "--max-body-mb", "0"}), "kagent serve: error: ", {"--max-body-mb: '0' must be more than 0"});
  check_usage_error(run({"serve", "--queue", "-1"}), "kagent serve: error: ", {"--queue: '-1' is too small (at least 1)"});
  check_usage_error(run({"serve", "--port", "70000"}), "kagent serve: error: ", {"--port: '70000' is too large (at most 65535)"});
}

TEST_CASE("a missing argument, an extra one") {
  for (const auto& command : kagent_commands()) {
    if (!command_help(command).required_positional) continue;
    CAPTURE(command);
    check_usage_error(run({command}), "kagent " + command + ": error: ", {"missing "});
  }
  check_usage_error(run({"solve"}), "kagent solve: error: ", {"missing PROBLEM"});
  check_usage_error(run({"eval", "p.py", "k.cu", "extra"}), "kagent eval: error: ", {"unexpected argument 'extra'"});
}

TEST_CASE("an unknown command, or none: one line listing the commands, status 2") {
  const auto commands = kagent_commands();
  std::vector<std::string> listed(commands.begin(), commands.end());
  auto unknown = listed;
  unknown.push_back("unknown command 'frobnicate'");
  check_usage_error(run({"frobnicate"}), "kagent: error: ", unknown);
  auto none = listed;
  none.push_back("no command given");
  check_usage_error(run({}), "kagent: error: ", none);
  check_usage_error(run({"--frobnicate"}), "kagent: error: ", {"unknown flag --frobnicate"});
}

TEST_CASE("--help and --version are no errors") {
  for (const auto& command : kagent_commands()) {
    const KagentRun r = run({command, "--help"});
    CHECK(r.status == 0);
    CHECK(has(r.out, "Usage:"));
  }
  const KagentRun v = run({"--version"});
  CHECK(v.status == 0);
  CHECK(has(v.out, "kagent "));
}
