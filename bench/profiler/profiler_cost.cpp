// profiler_cost: what the profile phase adds to an evaluation (issue 27's target: at most +10%).
//
// Per example (examples/<name>.py with its .cu), side by side in one run so that machine drift
// hits both alike:
//  - one long-lived worker, as `kagent solve` keeps it, the profile on and off in alternate
//    evaluations (after a warm-up: compile, spec, baselines cached). The profile's cost is its
//    phase plus its effect on the rest of the evaluation, from the pairs of every case pooled;
//    each case's end-to-end paired estimate and ratio of medians are shown beside it. The
//    per-process drift below does not enter them;
//  - two long-lived workers, one with the profile and one without, evaluations interleaved:
//    whether a worker that keeps the range profiler's session times its candidate the same
//    (the last two columns). Their eval times drift apart by a process's own state (its
//    guard and load phases ran 12 or 20 ms, 50 or 75 ms, for runs of evaluations on an H200,
//    whatever the profile did), so their ratio is shown but not the verdict;
//  - fresh workers, as `kagent eval` starts one per call: a new session per evaluation, with
//    the compile cache warm (the profiler's one-time setup then runs in the worker's `prepare`
//    while nothing else overlaps it, so the wall time shows it).
// Reports the worker's eval_seconds (compile excluded) with and without the profile, their
// ratio, the profile phase's seconds and steps, the range profiler's steps, every phase's
// change, and the candidate's timed median both ways (the profiler must not change what is timed).
//
// With --answers, the cases are real model answers instead (KernelBench-format files of
// ../shared/realworld/kb_leaderboard, their problems at KernelBench's official sizes). Each
// evaluation reads a copy of the answer one comment line apart, as a turn's new answer whose
// extensions did not change; --same-file evaluates the file itself each time, which a worker
// judges in a fresh process (the answer's extensions stay loaded in the last one).
// --no-compile-baseline leaves out torch.compile's one-time timing per problem (minutes on level 3).
//
//   build/profiler_cost [--repeats 5] [--two-workers N] [--fresh 2] [--examples a,b] [--json out.json]
//   build/profiler_cost --realworld DIR --answers stem,stem [--repeats 8] [--two-workers 0] [--same-file]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluation/evaluation_session.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median's 90% interval by bootstrap (fixed seed: the same samples give the same interval).
std::pair<double, double> median_interval(const std::vector<double>& v) {
  if (v.empty()) return {0, 0};
  std::mt19937 rng(27);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> medians, resample(v.size());
  for (int b = 0; b < 4000; ++b) {
    for (auto& x : resample) x = v[pick(rng)];
    medians.push_back(median(resample));
  }
  std::sort(medians.begin(), medians.end());
  return {medians[medians.size() / 20], medians[medians.size() - 1 - medians.size() / 20]};
}

struct Sample {
  double eval_s = 0, wall_s = 0, profile_s = 0, candidate_ms = 0;
  std::map<std::string, double> steps;          // the range profiler's
  std::map<std::string, double> profile_steps;  // the profile phase's (trace, counters, build, ...)
  std::map<std::string, double> phases;         // the evaluation's phases (seconds)
  std::string counters, scope;  // the counters' status; one range per "kernel" or over the whole "call"
  size_t capacity = 0;  // ranges the counters' image had room for
  size_t launches = 0, ranges = 0;  // the traced call's kernel launches; those with counters
};

struct Series {
  std::vector<Sample> on, off;
  double med(bool profile, double Sample::*field) const {
    std::vector<double> v;
    for (const auto& s : profile ? on : off) v.push_back(s.*field);
    return median(v);
  }
  // 1 + the median of the paired differences (on minus off, evaluations i of each, adjacent in
  // time) over the median without: the paired design's estimate. Unlike the ratio of the two
  // medians it holds where a phase outside the profile is bimodal in both arms (a level-3
  // answer's timing phase either meets its precision early or runs to its limit): a pair whose
  // two evaluations took the same mode differs by the profile alone, and most pairs do.
  double paired_ratio() const {
    const std::vector<double> d = relative_differences([](const Sample& s) { return s.eval_s; });
    return d.empty() ? 0.0 : 1.0 + median(d);
  }
  // Per pair, what the evaluation outside its profile phase took with the profile minus without,
  // over the median evaluation without: the profile's effect on everything else (zero if none).
  std::vector<double> outside_effects() const {
    return relative_differences([](const Sample& s) { return s.eval_s - s.profile_s; });
  }

 private:
  // Per adjacent pair, `part(on) - part(off)` over the median evaluation without; empty without one.
  template <class Part>
  std::vector<double> relative_differences(Part part) const {
    std::vector<double> d;
    const double base = med(false, &Sample::eval_s);
    for (size_t i = 0; base > 0 && i < std::min(on.size(), off.size()); ++i)
      d.push_back((part(on[i]) - part(off[i])) / base);
    return d;
  }
};

// `compiled_baseline`: time torch.compile once per problem (its first evaluation; cached after).
kagent::EvaluationSettings settings_for(const std::string& cache, bool profile, bool compiled_baseline) {
  kagent::EvaluationSettings s;
  s.cache_dir = cache;
  s.options.profile = profile;
  s.options.cache_dir = cache;
  s.options.compiled_baseline = compiled_baseline;
  return s;
}

// Seconds since `t0`.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Opens `problem` in `session`, or throws the session's one-line reason.
void open_or_throw(kagent::EvaluationSession& session, const std::string& problem) {
  if (auto err = session.open(problem)) throw std::runtime_error(err->line);
}

// A number from the result JSON, 0 when absent or not a number (a NaN crosses the pipe as null).
double number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// A string from the result JSON, "?" when absent or not a string.
std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "?";
}

// An object of numbers from the result JSON (a phase's steps), empty when absent.
std::map<std::string, double> numbers(const json& j, const char* key) {
  std::map<std::string, double> out;
  if (j.is_object() && j.contains(key) && j[key].is_object())
    for (const auto& [k, v] : j[key].items()) out[k] = v.is_number() ? v.get<double>() : 0.0;
  return out;
}

// Copies of real answers, one per evaluation, in a folder of their own removed with it. A worker
// that already loaded a KernelBench answer's extensions judges the same file again in a fresh
// worker (their static state stays loaded, worker_client.cpp), so each evaluation gets a copy
// one comment line apart: the warm worker then evaluates it as a turn's new answer whose
// extensions are unchanged (the compile cache hits, the library is loaded already).
class AnswerCopies {
 public:
  AnswerCopies() : dir_(fs::temp_directory_path() / fmt::format("kagent-bench-profiler-cost-{}", ::getpid())) {
    fs::create_directories(dir_);
  }
  ~AnswerCopies() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  AnswerCopies(const AnswerCopies&) = delete;
  AnswerCopies& operator=(const AnswerCopies&) = delete;

  std::string copy_of(const std::string& name, const std::string& answer) {
    const fs::path copy = dir_ / fmt::format("{}_{}.py", name, next_);
    std::ifstream in(answer, std::ios::binary);
    std::ofstream out(copy, std::ios::binary | std::ios::trunc);
    out << in.rdbuf() << fmt::format("\n# profiler_cost: evaluation {}\n", next_++);
    if (!in || !out) throw std::runtime_error("cannot copy " + answer + " to " + copy.string());
    return copy.string();
  }

 private:
  fs::path dir_;
  int next_ = 0;
};

// One problem and the candidate evaluated on it.
struct Case {
  std::string name, problem, candidate;
  std::string format;              // "cuda" (an example's native candidate) | "kernelbench" (a real answer)
  AnswerCopies* copies = nullptr;  // a copy per evaluation (real answers); null: the file itself
};

// The file one evaluation of `c` reads.
std::string candidate_file(const Case& c) { return c.copies ? c.copies->copy_of(c.name, c.candidate) : c.candidate; }

// `options`: this evaluation's own worker options (the profile switched in a session opened
// with it on); the session's when absent.
Sample evaluate(kagent::EvaluationSession& session, const Case& c, bool profile,
                const std::optional<kagent::EvalOptions>& options = std::nullopt) {
  const std::string candidate = candidate_file(c);
  const auto t0 = std::chrono::steady_clock::now();
  const kagent::EvalResult r = session.evaluate_file(candidate, c.format, c.name, options);
  Sample s;
  s.wall_s = since(t0);
  if (r.status != kagent::Status::Correct)
    throw std::runtime_error(fmt::format("{}: expected correct, got {}: {}", candidate, kagent::to_string(r.status), r.message));
  if (profile != !r.profile.is_null())
    throw std::runtime_error(fmt::format("{}: profile {} although profiling was {}", candidate,
                                         r.profile.is_null() ? "missing" : "present", profile ? "on" : "off"));
  s.eval_s = r.eval_seconds;
  for (const auto& ph : r.phases) s.phases[ph.name] += ph.seconds;
  if (r.timing && r.timing->candidate) s.candidate_ms = r.timing->candidate->median_ms;
  if (profile) {
    if (r.profile.contains("error")) throw std::runtime_error(candidate + ": profile error: " + r.profile["error"].dump());
    s.profile_s = number(r.profile, "seconds");
    const json c = r.profile.contains("counters") ? r.profile["counters"] : json::object();
    s.counters = text(c, "status");
    s.steps = numbers(c, "steps");
    s.profile_steps = numbers(r.profile, "steps");
    s.capacity = static_cast<size_t>(number(c, "capacity"));
    s.ranges = static_cast<size_t>(number(c, "ranges"));
    s.scope = text(c, "scope");
    if (r.profile.contains("totals")) s.launches = static_cast<size_t>(number(r.profile["totals"], "launches"));
  }
  return s;
}

void write_json(const std::string& path, const json& all) {
  if (path.empty()) return;
  if (std::FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(all.dump(1).c_str(), f);
    std::fclose(f);
  }
}

// Runs `f`, naming the step in any error it throws.
template <class F>
void step(const std::string& what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What the profile phase adds to an evaluation"};
  int repeats = 5, fresh = 2, two_workers = -1;
  bool no_compile_baseline = false, same_file = false;
  std::string examples_arg = "elementwise_gelu,row_softmax,gemm_bias_relu,conv_block", json_out, realworld, answers_arg;
  app.add_option("--repeats", repeats, "interleaved pairs per case in one long-lived worker")->check(CLI::Range(1, 100));
  app.add_option("--two-workers", two_workers, "interleaved pairs per case in two long-lived workers (default: --repeats; 0: none)")
      ->check(CLI::Range(0, 100));
  app.add_option("--fresh", fresh, "pairs per case in fresh workers (0: none)")->check(CLI::Range(0, 20));
  app.add_option("--examples", examples_arg, "comma-separated names under examples/");
  app.add_option("--realworld", realworld, "a folder of real answers (problems/<stem>.py, answers/<stem>.py)");
  app.add_option("--answers", answers_arg, "comma-separated answer stems under --realworld: the cases instead of examples");
  app.add_option("--json", json_out, "write every sample as JSON here (after each case)");
  app.add_flag("--same-file", same_file,
               "evaluate each real answer's own file every time (a fresh worker each time: its extensions "
               "stay loaded in the last one) instead of a copy one comment apart");
  app.add_flag("--no-compile-baseline", no_compile_baseline,
               "do not time torch.compile (its one-time cost per problem is minutes on level 3)");
  CLI11_PARSE(app, argc, argv);
  if (two_workers < 0) two_workers = repeats;
  if (!answers_arg.empty() && realworld.empty()) {
    std::fprintf(stderr, "profiler_cost: --answers needs --realworld (the folder they are in)\n");
    return 2;
  }

  const fs::path root = fs::path(KAGENT_SOURCE_DIR);
  const std::string cache = (fs::temp_directory_path() / "kagent-bench-profiler-cost").string();
  const auto split = [](const std::string& text) {
    std::vector<std::string> out;
    for (size_t a = 0, b; a <= text.size(); a = b + 1) {
      b = text.find(',', a);
      if (b == std::string::npos) b = text.size();
      if (b > a) out.push_back(text.substr(a, b - a));
    }
    return out;
  };
  const auto settings = [&](bool profile) { return settings_for(cache, profile, !no_compile_baseline); };
  AnswerCopies copies;
  std::vector<Case> cases;
  if (!answers_arg.empty()) {
    for (const auto& stem : split(answers_arg))
      cases.push_back({stem, (fs::absolute(realworld) / "problems" / (stem + ".py")).string(),
                       (fs::absolute(realworld) / "answers" / (stem + ".py")).string(), "kernelbench",
                       same_file ? nullptr : &copies});
  } else {
    for (const auto& name : split(examples_arg))
      cases.push_back({name, (root / "examples" / (name + ".py")).string(), (root / "examples" / (name + ".cu")).string(),
                       "cuda"});
  }
  for (const auto& c : cases) {
    if (!fs::exists(c.problem) || !fs::exists(c.candidate)) {
      std::fprintf(stderr, "profiler_cost: %s: no %s or no %s\n", c.name.c_str(), c.problem.c_str(), c.candidate.c_str());
      return 2;
    }
  }

  json all = json::object();
  std::vector<double> ratios_one, ratios_two, ratios_fresh;
  std::vector<double> paired_one;  // each case's paired estimate in the one worker (Series::paired_ratio)
  std::vector<double> outside_all;  // every pair's Series::outside_effects, all cases pooled
  std::vector<double> warm_on;  // each case's median evaluation in the one worker, the profile on
  std::vector<double> phase_share;  // each case's median profile phase over its median evaluation without
  std::printf("%-22s | %-36s | %-26s | %-36s | %s\n", "", "one worker, profile alternated", "two workers (on, off)",
              "fresh worker (kagent eval)", "timed median");
  std::printf("%-22s | %8s %8s %6s %9s | %8s %8s %6s | %8s %8s %6s %9s | %9s %9s\n", "case", "eval off", "eval on",
              "ratio", "phase", "eval off", "eval on", "ratio", "eval off", "eval on", "ratio", "wall +", "off ms",
              "on ms");
  try {
    for (const auto& c : cases) {
      const std::string& name = c.name;
      const std::string& problem = c.problem;
      Series one_worker, long_lived, fresh_workers;
      const auto case_start = std::chrono::steady_clock::now();
      double warm_up_s = 0;
      {
        kagent::EvaluationSession on(settings(true));
        step(name + ": open (profile on)", [&] { open_or_throw(on, problem); });
        const auto warm_start = std::chrono::steady_clock::now();
        step(name + ": warm-up evaluation (profile on)", [&] { evaluate(on, c, true); });
        warm_up_s = since(warm_start);
        const kagent::EvalOptions profile_off = settings(false).options;
        for (int i = 0; i < repeats; ++i) {
          const bool on_first = i % 2 == 0;  // neither always follows the other
          for (bool profile : {on_first, !on_first})
            (profile ? one_worker.on : one_worker.off)
                .push_back(profile ? evaluate(on, c, true) : evaluate(on, c, false, profile_off));
        }
        if (two_workers > 0) {
          // Opened after the first is warm, so their first evaluations do not race on the caches.
          kagent::EvaluationSession off(settings(false));
          step(name + ": open (profile off)", [&] { open_or_throw(off, problem); });
          step(name + ": warm-up evaluation (profile off)", [&] { evaluate(off, c, false); });
          for (int i = 0; i < two_workers; ++i) {
            const bool on_first = i % 2 == 0;
            for (bool profile : {on_first, !on_first})
              (profile ? long_lived.on : long_lived.off).push_back(evaluate(profile ? on : off, c, profile));
          }
        }
      }
      for (int i = 0; i < fresh; ++i) {
        const bool on_first = i % 2 == 0;
        for (bool profile : {on_first, !on_first}) {
          const auto t0 = std::chrono::steady_clock::now();
          kagent::EvaluationSession s(settings(profile));
          open_or_throw(s, problem);
          Sample sample = evaluate(s, c, profile);
          sample.wall_s = since(t0);
          (profile ? fresh_workers.on : fresh_workers.off).push_back(sample);
        }
      }
      const double o_off = one_worker.med(false, &Sample::eval_s), o_on = one_worker.med(true, &Sample::eval_s);
      ratios_one.push_back(o_on / o_off);
      paired_one.push_back(one_worker.paired_ratio());
      const std::vector<double> outside_case = one_worker.outside_effects();
      outside_all.insert(outside_all.end(), outside_case.begin(), outside_case.end());
      warm_on.push_back(o_on);
      phase_share.push_back(one_worker.med(true, &Sample::profile_s) / o_off);
      std::string two_cols = fmt::format("{:>8} {:>8} {:>6}", "-", "-", "-");
      std::string timed_cols = fmt::format("{:>9} {:>9}", "-", "-");
      if (two_workers > 0) {
        const double l_off = long_lived.med(false, &Sample::eval_s), l_on = long_lived.med(true, &Sample::eval_s);
        ratios_two.push_back(l_on / l_off);
        two_cols = fmt::format("{:>7.3f}s {:>7.3f}s {:>6.2f}", l_off, l_on, l_on / l_off);
        timed_cols = fmt::format("{:>9.4f} {:>9.4f}", long_lived.med(false, &Sample::candidate_ms),
                                 long_lived.med(true, &Sample::candidate_ms));
      }
      std::string fresh_cols = fmt::format("{:>8} {:>8} {:>6} {:>9}", "-", "-", "-", "-");
      if (fresh > 0) {
        const double f_off = fresh_workers.med(false, &Sample::eval_s), f_on = fresh_workers.med(true, &Sample::eval_s);
        const double wall = fresh_workers.med(true, &Sample::wall_s) - fresh_workers.med(false, &Sample::wall_s);
        ratios_fresh.push_back(f_on / f_off);
        fresh_cols = fmt::format("{:>7.3f}s {:>7.3f}s {:>6.2f} {:>+8.2f}s", f_off, f_on, f_on / f_off, wall);
      }
      std::printf("%-22s | %7.3fs %7.3fs %6.2f %8.3fs | %s | %s | %s\n", name.c_str(), o_off, o_on, o_on / o_off,
                  one_worker.med(true, &Sample::profile_s), two_cols.c_str(), fresh_cols.c_str(), timed_cols.c_str());
      // Medians of each named part, in ms, over the samples.
      const auto medians_ms = [](const std::vector<Sample>& v, std::map<std::string, double> Sample::*field) {
        std::map<std::string, std::vector<double>> by;
        for (const auto& s : v)
          for (const auto& [k, x] : s.*field) by[k].push_back(x);
        std::map<std::string, double> out;
        for (const auto& [k, x] : by) out[k] = 1e3 * median(x);
        return out;
      };
      std::string step_text, profile_text, phase_text, phase_abs_text;
      for (const auto& [k, v] : medians_ms(one_worker.on, &Sample::steps)) step_text += fmt::format(" {} {:.1f}", k, v);
      for (const auto& [k, v] : medians_ms(one_worker.on, &Sample::profile_steps))
        profile_text += fmt::format(" {} {:.1f}", k, v);
      // Every phase's median with the profile minus without, in the one worker: where the evaluation grows.
      const auto ph_on = medians_ms(one_worker.on, &Sample::phases), ph_off = medians_ms(one_worker.off, &Sample::phases);
      double outside = 0;
      for (const auto& [k, v] : ph_on) {
        const auto o = ph_off.find(k);
        const double d = v - (o == ph_off.end() ? 0.0 : o->second);
        phase_text += fmt::format(" {} {:+.1f}", k, d);
        if (k != "profile") outside += d;
      }
      for (const auto& [k, v] : ph_off) phase_abs_text += fmt::format(" {} {:.1f}", k, v);
      const Sample first_on = one_worker.on.empty() ? Sample{} : one_worker.on.front();
      std::printf("%-22s   range profiler steps (median ms):%s; counters %s, room for %zu ranges; %zu launches, "
                  "%zu range(s), one per %s\n",
                  "", step_text.c_str(), first_on.counters.c_str(), first_on.capacity, first_on.launches, first_on.ranges,
                  first_on.scope.c_str());
      std::printf("%-22s   profile phase steps (median ms):%s\n", "", profile_text.c_str());
      std::printf("%-22s   phases on minus off (median ms):%s; outside the profile phase %+.1f\n", "",
                  phase_text.c_str(), outside);
      const auto [case_lo, case_hi] = median_interval(outside_case);
      std::printf("%-22s   paired (median of on minus off over %zu adjacent pairs): x%.3f; profile phase %.1f%% of "
                  "the evaluation without it; outside it %+.1f%% (90%% interval %+.1f%% to %+.1f%%)\n",
                  "", outside_case.size(), paired_one.back(), 100 * phase_share.back(), 100 * median(outside_case),
                  100 * case_lo, 100 * case_hi);
      // Where a warm evaluation's time goes, and what the case cost (the warm-up holds the
      // compile, the spec, the fp64 truth and the baselines: once per problem).
      std::printf("%-22s   phases, profile off (median ms):%s; wall per evaluation %.3f s\n", "", phase_abs_text.c_str(),
                  one_worker.med(false, &Sample::wall_s));
      std::printf("%-22s   case %.1f s, of which the warm-up evaluation %.1f s\n", "", since(case_start), warm_up_s);
      std::fflush(stdout);
      auto samples = [](const std::vector<Sample>& v) {
        json a = json::array();
        for (const auto& s : v)
          a.push_back({{"eval_s", s.eval_s}, {"wall_s", s.wall_s}, {"profile_s", s.profile_s},
                       {"candidate_ms", s.candidate_ms}, {"steps", s.steps}, {"profile_steps", s.profile_steps},
                       {"phases", s.phases}, {"capacity", s.capacity}, {"counters", s.counters},
                       {"launches", s.launches}, {"ranges", s.ranges}, {"scope", s.scope}});
        return a;
      };
      all[name] = {{"one_worker", {{"on", samples(one_worker.on)}, {"off", samples(one_worker.off)}}},
                   {"long_lived", {{"on", samples(long_lived.on)}, {"off", samples(long_lived.off)}}},
                   {"fresh", {{"on", samples(fresh_workers.on)}, {"off", samples(fresh_workers.off)}}},
                   {"warm_up_s", warm_up_s}, {"case_s", since(case_start)}};
      write_json(json_out, all);  // after each case: a suite stopped at its limit keeps what ran
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profiler_cost: %s\n", e.what());
    return 1;
  }
  constexpr double kTarget = 1.10;  // issue 27: the profile adds at most 10% to an evaluation
  const auto [outside_lo, outside_hi] = median_interval(outside_all);
  const auto worst = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  // The profile's cost: its own phase, measured in every evaluation, plus what it does to the
  // rest of the evaluation, estimated from every pair of every case pooled. A single case's
  // end-to-end estimate cannot resolve 10% where its evaluations vary by more (a level-3
  // answer's CPU-side phases wander by +-30% with and without the profile alike).
  const double outside = median(outside_all);
  const double cost = worst(phase_share) + std::max(0.0, outside);
  std::printf("profiler cost: +%.1f%% of an evaluation at worst over %zu %s (the profile phase %.1f%%, median %.1f%%; "
              "the rest of the evaluation %+.1f%%, 90%% interval %+.1f%% to %+.1f%%, %zu pairs pooled); end to end "
              "in one long-lived worker x%.2f median, worst x%.2f paired, x%.2f ratio of medians; warm evaluation with "
              "it and every guard p50 %.3f s, max %.3f s",
              100 * cost, phase_share.size(), answers_arg.empty() ? "examples" : "real answers", 100 * worst(phase_share),
              100 * median(phase_share), 100 * outside, 100 * outside_lo, 100 * outside_hi, outside_all.size(),
              median(paired_one), worst(paired_one), worst(ratios_one), median(warm_on), worst(warm_on));
  if (!ratios_two.empty())
    std::printf("; two workers x%.2f (median)", median(ratios_two));
  if (!ratios_fresh.empty())
    std::printf(", x%.2f in a fresh worker (median)", median(ratios_fresh));
  const bool met = cost <= kTarget - 1.0;
  std::printf("; target at most x%.2f -> %s\n", kTarget, met ? "met" : "NOT met");
  return met ? 0 : 1;
}
